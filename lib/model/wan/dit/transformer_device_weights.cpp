// Device weights of the Wan DiT: upload of loaded host weights, or random weights of the config's
// shapes for benchmarks. Dtypes per wan_spec.md §1.3 in bf16 mode: time_embedder (time_linear_1/2),
// every scale_shift_table and norm2 stay fp32, everything else is bf16. fp32 mode: all fp32.
#include "core/cuda_stream.h"
#include "core/log.h"
#include "dist/weight_stream.h"
#include "model/wan/dit/transformer_device.h"
#include "ops/device_ops.h"
#include "ops/dit_device_ops.h"
#include "ops/fp8.h"

namespace vgen {
namespace {

// kNorm2Weight/Bias: the LayerNorms diffusers keeps in fp32 (_keep_in_fp32_modules' norm1/norm2:
// a block's norm2, the image embedder's two).
enum class Role { kMatrix, kBias, kTable, kTimeMlp, kRmsWeight, kNorm2Weight, kNorm2Bias };

bool keeps_f32(Role r) {
  return r == Role::kTable || r == Role::kTimeMlp || r == Role::kNorm2Weight || r == Role::kNorm2Bias;
}

// The tensors of one block in layout order: get(host tensor or null, shape, role, name).
template <typename G>
WanBlockWeights build_block(const WanTransformerConfig& cfg, const WanBlockWeights* hb, const std::string& n, G&& get) {
  const int64_t D = cfg.dim(), F_ = cfg.ffn_dim;
  auto lin = [&](const WanLinear* h, int64_t out, int64_t in, const std::string& name) {
    WanLinear l;
    l.w = get(h ? &h->w : nullptr, {out, in}, Role::kMatrix, name + ".weight");
    l.b = get(h ? &h->b : nullptr, {out}, Role::kBias, name + ".bias");
    return l;
  };
  auto attn = [&](const WanAttentionWeights* h, const std::string& name) {
    WanAttentionWeights a;
    a.q = lin(h ? &h->q : nullptr, D, D, name + ".to_q");
    a.k = lin(h ? &h->k : nullptr, D, D, name + ".to_k");
    a.v = lin(h ? &h->v : nullptr, D, D, name + ".to_v");
    a.o = lin(h ? &h->o : nullptr, D, D, name + ".to_out.0");
    a.norm_q = get(h ? &h->norm_q : nullptr, {D}, Role::kRmsWeight, name + ".norm_q.weight");
    a.norm_k = get(h ? &h->norm_k : nullptr, {D}, Role::kRmsWeight, name + ".norm_k.weight");
    return a;
  };
  WanBlockWeights b;
  b.scale_shift_table = get(hb ? &hb->scale_shift_table : nullptr, {6, D}, Role::kTable, n + ".scale_shift_table");
  b.attn1 = attn(hb ? &hb->attn1 : nullptr, n + ".attn1");
  b.attn2 = attn(hb ? &hb->attn2 : nullptr, n + ".attn2");
  if (cfg.cross_attn_norm) {
    b.norm2_w = get(hb ? &hb->norm2_w : nullptr, {D}, Role::kNorm2Weight, n + ".norm2.weight");
    b.norm2_b = get(hb ? &hb->norm2_b : nullptr, {D}, Role::kNorm2Bias, n + ".norm2.bias");
  }
  b.ffn1 = lin(hb ? &hb->ffn1 : nullptr, F_, D, n + ".ffn.net.0.proj");
  b.ffn2 = lin(hb ? &hb->ffn2 : nullptr, D, F_, n + ".ffn.net.2");
  if (cfg.has_image()) {
    b.image.k = lin(hb ? &hb->image.k : nullptr, D, D, n + ".attn2.add_k_proj");
    b.image.v = lin(hb ? &hb->image.v : nullptr, D, D, n + ".attn2.add_v_proj");
    b.image.norm_k = get(hb ? &hb->image.norm_k : nullptr, {D}, Role::kRmsWeight, n + ".attn2.norm_added_k.weight");
  }
  return b;
}

// The image embedder (the image path): its LayerNorms in fp32 as diffusers keeps them.
template <typename G, typename L>
WanImageEmbedderWeights build_image_embedder(const WanTransformerConfig& cfg, const WanImageEmbedderWeights* h,
                                             G&& get, L&& lin) {
  const int64_t D = cfg.dim(), I = *cfg.image_dim;
  const std::string e = "condition_embedder.image_embedder";
  WanImageEmbedderWeights ie;
  ie.norm1_w = get(h ? &h->norm1_w : nullptr, {I}, Role::kNorm2Weight, e + ".norm1.weight");
  ie.norm1_b = get(h ? &h->norm1_b : nullptr, {I}, Role::kNorm2Bias, e + ".norm1.bias");
  ie.ff1 = lin(h ? &h->ff1 : nullptr, I, I, Role::kMatrix, Role::kBias, e + ".ff.net.0.proj");
  ie.ff2 = lin(h ? &h->ff2 : nullptr, D, I, Role::kMatrix, Role::kBias, e + ".ff.net.2");
  ie.norm2_w = get(h ? &h->norm2_w : nullptr, {D}, Role::kNorm2Weight, e + ".norm2.weight");
  ie.norm2_b = get(h ? &h->norm2_b : nullptr, {D}, Role::kNorm2Bias, e + ".norm2.bias");
  if (cfg.pos_embed_seq_len)
    ie.pos_embed = get(h ? &h->pos_embed : nullptr, {*cfg.pos_embed_seq_len, I}, Role::kMatrix, e + ".pos_embed");
  return ie;
}

// Walks the weight layout of `cfg` (the shapes load_wan_transformer_weights produces) and builds
// each tensor with make(host tensor or undefined, shape, role, name); block i comes from
// make_block(i, host block or null, get) (default: build_block with `make`).
template <typename F, typename B>
WanTransformerWeights build(const WanTransformerConfig& cfg, const WanTransformerWeights* host, F&& make,
                            B&& make_block) {
  const int64_t D = cfg.dim();
  WanTransformerWeights w;
  auto get = [&](const Tensor* h, const Shape& shape, Role role, const std::string& name) {
    Tensor t = make(h ? *h : Tensor(), shape, role, name);
    w.bytes += t.nbytes();
    return t;
  };
  auto lin = [&](const WanLinear* h, int64_t out, int64_t in, Role wr, Role br, const std::string& name) {
    WanLinear l;
    l.w = get(h ? &h->w : nullptr, {out, in}, wr, name + ".weight");
    l.b = get(h ? &h->b : nullptr, {out}, br, name + ".bias");
    return l;
  };
  const int64_t Pin = int64_t(cfg.in_channels) * cfg.patch_volume(),
                Pout = int64_t(cfg.out_channels) * cfg.patch_volume();
  w.patch_embedding =
      lin(host ? &host->patch_embedding : nullptr, D, Pin, Role::kMatrix, Role::kBias, "patch_embedding");
  w.time_linear_1 = lin(host ? &host->time_linear_1 : nullptr, D, cfg.freq_dim, Role::kTimeMlp, Role::kTimeMlp,
                        "condition_embedder.time_embedder.linear_1");
  w.time_linear_2 = lin(host ? &host->time_linear_2 : nullptr, D, D, Role::kTimeMlp, Role::kTimeMlp,
                        "condition_embedder.time_embedder.linear_2");
  w.time_proj =
      lin(host ? &host->time_proj : nullptr, 6 * D, D, Role::kMatrix, Role::kBias, "condition_embedder.time_proj");
  w.text_linear_1 = lin(host ? &host->text_linear_1 : nullptr, D, cfg.text_dim, Role::kMatrix, Role::kBias,
                        "condition_embedder.text_embedder.linear_1");
  w.text_linear_2 = lin(host ? &host->text_linear_2 : nullptr, D, D, Role::kMatrix, Role::kBias,
                        "condition_embedder.text_embedder.linear_2");
  if (cfg.has_image())
    w.image_embedder = build_image_embedder(cfg, host ? &host->image_embedder : nullptr, get, lin);
  w.scale_shift_table = get(host ? &host->scale_shift_table : nullptr, {2, D}, Role::kTable, "scale_shift_table");
  w.proj_out = lin(host ? &host->proj_out : nullptr, Pout, D, Role::kMatrix, Role::kBias, "proj_out");
  w.blocks.resize(size_t(cfg.num_layers));
  for (int i = 0; i < cfg.num_layers; ++i)
    w.blocks[size_t(i)] = make_block(i, host ? &host->blocks[size_t(i)] : nullptr, get);
  return w;
}

template <typename F>
WanTransformerWeights build(const WanTransformerConfig& cfg, const WanTransformerWeights* host, F&& make) {
  return build(cfg, host, make, [&](int i, const WanBlockWeights* hb, auto& get) {
    return build_block(cfg, hb, fmt::format("blocks.{}", i), get);
  });
}

// Biases are held in the model dtype, as diffusers holds them: a bf16 bias with bf16 output runs in
// cuBLASLt's fused bias epilogue, the same epilogue as PyTorch's addmm (an fp32 bias would take
// the separate, slower epilogue: cuBLASLt has no fp32-bias/bf16-out kernel).
DType dtype_for(Role r, const WanDeviceOptions& o) { return keeps_f32(r) ? DType::kF32 : o.dtype; }

// DWDP placement: a block's tensors lie in one span (a staging slot, or the arena for a block held
// whole), in layout order, each 256-byte aligned; the span is what DwdpLayout slices.
constexpr size_t kSpanAlign = 256;

size_t block_span_bytes(const WanTransformerConfig& cfg, const WanDeviceOptions& o) {
  size_t bytes = 0;
  build_block(cfg, nullptr, "blocks.0", [&](const Tensor*, const Shape& shape, Role role, const std::string&) {
    bytes += DwdpSpan::aligned(size_t(shape_numel(shape)) * dtype_size(dtype_for(role, o)), kSpanAlign);
    return Tensor();
  });
  return bytes;
}

// The weights with DWDP: each block's tensors filled into staging slot 0 by fill(slot view, host
// tensor, shape, role, name) (by default a copy of what `make` builds, as the whole model would
// build it, so random fills stay in step), then flush() (the stream's run), then this rank's slices
// of it kept in the arena (views of it when this rank holds the block whole); the two slot views;
// the arenas' handles exchanged (collective over options.world; so is make_dwdp_device_weights).
template <typename F, typename Fill, typename Flush>
std::shared_ptr<WanDeviceModel> build_dwdp(const WanTransformerConfig& cfg, const WanTransformerWeights* host,
                                           const WanDeviceOptions& o, F&& make, Fill&& fill, Flush&& flush) {
  VGEN_CHECK(o.world != nullptr, ExitCode::kInternal, "dwdp_size {} without a world communicator", o.dwdp_size);
  const DwdpPlan plan = DwdpPlan::of(o.world->rank(), o.world->size(), o.dwdp_size);
  const DwdpLayout layout(plan.size, cfg.num_layers, block_span_bytes(cfg, o), kSpanAlign);
  std::shared_ptr<DwdpDeviceWeights> dw = make_dwdp_device_weights(plan, layout, o.dwdp_transport, *o.world);
  // A block's tensors as views of the span at `base` (a slot, or the arena for a block held whole).
  auto views_at = [&](void* base) {
    DwdpSpan views(base, layout.staged_bytes(), Device::kCUDA, kSpanAlign, dw);
    return build_block(cfg, nullptr, "dwdp_view", [&](const Tensor*, const Shape& shape, Role role,
                                                      const std::string&) {
      return views.next(shape, dtype_for(role, o));
    });
  };
  size_t made = 0;  // block bytes `get` counted in w.bytes: they live in the arena now
  WanTransformerWeights w = build(cfg, host, make, [&](int i, const WanBlockWeights* hb, auto& get) {
    DwdpSpan views(dw->slot(0), layout.staged_bytes(), Device::kCUDA, kSpanAlign, dw);
    build_block(cfg, hb, fmt::format("blocks.{}", i),
                [&](const Tensor* h, const Shape& shape, Role role, const std::string& name) {
                  Tensor t = views.next(shape, dtype_for(role, o));
                  made += fill(t, h, shape, role, name, get);
                  return Tensor();
                });
    flush();
    dw->keep_own(i, dw->slot(0));  // queued after the copies into the slot, before the next block's
    void* whole = dw->in_place(i);
    return whole ? views_at(whole) : WanBlockWeights{};  // a block held whole runs from the arena
  });
  w.bytes -= made;
  WanBlockWeights staged[2] = {views_at(dw->slot(0)), views_at(dw->slot(1))};
  sync_compute_stream();  // the arena is filled before a peer can copy from it
  dw->publish(*o.world);
  log_info("DWDP: {:.2f} GiB of DiT block slices on this GPU ({} KiB slices over a group of {}, shared over {}) + 2 "
           "staging slots ({:.2f} GiB)",
           double(layout.arena_bytes(plan.rank)) / 1073741824.0, layout.slice_bytes() / 1024, plan.size,
           dw->transport(), 2.0 * double(layout.staged_bytes()) / 1073741824.0);
  auto model = std::make_shared<WanDeviceModel>(cfg, std::move(w), o);
  model->set_dwdp(std::move(dw), std::move(staged[0]), std::move(staged[1]));
  return model;
}

// fill() of build_dwdp for models built by `make`: a copy of the tensor it builds; returns the bytes
// `get` counted (they live in the arena then).
auto copy_fill = [](Tensor& dst, const Tensor* h, const Shape& shape, Role role, const std::string& name, auto& get) {
  dst.copy_from(get(h, shape, role, name));
  return dst.nbytes();
};

}  // namespace

std::shared_ptr<WanDeviceModel> WanDeviceModel::upload(const WanTransformerConfig& cfg,
                                                        const WanTransformerWeights& host,
                                                        const WanDeviceOptions& options) {
  VGEN_CHECK(int(host.blocks.size()) == cfg.num_layers, ExitCode::kInternal,
             "upload: host weights have {} blocks, the config {}", host.blocks.size(), cfg.num_layers);
  auto make = [&](const Tensor& h, const Shape& shape, Role role, const std::string& name) {
    VGEN_CHECK(h.defined() && h.numel() == shape_numel(shape), ExitCode::kInternal,
               "upload: host tensor '{}' is {}, expected shape {}", name, h.defined() ? h.str() : "undefined",
               shape_str(shape));
    Tensor src = h.reshape(shape);
    if (src.dtype() != DType::kF32 && src.dtype() != DType::kBF16) src = src.to(DType::kF32);
    return cast(src.to(Device::kCUDA), dtype_for(role, options));  // converted on the device
  };
  if (options.dwdp_size > 1) return build_dwdp(cfg, &host, options, make, copy_fill, [] {});
  WanTransformerWeights w = build(cfg, &host, make);
  log_debug("transformer weights on the device: {:.1f} MiB ({})", double(w.bytes) / 1048576.0,
            dtype_name(options.dtype));
  return std::make_shared<WanDeviceModel>(cfg, std::move(w), options);
}

std::shared_ptr<WanDeviceModel> WanDeviceModel::random(const WanTransformerConfig& cfg,
                                                        const WanDeviceOptions& options, uint64_t seed) {
  uint64_t counter = 0;
  auto make = [&](const Tensor&, const Shape& shape, Role role, const std::string&) {
    Tensor t = Tensor::empty(shape, dtype_for(role, options), Device::kCUDA);
    if (role == Role::kRmsWeight || role == Role::kNorm2Weight)
      cuda_fill_constant(t, 1.0f);
    else
      cuda_fill_normal(t, seed * 1000003ull + counter, 0.0f, 0.02f);
    ++counter;
    return t;
  };
  if (options.dwdp_size > 1) return build_dwdp(cfg, nullptr, options, make, copy_fill, [] {});
  WanTransformerWeights w = build(cfg, nullptr, make);
  return std::make_shared<WanDeviceModel>(cfg, std::move(w), options);
}

}  // namespace vgen

