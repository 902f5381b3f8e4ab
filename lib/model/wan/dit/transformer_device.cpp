// Forward pass of the Wan DiT on the device (see transformer_device.h). Built in both
// configurations: the device ops it calls throw kUsage in a CPU-only build.
#include "model/wan/dit/transformer_device.h"

#include <algorithm>
#include <exception>

#include "core/on_unwind.h"
#include "model/wan/dit/transformer.h"
#include "model/wan/dit/transformer_block.h"
#include "ops/activation.h"
#include "ops/device_ops.h"
#include "ops/dit_device_ops.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/fp8.h"
#include "ops/norm.h"

namespace vgen {

namespace {

using P = DitPhaseProfiler;

Tensor on_device(const Tensor& t) { return t.is_cpu() ? t.to(Device::kCUDA) : t; }

// Host or device tensor of any float dtype (or i64 timesteps) → device f32.
Tensor device_f32(const Tensor& t) {
  Tensor h = t;
  if (h.is_cpu() && h.dtype() != DType::kF32) h = h.to(DType::kF32);
  return cast(on_device(h), DType::kF32);
}

}  // namespace

WanDeviceModel::WanDeviceModel(const WanTransformerConfig& cfg, WanTransformerWeights device_weights,
                               const WanDeviceOptions& options)
    : cfg_(cfg), w_(std::move(device_weights)), opt_(options), rope_(cfg) {
  VGEN_CHECK(opt_.dtype == DType::kBF16 || opt_.dtype == DType::kF32, ExitCode::kUsage,
             "the device DiT computes in bf16 or fp32, not {}", dtype_name(opt_.dtype));
  VGEN_ASSERT(int(w_.blocks.size()) == cfg_.num_layers, "device weights have {} blocks, config {}", w_.blocks.size(),
              cfg_.num_layers);
  VGEN_ASSERT(w_.patch_embedding.w.defined() && !w_.patch_embedding.w.is_cpu(),
              "WanDeviceModel needs device weights");
  weight_bytes_ = w_.bytes;
}

WanDeviceModel::~WanDeviceModel() {
  if (!dwdp_ || !opt_.world || std::uncaught_exceptions() > 0) return;
  try {
    sync_compute_stream();
    opt_.world->barrier();
  } catch (...) {
    // Teardown: a failed barrier means the job is ending anyway (a peer died or aborted).
  }
}

void WanDeviceModel::set_dwdp(std::shared_ptr<DwdpDeviceWeights> weights, WanBlockWeights staged0,
                              WanBlockWeights staged1) {
  dwdp_ = std::move(weights);
  staged_[0] = std::move(staged0);
  staged_[1] = std::move(staged1);
  weight_bytes_ = w_.bytes + dwdp_->device_bytes();  // w_'s blocks are none or views of the arena
}

const WanBlockWeights& WanDeviceModel::block_begin(size_t i) const {
  if (!dwdp_) return w_.blocks[i];
  const int s = dwdp_->acquire(int(i));
  return s < 0 ? w_.blocks[i] : staged_[s];
}

void WanDeviceModel::block_end(size_t i) const {
  if (dwdp_) dwdp_->release(int(i));
}

Tensor WanDeviceModel::linear(const WanLinear& l, const Tensor& x, Activation act) const {
  return timed(P::kGemm, [&] { return vgen::linear(l, x, LinearMode{}, act); });
}

void WanDeviceModel::rope_rows(int64_t frames, int64_t rows, int64_t cols, int64_t begin, int64_t count, Tensor& cos,
                               Tensor& sin) const {
  std::lock_guard<std::mutex> lk(rope_mu_);
  const int64_t key[5] = {frames, rows, cols, begin, count};
  if (!std::equal(key, key + 5, rope_key_)) {
    Tensor c, s;  // [count, Dh] f32 on the host, from global positions
    rope_.make(frames, rows, cols, begin, count, c, s);
    rope_cos_ = c.to(Device::kCUDA);
    rope_sin_ = s.to(Device::kCUDA);
    std::copy(key, key + 5, rope_key_);
  }
  cos = rope_cos_;
  sin = rope_sin_;
}

TextContext WanDeviceModel::prepare_text(const Tensor& encoder_hidden_states) const {
  VGEN_CHECK(encoder_hidden_states.ndim() == 3 && encoder_hidden_states.dim(2) == cfg_.text_dim, ExitCode::kInput,
             "encoder_hidden_states must be [B, L, {}], got {}", cfg_.text_dim, encoder_hidden_states.str());
  const DType dt = opt_.dtype;
  const int64_t B = encoder_hidden_states.dim(0), L = encoder_hidden_states.dim(1);
  const int64_t H = cfg_.num_attention_heads, Dh = cfg_.attention_head_dim;
  const float eps = float(cfg_.eps);
  Tensor e = timed(P::kOther, [&] { return cast(device_f32(encoder_hidden_states), dt); });  // [B, L, text_dim]
  Tensor h = linear(w_.text_linear_1, e, opt_.fused_gelu ? Activation::kGeluTanh : Activation::kNone);  // [B, L, D]
  if (!opt_.fused_gelu) timed(P::kOther, [&] { gelu_tanh_(h); });
  Tensor ctx = linear(w_.text_linear_2, h);  // [B, L, D]
  TextContext tc;
  tc.batch = B;
  tc.length = L;
  tc.k.reserve(w_.blocks.size());
  tc.v.reserve(w_.blocks.size());
  for (size_t i = 0; i < w_.blocks.size(); ++i) {
    const WanBlockWeights& b = block_begin(i);
    OnUnwind end_on_error([&] { block_end(i); });  // a DWDP slot stays usable after an error
    Tensor k = linear(b.attn2.k, ctx);
    tc.k.push_back(timed(P::kOther, [&] { return rms_norm(k, b.attn2.norm_k, eps); }).reshape({B, L, H, Dh}));
    tc.v.push_back(linear(b.attn2.v, ctx).reshape({B, L, H, Dh}));  // [B, L, H, Dh]
    block_end(i);
  }
  return tc;
}

Tensor WanDeviceModel::forward_local(const Tensor& latents0, const Tensor& timestep0, const TextContext& text,
                                     const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache,
                                     const StepPolicy& step) const {
  const auto& p = cfg_.patch_size;
  const Shape& ls = latents0.shape();
  VGEN_CHECK(ls.size() == 5 && ls[1] == cfg_.in_channels && ls[2] % p[0] == 0 && ls[3] % p[1] == 0 &&
                 ls[4] % p[2] == 0,
             ExitCode::kInput,
             "transformer input must be [B, {}, T, H, W] with T, H, W divisible by the patch [{}, {}, {}]; got {}",
             cfg_.in_channels, p[0], p[1], p[2], shape_str(ls));
  const int64_t B = ls[0], D = cfg_.dim(), S = (ls[2] / p[0]) * (ls[3] / p[1]) * (ls[4] / p[2]);
  VGEN_CHECK(timestep0.ndim() == 1 && timestep0.dim(0) == B, ExitCode::kInput,
             "timestep must be [B] = [{}] (one per sample), got {}", B, timestep0.str());
  VGEN_CHECK(text.batch == B && text.k.size() == w_.blocks.size() && text.v.size() == w_.blocks.size(),
             ExitCode::kInput, "text context of batch {} with {} blocks for latents {} and {} blocks", text.batch,
             text.k.size(), latents0.str(), w_.blocks.size());
  VGEN_CHECK(text.k.empty() || (!text.k[0].is_cpu() && text.k[0].dtype() == opt_.dtype), ExitCode::kInternal,
             "the device DiT needs the text K/V of its own prepare_text (device {}), got {}", dtype_name(opt_.dtype),
             text.k[0].str());
  VGEN_ASSERT(layout.tokens == S && layout.degree >= 1 && layout.seq_rank >= 0 && layout.seq_rank < layout.degree &&
                  layout.padded >= S && layout.padded % layout.degree == 0,
              "sequence layout (tokens {}, padded {}, degree {}, rank {}) for {} tokens", layout.tokens,
              layout.padded, layout.degree, layout.seq_rank, S);
  const DType dt = opt_.dtype;
  const int64_t begin = layout.begin(), S_loc = layout.local();
  const float eps = float(cfg_.eps);
  // precision fp8: what this forward runs in e4m3 (none on a bf16 step of the denoising loop).
  const Fp8Switches fwd{fp8_.attention && step.fp8, fp8_.gemm && step.fp8, fp8_.qk_int8, 0, fp8_.gemm_format};

  // Patch embedding of the local tokens (the gather rounds the latents to the compute dtype, as
  // diffusers' latents.to(bf16) before the Conv3d).
  Tensor latents = on_device(latents0);
  if (latents.dtype() != DType::kF32 && latents.dtype() != DType::kBF16) latents = device_f32(latents);
  Tensor patches = timed(P::kOther, [&] { return cuda_patchify(latents, p, begin, S_loc, dt); });
  Tensor x = linear(w_.patch_embedding, patches);  // [B, S_loc, D] from [B, S_loc, Cin·P]

  Tensor cos, sin;  // [S_loc, Dh] f32
  rope_rows(ls[2] / p[0], ls[3] / p[1], ls[4] / p[2], begin, S_loc, cos, sin);

  // Condition embedder: fp32 time MLP (time_embedder stays fp32), temb rounded to the compute
  // dtype, time_proj(SiLU(temb)) in the compute dtype, modulation rows fp32.
  Tensor sinus = timed(P::kOther, [&] {
    return timestep_embedding(device_f32(timestep0), cfg_.freq_dim, /*flip_sin_to_cos=*/true, /*freq_shift=*/0.0f);
  });                                                   // [B, F] f32
  Tensor t1 = linear(w_.time_linear_1, sinus);          // [B, D] f32
  timed(P::kOther, [&] { silu_(t1); });
  Tensor temb32 = linear(w_.time_linear_2, t1);         // [B, D] f32
  Tensor temb = timed(P::kOther, [&] { return cast(temb32, dt); });              // [B, D] compute dtype
  Tensor tproj_in = timed(P::kOther, [&] { return silu(temb); });
  Tensor tproj_dt = linear(w_.time_proj, tproj_in);                              // [B, 6D] compute dtype
  Tensor tproj = timed(P::kOther, [&] { return cast(tproj_dt, DType::kF32); });  // [B, 6D] f32

  // One timestep for the whole batch (the denoising loop's case): one modulation, so one gated copy
  // of a weight serves every sample. Known only for host timesteps.
  bool same_gates = B == 1;
  if (!same_gates && timestep0.is_cpu()) {
    const Tensor t = timestep0.to(DType::kF32);
    same_gates = std::all_of(t.f32(), t.f32() + B, [&](float v) { return v == t.f32()[0]; });
  }
  const WanBlockRun run{
      cfg_, {dt, opt_.fused_gelu, opt_.fused_residual_norm, opt_.fused_residual_gemm, same_gates}, prof_};
  WanPendingResidual pending;  // the last block's feed-forward residual, not yet added to x
  const bool caching = cache && cache->enabled();
  VGEN_CHECK(!caching || !dwdp_, ExitCode::kUsage,
             "the first-block cache does not run with DWDP (cache_config.first_block_threshold with "
             "parallel_config.dwdp_size > 1)");
  if (caching) timed(P::kOther, [&] { cache->begin(x); });
  for (size_t i = 0; i < w_.blocks.size(); ++i) {
    if (i == 1 && caching) {
      pending.flush(x, prof_);  // the cache compares and stores whole updates of x
      if (timed(P::kOther, [&] { return cache->try_skip(x, layout); })) break;
    }
    const WanBlockWeights& w = block_begin(i);
    OnUnwind end_on_error([&] { block_end(i); });
    const WanBlockPolicy policy{fp8_.block_switches(int64_t(i), int64_t(w_.blocks.size()), fwd), LinearRows::kBatched,
                                backend_};
    wan_block_forward(run, w, x, pending, tproj, cos, sin, text.k[i], text.v[i], layout, attention, policy);
    block_end(i);
  }
  pending.flush(x, prof_);
  if (caching) timed(P::kOther, [&] { cache->end(x); });

  // Head: shift/scale = table [2, D] + float(temb) per sample, AdaLN, proj_out.
  Tensor temb_f = cast(temb, DType::kF32);  // the rounded temb, as diffusers adds it
  Tensor head_mod = Tensor::empty({B, 2, D}, DType::kF32, Device::kCUDA);  // [B, 2, D]
  timed(P::kOther, [&] {
    for (int64_t b = 0; b < B; ++b) {
      Tensor dst = head_mod[b];
      dst.copy_from(add_row(w_.scale_shift_table, temb_f[b]));
    }
  });
  Tensor y = timed(P::kOther, [&] { return layer_norm_modulate(x, head_mod, 0, 1, eps); });  // [B, S_loc, D]
  return linear(w_.proj_out, y);                                                          // [B, S_loc, P·C_out]
}

Tensor WanDeviceModel::unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const {
  Tensor t = on_device(tokens);
  if (t.dtype() != DType::kF32 && t.dtype() != DType::kBF16) t = device_f32(t);
  return cuda_unpatchify(t, cfg_.patch_size, cfg_.out_channels, T, H, W, DType::kF32);
}

}  // namespace vgen
