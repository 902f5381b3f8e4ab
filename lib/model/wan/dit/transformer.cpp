#include "model/wan/dit/transformer.h"

#include "core/log.h"
#include "core/on_unwind.h"
#include "io/safetensors.h"
#include "model/wan/dit/transformer_block.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/fp8.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "parallel/local_attention.h"

namespace vgen {
namespace {

Tensor apply(const WanLinear& l, const Tensor& x, LinearRows rows) { return linear(x, l.w, l.b, rows); }

Tensor as_f32(const Tensor& t) { return t.dtype() == DType::kF32 ? t : t.to(DType::kF32); }

}  // namespace

std::unique_ptr<WanTransformer> WanTransformer::load(const std::string& component_dir) {
  return load(component_dir, WeightStore::open(component_dir));
}

std::unique_ptr<WanTransformer> WanTransformer::stream_to_device(const std::string& component_dir,
                                                                 WeightStream& stream, int component,
                                                                 const WanDeviceOptions& options) {
  WanTransformerConfig cfg = WanTransformerConfig::load(component_dir);
  WanTransformerWeights none;  // no host weights: every call goes to the device model
  none.blocks.resize(size_t(cfg.num_layers));
  auto model = std::make_unique<WanTransformer>(cfg, std::move(none));
  model->device_ = WanDeviceModel::stream(cfg, stream, component, options);
  return model;
}

std::unique_ptr<WanTransformer> WanTransformer::load(const std::string& component_dir, const WeightStore& store) {
  WanTransformerConfig cfg = WanTransformerConfig::load(component_dir);
  WanTransformerWeights w = load_wan_transformer_weights(store, cfg);
  log_debug("{}: transformer D={} layers={} heads={}, {:.1f} MiB of weights ({:.1f} MiB converted)", component_dir,
            cfg.dim(), cfg.num_layers, cfg.num_attention_heads, double(w.bytes) / 1048576.0,
            double(w.converted_bytes) / 1048576.0);
  return std::make_unique<WanTransformer>(cfg, std::move(w));
}

WanTransformer::WanTransformer(const WanTransformerConfig& cfg, WanTransformerWeights weights)
    : cfg_(cfg), w_(std::move(weights)), rope_(cfg) {
  VGEN_ASSERT(int(w_.blocks.size()) == cfg_.num_layers, "transformer weights have {} blocks, config {}",
              w_.blocks.size(), cfg_.num_layers);
}

int64_t WanTransformer::num_tokens(const Shape& s) const {
  const auto& p = cfg_.patch_size;
  VGEN_CHECK(s.size() == 5 && s[1] == cfg_.in_channels && s[2] % p[0] == 0 && s[3] % p[1] == 0 && s[4] % p[2] == 0,
             ExitCode::kInput,
             "transformer input must be [B, {}, T, H, W] with T, H, W divisible by the patch [{}, {}, {}]; got {}",
             cfg_.in_channels, p[0], p[1], p[2], shape_str(s));
  return (s[2] / p[0]) * (s[3] / p[1]) * (s[4] / p[2]);
}

// When some block quantises at some step, the model's fp32 linears run row by row (LinearRows):
// meshes splitting the tokens then round what is quantised as one rank does on any BLAS, the bf16
// steps' too (bf16_first_steps), whose last bits the next fp8 step would round. A model that never
// quantises (none enabled, every block in bf16_blocks) keeps the plain GEMM.
bool WanTransformer::fp8_quantises() const {
  const Fp8Switches configured{fp8_.attention, fp8_.gemm, fp8_.qk_int8, 0, fp8_.gemm_format};
  for (size_t i = 0; i < w_.blocks.size(); ++i)
    if (fp8_.block_switches(int64_t(i), int64_t(w_.blocks.size()), configured).any()) return true;
  return false;
}

LinearRows WanTransformer::linear_rows() const {
  return fp8_quantises() || row_wise_linears_ ? LinearRows::kRowByRow : LinearRows::kBatched;
}

TextContext WanTransformer::prepare_text(const Tensor& encoder_hidden_states) const {
  if (device_) return device_->prepare_text(encoder_hidden_states);
  const LinearRows rows = linear_rows();
  Tensor e = as_f32(encoder_hidden_states);
  VGEN_CHECK(e.ndim() == 3 && e.dim(2) == cfg_.text_dim, ExitCode::kInput,
             "encoder_hidden_states must be [B, L, {}], got {}", cfg_.text_dim, e.str());
  const int64_t B = e.dim(0), L = e.dim(1), H = cfg_.num_attention_heads, Dh = cfg_.attention_head_dim;
  const float eps = float(cfg_.eps);
  Tensor h = apply(w_.text_linear_1, e, rows);  // [B, L, D]
  gelu_tanh_(h);
  Tensor ctx = apply(w_.text_linear_2, h, rows);  // [B, L, D]
  TextContext tc;
  tc.batch = B;
  tc.length = L;
  tc.k.reserve(w_.blocks.size());
  tc.v.reserve(w_.blocks.size());
  for (size_t i = 0; i < w_.blocks.size(); ++i) {
    const WanBlockWeights& b = host_block_begin(i);
    OnUnwind end_on_error([&] { host_block_end(i); });  // a DWDP slot stays usable after an error
    tc.k.push_back(rms_norm(apply(b.attn2.k, ctx, rows), b.attn2.norm_k, eps).reshape({B, L, H, Dh}));  // [B, L, H, Dh]
    tc.v.push_back(apply(b.attn2.v, ctx, rows).reshape({B, L, H, Dh}));                                // [B, L, H, Dh]
    host_block_end(i);
  }
  return tc;
}

std::unique_ptr<Conditioning> WanTransformer::prepare(const Tensor& prompt_embeds) const {
  return std::make_unique<TextContext>(prepare_text(prompt_embeds));
}

void WanTransformer::set_attention_backend(AttentionBackend backend) {
  backend_ = backend;
  if (device_) device_->set_attention_backend(backend);
}

void WanTransformer::set_profiler(DitPhaseProfiler* profiler) const {
  if (device_) device_->set_profiler(profiler);
}

Tensor WanTransformer::forward_local(const Tensor& latents0, const Tensor& timestep0, const Conditioning& cond,
                                     const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache,
                                     const StepPolicy& step) const {
  const auto* text_ptr = dynamic_cast<const TextContext*>(&cond);
  VGEN_ASSERT(text_ptr != nullptr, "WanTransformer::forward_local: the conditioning is not a Wan TextContext");
  const TextContext& text = *text_ptr;
  if (device_) return device_->forward_local(latents0, timestep0, text, layout, attention, cache, step);
  Tensor latents = as_f32(latents0);
  Tensor timestep = as_f32(timestep0);
  const int64_t S = num_tokens(latents.shape());
  const int64_t B = latents.dim(0), D = cfg_.dim();
  const auto& p = cfg_.patch_size;
  VGEN_CHECK(timestep.ndim() == 1 && timestep.dim(0) == B, ExitCode::kInput,
             "timestep must be [B] = [{}] (one per sample), got {}", B, timestep.str());
  VGEN_CHECK(text.batch == B && text.k.size() == w_.blocks.size() && text.v.size() == w_.blocks.size(),
             ExitCode::kInput, "text context of batch {} with {} blocks for latents {} and {} blocks", text.batch,
             text.k.size(), latents.str(), w_.blocks.size());
  VGEN_ASSERT(layout.tokens == S && layout.degree >= 1 && layout.seq_rank >= 0 && layout.seq_rank < layout.degree &&
                  layout.padded >= S && layout.padded % layout.degree == 0,
              "sequence layout (tokens {}, padded {}, degree {}, rank {}) for {} tokens", layout.tokens,
              layout.padded, layout.degree, layout.seq_rank, S);
  const int64_t begin = layout.begin(), S_loc = layout.local();
  const float eps = float(cfg_.eps);
  // precision fp8 (the CPU emulation): what this forward's blocks run in e4m3 (none on a bf16 step).
  const Fp8Switches fwd{fp8_.attention && step.fp8, fp8_.gemm && step.fp8, fp8_.qk_int8, 0, fp8_.gemm_format};
  const LinearRows rows = linear_rows();

  // Patch embedding of the local tokens only.
  Tensor patches = patchify(latents, p, begin, S_loc);  // [B, S_loc, C_in·pt·ph·pw]
  Tensor x = apply(w_.patch_embedding, patches, rows);   // [B, S_loc, D]

  // RoPE rows of the shard, from global token positions.
  Tensor cos, sin;  // [S_loc, Dh]
  rope_.make(latents.dim(2) / p[0], latents.dim(3) / p[1], latents.dim(4) / p[2], begin, S_loc, cos, sin);

  // Condition embedder: sinusoid → time MLP → temb; time_proj(SiLU(temb)) → per-sample modulation.
  Tensor sinus = timestep_embedding(timestep, cfg_.freq_dim, /*flip_sin_to_cos=*/true, /*freq_shift=*/0.0f);  // [B, F]
  Tensor t1 = apply(w_.time_linear_1, sinus, rows);  // [B, D]
  silu_(t1);
  Tensor temb = apply(w_.time_linear_2, t1, rows);                            // [B, D]
  Tensor tproj = apply(w_.time_proj, silu(temb), rows);                      // [B, 6D]

  const bool caching = cache && cache->enabled();
  VGEN_CHECK(!caching || !host_dwdp_, ExitCode::kUsage,
             "the first-block cache does not run with DWDP (cache_config.first_block_threshold with "
             "parallel_config.dwdp_size > 1)");
  if (caching) cache->begin(x);
  const WanBlockRun run{cfg_};  // the oracle: no fusion, no profiler
  WanPendingResidual pending;   // the last block's feed-forward residual, not yet added to x
  for (size_t i = 0; i < w_.blocks.size(); ++i) {
    if (i == 1 && caching) {
      pending.flush(x, nullptr);  // the cache compares and stores whole updates of x
      if (cache->try_skip(x, layout)) break;
    }
    const WanBlockWeights& w = host_block_begin(i);
    OnUnwind end_on_error([&] { host_block_end(i); });
    const WanBlockPolicy policy{fp8_.block_switches(int64_t(i), int64_t(w_.blocks.size()), fwd), rows, backend_};
    wan_block_forward(run, w, x, pending, tproj, cos, sin, text.k[i], text.v[i], layout, attention, policy);
    host_block_end(i);
  }
  pending.flush(x, nullptr);
  if (caching) cache->end(x);

  // Head: shift/scale = table [2, D] + temb per sample, AdaLN, proj_out on the shard.
  Tensor head_mod = Tensor::empty({B, 2, D}, DType::kF32);  // [B, 2, D]
  for (int64_t b = 0; b < B; ++b) {
    Tensor dst = head_mod[b];
    dst.copy_from(add_row(w_.scale_shift_table, temb[b]));
  }
  Tensor y = layer_norm_modulate(x, head_mod, 0, 1, eps);  // [B, S_loc, D]
  return apply(w_.proj_out, y, rows);                      // [B, S_loc, pt·ph·pw·C_out]
}

Tensor WanTransformer::unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const {
  if (device_) return device_->unpatchify(tokens, T, H, W);
  return vgen::unpatchify(as_f32(tokens), cfg_.patch_size, cfg_.out_channels, T, H, W);
}

Tensor WanTransformer::forward(const Tensor& latents, const Tensor& timestep, const Tensor& encoder_hidden_states,
                               const StepPolicy& step) const {
  const int64_t S = num_tokens(latents.shape());
  TextContext text = prepare_text(encoder_hidden_states);
  SeqLayout layout = SeqLayout::make(S, 1, 0);
  auto attention = make_local_attention();
  Tensor tokens = forward_local(latents, timestep, text, layout, *attention, nullptr, step);  // [B, S, P·C_out]
  return unpatchify(tokens, latents.dim(2), latents.dim(3), latents.dim(4));
}

void WanTransformer::enable_fp8(const WanFp8Options& options) {
  VGEN_CHECK(!fp8_.any(), ExitCode::kInternal, "enable_fp8: the transformer is already set up for precision fp8");
  options.blocks().check(int64_t(cfg_.num_layers));
  if (device_) {
    device_->enable_fp8(options);
  } else if (options.gemm && !host_dwdp_) {
    const int64_t n = int64_t(w_.blocks.size());
    for (int64_t i = 0; i < n; ++i)
      if (options.blocks().gemm_in_fp8(i, n))
        for_each_fp8_linear(w_.blocks[size_t(i)], [&](WanLinear& l, int k) {
          if ((options.bf16_linears >> k) & 1u) return;  // fp8_config.bf16_linears: no quantised copy
          Fp8Weight q = fp8_quantize_weight(l.w, options.gemm_format);  // per output channel, fp32 weights kept
          l.w8 = std::move(q.w8);
          l.w_scale = std::move(q.scale);
        });
  }
  fp8_ = options;
}

void WanTransformer::to_device(const WanDeviceOptions& options, bool keep_host_weights) {
  if (!device_) {
    device_ = WanDeviceModel::upload(cfg_, w_, options);
    device_->set_attention_backend(backend_);
    if (fp8_.any()) device_->enable_fp8(fp8_);
  }
  if (!keep_host_weights) {
    WanTransformerWeights none;
    none.blocks.resize(w_.blocks.size());
    w_ = std::move(none);
  }
}

std::unique_ptr<WanTransformer> WanTransformer::random_on_device(const WanTransformerConfig& cfg,
                                                                 const WanDeviceOptions& options, uint64_t seed) {
  WanTransformerWeights none;  // no host weights: every call goes to the device model
  none.blocks.resize(size_t(cfg.num_layers));
  auto model = std::make_unique<WanTransformer>(cfg, std::move(none));
  model->device_ = WanDeviceModel::random(cfg, options, seed);
  return model;
}

}  // namespace vgen