namespace vgen {

std::shared_ptr<WanDeviceModel> WanDeviceModel::stream(const WanTransformerConfig& cfg, WeightStream& stream,
                                                        int component, const WanDeviceOptions& options) {
  // Tensors outside the blocks (and every block without DWDP): a device tensor requested as is.
  auto make = [&](const Tensor&, const Shape& shape, Role role, const std::string& name) {
    Tensor t = Tensor::empty(shape, dtype_for(role, options), Device::kCUDA);
    stream.request(component, name, t);
    return t;
  };
  if (options.dwdp_size > 1) {
    auto fill = [&](Tensor& dst, const Tensor*, const Shape&, Role, const std::string& name, auto&) {
      stream.request(component, name, dst);  // straight into the staging slot
      return size_t(0);
    };
    return build_dwdp(cfg, nullptr, options, make, fill, [&] { stream.run(); });
  }
  WanTransformerWeights w = build(cfg, nullptr, make);
  return std::make_shared<WanDeviceModel>(cfg, std::move(w), options);
}

}  // namespace vgen

namespace vgen {

void WanDeviceModel::enable_fp8(const WanFp8Options& options) {
  VGEN_CHECK(!fp8_.any(), ExitCode::kInternal, "enable_fp8: the device DiT is already set up for precision fp8");
  VGEN_CHECK(!options.any() || opt_.dtype == DType::kBF16, ExitCode::kUsage,
             "precision fp8 on the device computes in bf16 outside the fp8 GEMMs and attention, not {}",
             dtype_name(opt_.dtype));
  VGEN_CHECK(!options.gemm || !dwdp_, ExitCode::kRecipe,
             "precision fp8: fp8 GEMMs do not run with parallel_config.dwdp_size {} on device cuda (the streamed "
             "block slices hold no quantised copy); set fp8_config.gemm false or dwdp_size 1",
             opt_.dwdp_size);
  if (options.gemm) {
    // Per output channel, once: e4m3 or INT8 [N, K] + fp32 scale [N] beside (or instead of) the bf16 weight.
    // Blocks of fp8_config.bf16_blocks and bf16_gemm_blocks, and the linears of bf16_linears, keep
    // only their bf16 weights.
    size_t added = 0, freed = 0;
    const int64_t n = int64_t(w_.blocks.size());
    for (int64_t i = 0; i < n; ++i) {
      if (!options.blocks().gemm_in_fp8(i, n)) continue;
      for_each_fp8_linear(w_.blocks[size_t(i)], [&](WanLinear& l, int k) {
        if ((options.bf16_linears >> k) & 1u) return;  // fp8_config.bf16_linears: bf16 weight only
        VGEN_CHECK(l.w.defined() && !l.w.is_cpu(), ExitCode::kInternal, "enable_fp8: a block weight is not on the device");
        Fp8Weight q = fp8_quantize_weight(l.w, options.gemm_format);
        l.w8 = std::move(q.w8);
        l.w_scale = std::move(q.scale);
        added += l.w8.nbytes() + l.w_scale.nbytes();
        if (!options.keep_weights) {
          freed += l.w.nbytes();
          l.w = Tensor();  // back to the caching allocator (activations reuse it)
        }
      });
    }
    w_.bytes = w_.bytes + added - freed;
    weight_bytes_ = weight_bytes_ + added - freed;
    const char* fmt_name = gemm_format_name(options.gemm_format);
    log_info("precision fp8: block linears quantised to {} on the device (+{:.1f} MiB of {} weights and scales; {}); "
             "DiT weights now {:.1f} MiB",
             fmt_name, double(added) / 1048576.0, fmt_name,
             options.keep_weights ? std::string("the bf16 ones kept for the bf16 steps")
                                  : fmt::format("{:.1f} MiB of bf16 ones freed", double(freed) / 1048576.0),
             double(weight_bytes_) / 1048576.0);
  }
  fp8_ = options;
}

}  // namespace vgen
