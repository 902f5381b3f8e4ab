#include "model/wan/dit/transformer_forward.h"

#include <algorithm>
#include <utility>

#include "core/on_unwind.h"
#include "model/wan/dit/time_modulation.h"
#include "model/wan/dit/transformer.h"
#include "ops/activation.h"
#include "ops/device_ops.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/linear_layer.h"
#include "ops/norm.h"

namespace vgen {
namespace {

using P = DitPhaseProfiler;

template <typename F> auto phase(const WanForwardContext& c, P::Phase p, F&& f) {
  return timed(c.profiler, p, std::forward<F>(f));
}

// A linear outside the blocks: in the dtype of its input (the time MLP stays f32 on the device).
Tensor apply(const WanForwardContext& c, const WanLinear& l, const Tensor& x, Activation act = Activation::kNone) {
  const LinearMode m{false, GemmFormat::kE4m3, c.rows, c.fusion.dtype};
  return phase(c, P::kGemm, [&] { return linear(l, x, m, act); });
}

Tensor on(const Tensor& t, Device dev) { return t.device() == dev ? t : t.to(dev); }

// Any float dtype (or i64 timesteps), on any device → f32 on dev.
Tensor f32_on(const Tensor& t, Device dev) {
  Tensor h = t;
  if (h.is_cpu() && h.dtype() != DType::kF32) h = h.to(DType::kF32);
  return cast(on(h, dev), DType::kF32);
}

// Latents or tokens on the forward's device: the device takes f32 or bf16 as they are.
Tensor input_on(const Tensor& t0, Device dev) {
  Tensor t = on(t0, dev);
  if (dev == Device::kCPU || (t.dtype() != DType::kF32 && t.dtype() != DType::kBF16)) t = f32_on(t, dev);
  return t;
}

void check_inputs(const WanForwardContext& c, const Shape& ls, const Tensor& timestep, const TextContext& text,
                  const SeqLayout& layout) {
  const auto& p = c.cfg.patch_size;
  VGEN_CHECK(ls.size() == 5 && ls[1] == c.cfg.in_channels && ls[2] % p[0] == 0 && ls[3] % p[1] == 0 &&
                 ls[4] % p[2] == 0,
             ExitCode::kInput,
             "transformer input must be [B, {}, T, H, W] with T, H, W divisible by the patch [{}, {}, {}]; got {}",
             c.cfg.in_channels, p[0], p[1], p[2], shape_str(ls));
  const int64_t B = ls[0], S = (ls[2] / p[0]) * (ls[3] / p[1]) * (ls[4] / p[2]);
  VGEN_CHECK((timestep.ndim() == 1 && timestep.dim(0) == B) ||
                 (timestep.ndim() == 2 && timestep.dim(0) == B && timestep.dim(1) == S),
             ExitCode::kInput,
             "timestep must be [B] = [{}] (one per sample) or [B, S] = [{}, {}] (one per token), got {}", B, B, S,
             timestep.str());
  VGEN_CHECK(text.batch == B && text.k.size() == c.w.blocks.size() && text.v.size() == c.w.blocks.size(),
             ExitCode::kInput, "text context of batch {} with {} blocks for latents {} and {} blocks", text.batch,
             text.k.size(), shape_str(ls), c.w.blocks.size());
  VGEN_CHECK(text.image_k.empty() || (text.image_k.size() == text.k.size() && text.image_v.size() == text.k.size()),
             ExitCode::kInput, "image context with {} blocks for a text context of {}", text.image_k.size(),
             text.k.size());
  VGEN_CHECK(text.image_k.empty() || c.cfg.has_image(), ExitCode::kInput,
             "image tokens for a transformer without the image path (no image_dim in its config)");
  VGEN_CHECK(text.k.empty() || (text.k[0].device() == c.device && text.k[0].dtype() == c.fusion.dtype),
             ExitCode::kInternal, "the DiT needs the text K/V of its own prepare_text ({} {}), got {}",
             c.device == Device::kCPU ? "host" : "device", dtype_name(c.fusion.dtype), text.k[0].str());
  VGEN_ASSERT(layout.tokens == S && layout.degree >= 1 && layout.seq_rank >= 0 && layout.seq_rank < layout.degree &&
                  layout.padded >= S && layout.padded % layout.degree == 0,
              "sequence layout (tokens {}, padded {}, degree {}, rank {}) for {} tokens", layout.tokens,
              layout.padded, layout.degree, layout.seq_rank, S);
}

// Patch embedding of the local tokens [begin, begin + count) → x [B, count, D]. The gather rounds
// the latents to the compute dtype, as diffusers' latents.to(bf16) before the Conv3d.
Tensor embed_patches(const WanForwardContext& c, const Tensor& latents0, int64_t begin, int64_t count) {
  const Tensor latents = input_on(latents0, c.device);
  Tensor patches = phase(c, P::kOther, [&] {
    return patchify(latents, c.cfg.patch_size, begin, count, c.fusion.dtype);  // [B, count, C_in·pt·ph·pw]
  });
  return apply(c, c.w.patch_embedding, patches);  // [B, count, D]
}

// Condition embedder: sinusoid → the f32 time MLP → temb, rounded to the compute dtype;
// time_proj(SiLU(temb)) in the compute dtype → tproj [B, 6D] f32, the modulation before the tables.
// timestep [B]: one per sample (or [U]: one per distinct value of per-token timesteps).
void embed_condition(const WanForwardContext& c, const Tensor& timestep, Tensor& temb, Tensor& tproj) {
  const DType dt = c.fusion.dtype;
  Tensor sinus = phase(c, P::kOther, [&] {
    return timestep_embedding(f32_on(timestep, c.device), c.cfg.freq_dim, /*flip_sin_to_cos=*/true,
                              /*freq_shift=*/0.0f);
  });                                               // [B, F] f32
  Tensor t1 = apply(c, c.w.time_linear_1, sinus);  // [B, D] f32
  phase(c, P::kOther, [&] { silu_(t1); });
  Tensor temb32 = apply(c, c.w.time_linear_2, t1);                           // [B, D] f32
  temb = phase(c, P::kOther, [&] { return cast(temb32, dt); });              // [B, D] compute dtype
  Tensor tproj_in = phase(c, P::kOther, [&] { return silu(temb); });        // [B, D]
  Tensor tproj_dt = apply(c, c.w.time_proj, tproj_in);                       // [B, 6D] compute dtype
  tproj = phase(c, P::kOther, [&] { return cast(tproj_dt, DType::kF32); });  // [B, 6D] f32
}

// The time path of this forward: per sample for timestep [B]; for [B, S], per token, embedded once
// per distinct value of this rank's tokens (time_modulation.h).
WanTimeEmbedding embed_time(const WanForwardContext& c, const Tensor& timestep, const SeqLayout& layout) {
  WanTimeEmbedding t;
  if (timestep.ndim() == 1) {
    embed_condition(c, timestep, t.temb, t.tproj);  // [B, D], [B, 6D]
    return t;
  }
  const WanTokenTimesteps tt = phase(c, P::kOther, [&] { return wan_token_timesteps(timestep, layout); });
  embed_condition(c, tt.values, t.temb, t.tproj);                          // [U, D], [U, 6D]
  t.index = phase(c, P::kOther, [&] { return on(tt.index, c.device); });  // [B·S_loc] i64
  return t;
}

// One timestep for the whole batch (the denoising loop's case): one modulation, so one gated copy
// of a weight serves every sample. Known only for host timesteps [B].
bool same_gates(const Tensor& timestep) {
  if (timestep.ndim() != 1) return false;  // per-token timesteps: per-token gates
  const int64_t B = timestep.dim(0);
  if (B == 1) return true;
  if (!timestep.is_cpu()) return false;
  const Tensor t = timestep.to(DType::kF32);
  return std::all_of(t.f32(), t.f32() + B, [&](float v) { return v == t.f32()[0]; });
}

// The blocks over x [B, S_loc, D] in place; the first-block cache may skip all after the first.
void run_blocks(const WanForwardContext& c, const WanBlockRun& run, Tensor& x, const WanTimeEmbedding& time,
                const Tensor& cos, const Tensor& sin, const TextContext& text, const SeqLayout& layout,
                SeqAttention& attention, FirstBlockCache* cache, const StepPolicy& step) {
  // precision fp8: what this forward runs in e4m3 (none on a bf16 step of the denoising loop).
  const Fp8Switches fwd{c.fp8.attention && step.fp8, c.fp8.gemm && step.fp8, c.fp8.qk_int8, 0, c.fp8.gemm_format};
  const int64_t n = int64_t(c.w.blocks.size());
  const bool caching = cache && cache->enabled();
  VGEN_CHECK(!caching || !c.dwdp, ExitCode::kUsage,
             "the first-block cache does not run with DWDP (cache_config.first_block_threshold with "
             "parallel_config.dwdp_size > 1)");
  if (caching) phase(c, P::kOther, [&] { cache->begin(x); });
  WanPendingResidual pending;  // the last block's feed-forward residual, not yet added to x
  for (int64_t i = 0; i < n; ++i) {
    if (i == 1 && caching) {
      pending.flush(x, c.profiler);  // the cache compares and stores whole updates of x
      if (phase(c, P::kOther, [&] { return cache->try_skip(x, layout); })) break;
    }
    const WanBlockWeights& w = c.blocks.block_begin(size_t(i));
    OnUnwind end_on_error([&] { c.blocks.block_end(size_t(i)); });  // a DWDP slot stays usable after an error
    const WanBlockPolicy policy{c.fp8.block_switches(i, n, fwd), c.rows, c.attention};
    const size_t k = size_t(i);
    const WanCrossKv kv{text.k[k], text.v[k], text.image_k.empty() ? Tensor() : text.image_k[k],
                        text.image_v.empty() ? Tensor() : text.image_v[k]};
    wan_block_forward(run, w, x, pending, time, cos, sin, kv, layout, attention, policy);
    c.blocks.block_end(size_t(i));
  }
  pending.flush(x, c.profiler);
  if (caching) phase(c, P::kOther, [&] { cache->end(x); });
}

// Head: shift/scale = table [2, D] + float(temb) per sample or per token, AdaLN, proj_out.
Tensor head(const WanForwardContext& c, const Tensor& x, const WanTimeEmbedding& time) {
  Tensor head_mod = phase(c, P::kOther, [&] {
    return wan_head_modulation(time, c.w.scale_shift_table, x.dim(0), x.dim(1));  // [B, 2, D] or [B, S_loc, 2, D]
  });
  Tensor y = phase(c, P::kOther, [&] { return layer_norm_modulate(x, head_mod, 0, 1, float(c.cfg.eps)); });
  return apply(c, c.w.proj_out, y);  // [B, S_loc, P·C_out]
}

// WanImageEmbedding: image tokens [B, L, image_dim] (FLF2V: the two images' tokens regrouped to
// [B, pos_embed_seq_len, image_dim], + pos_embed) → fp32 LayerNorm → Linear → GELU → Linear → fp32
// LayerNorm → [B, L', D] in the compute dtype.
Tensor embed_image(const WanForwardContext& c, const Tensor& image_tokens) {
  const WanImageEmbedderWeights& ie = c.w.image_embedder;
  const int64_t I = *c.cfg.image_dim;
  constexpr float kEps = 1e-5f;  // FP32LayerNorm's default, not the config's eps
  VGEN_CHECK(image_tokens.ndim() == 3 && image_tokens.dim(2) == I, ExitCode::kInput,
             "image tokens must be [B, L, {}], got {}", I, image_tokens.str());
  Tensor e = phase(c, P::kOther, [&] { return cast(f32_on(image_tokens, c.device), c.fusion.dtype); });  // [B, L, I]
  if (ie.pos_embed.defined()) {
    const int64_t Lp = ie.pos_embed.dim(0);
    VGEN_CHECK(e.numel() % (Lp * I) == 0 && 2 * e.dim(1) == Lp, ExitCode::kInput,
               "FLF2V image tokens: {} do not regroup into pairs of {} positions", e.str(), Lp);
    // A copy: on the host in fp32 `e` may share the caller's tokens, which every stream's prepare reuses.
    e = e.reshape({e.numel() / (Lp * I), Lp, I}).clone();  // [B/2, 2L, I]: first and last image side by side
    phase(c, P::kOther, [&] {
      for (int64_t b = 0; b < e.dim(0); ++b) {
        Tensor eb = e[b];
        add_inplace(eb, ie.pos_embed);
      }
    });
  }
  Tensor n1 = phase(c, P::kOther, [&] { return layer_norm(e, ie.norm1_w, ie.norm1_b, kEps); });
  Tensor h = apply(c, ie.ff1, n1);  // [B, L, I]
  phase(c, P::kOther, [&] { gelu_erf_(h); });
  Tensor h2 = apply(c, ie.ff2, h);  // [B, L, D]
  return phase(c, P::kOther, [&] { return layer_norm(h2, ie.norm2_w, ie.norm2_b, kEps); });
}

// diffusers' WanAttnProcessor takes the first `L − 512` positions of the context [image ‖ text] as
// image tokens (a text length fixed at 512; Python's slicing when L < 512): n = L − 512 for L ≥ 512,
// 2L − 512 for 256 ≤ L < 512, else 0. The same split here gives the reference's numbers at every
// length (with the pipelines' 512 text positions, exactly the image tokens).
int64_t image_path_tokens(int64_t L) { return L >= 512 ? L - 512 : std::max<int64_t>(0, 2 * L - 512); }

// Tokens [begin, begin + n) of x [B, L, D] as a contiguous [B, n, D] (a view when B = 1).
Tensor token_range(const Tensor& x, int64_t begin, int64_t n) {
  const int64_t B = x.dim(0), D = x.dim(2);
  if (B == 1) return x[0].narrow(begin, n).reshape({1, n, D});
  Tensor out = Tensor::empty({B, n, D}, x.dtype(), x.device());
  for (int64_t b = 0; b < B; ++b) {
    Tensor dst = out[b];
    dst.copy_from(x[b].narrow(begin, n));
  }
  return out;
}

// [a ‖ b] along the tokens: a [B, La, D], b [B, Lb, D] → [B, La + Lb, D].
Tensor concat_tokens(const Tensor& a, const Tensor& b) {
  VGEN_CHECK(a.dim(0) == b.dim(0) && a.dim(2) == b.dim(2) && a.dtype() == b.dtype(), ExitCode::kInput,
             "image tokens {} do not go with the text {} (batch and width)", a.str(), b.str());
  const int64_t B = a.dim(0), La = a.dim(1), Lb = b.dim(1);
  Tensor out = Tensor::empty({B, La + Lb, a.dim(2)}, a.dtype(), a.device());
  for (int64_t i = 0; i < B; ++i) {
    Tensor head = out[i].narrow(0, La), tail = out[i].narrow(La, Lb);
    head.copy_from(a[i]);
    tail.copy_from(b[i]);
  }
  return out;
}

// The text embedder: [B, L, text_dim] (any device, any float dtype) → [B, L, D].
Tensor embed_text(const WanForwardContext& c, const Tensor& e0) {
  VGEN_CHECK(e0.ndim() == 3 && e0.dim(2) == c.cfg.text_dim, ExitCode::kInput,
             "encoder_hidden_states must be [B, L, {}], got {}", c.cfg.text_dim, e0.str());
  const WanBlockFusion& fu = c.fusion;
  Tensor e = phase(c, P::kOther, [&] { return cast(f32_on(e0, c.device), fu.dtype); });  // [B, L, text_dim]
  Tensor h = apply(c, c.w.text_linear_1, e, fu.fused_gelu ? Activation::kGeluTanh : Activation::kNone);  // [B, L, D]
  if (!fu.fused_gelu) phase(c, P::kOther, [&] { gelu_tanh_(h); });
  return apply(c, c.w.text_linear_2, h);  // [B, L, D]
}

// K (after its RMSNorm) and V [B, L, H, Dh] of tokens x [B, L, D].
void project_kv(const WanForwardContext& c, const WanLinear& wk, const Tensor& norm_k, const WanLinear& wv,
                const Tensor& x, std::vector<Tensor>& ks, std::vector<Tensor>& vs) {
  const int64_t B = x.dim(0), L = x.dim(1), H = c.cfg.num_attention_heads, Dh = c.cfg.attention_head_dim;
  Tensor k = apply(c, wk, x);  // [B, L, D]
  ks.push_back(phase(c, P::kOther, [&] { return rms_norm(k, norm_k, float(c.cfg.eps)); }).reshape({B, L, H, Dh}));
  vs.push_back(apply(c, wv, x).reshape({B, L, H, Dh}));  // [B, L, H, Dh]
}

}  // namespace

TextContext wan_prepare_text(const WanForwardContext& c, const Tensor& encoder_hidden_states,
                             const Tensor& image_tokens) {
  Tensor ctx = embed_text(c, encoder_hidden_states);  // [B, L, D]
  int64_t n = 0;                                      // context positions on the image path
  if (image_tokens.defined()) {
    VGEN_CHECK(c.cfg.has_image(), ExitCode::kInput,
               "image tokens for a transformer without the image path (no image_dim in its config)");
    ctx = phase(c, P::kOther, [&] { return concat_tokens(embed_image(c, image_tokens), ctx); });  // [B, L', D]
    n = image_path_tokens(ctx.dim(1));
  }
  const int64_t B = ctx.dim(0), L = ctx.dim(1);
  const Tensor img = n ? phase(c, P::kOther, [&] { return token_range(ctx, 0, n); }) : Tensor();       // [B, n, D]
  const Tensor txt = n ? phase(c, P::kOther, [&] { return token_range(ctx, n, L - n); }) : ctx;  // [B, L − n, D]
  TextContext tc;
  tc.batch = B;
  tc.length = L - n;
  tc.image_length = n;
  for (size_t i = 0; i < c.w.blocks.size(); ++i) {
    const WanBlockWeights& b = c.blocks.block_begin(i);
    OnUnwind end_on_error([&] { c.blocks.block_end(i); });  // a DWDP slot stays usable after an error
    project_kv(c, b.attn2.k, b.attn2.norm_k, b.attn2.v, txt, tc.k, tc.v);
    if (n) project_kv(c, b.image.k, b.image.norm_k, b.image.v, img, tc.image_k, tc.image_v);
    c.blocks.block_end(i);
  }
  return tc;
}

Tensor wan_forward_local(const WanForwardContext& c, const Tensor& latents, const Tensor& timestep,
                         const TextContext& text, const SeqLayout& layout, SeqAttention& attention,
                         FirstBlockCache* cache, const StepPolicy& step) {
  const Shape& ls = latents.shape();
  check_inputs(c, ls, timestep, text, layout);
  const auto& p = c.cfg.patch_size;
  const int64_t begin = layout.begin(), S_loc = layout.local();
  Tensor x = embed_patches(c, latents, begin, S_loc);  // [B, S_loc, D]
  Tensor cos, sin;                                     // [S_loc, Dh] f32, from global token positions
  c.rope.rows(ls[2] / p[0], ls[3] / p[1], ls[4] / p[2], begin, S_loc, c.device, cos, sin);
  const WanTimeEmbedding time = embed_time(c, timestep, layout);  // per sample or per token
  WanBlockRun run{c.cfg, c.fusion, c.profiler};
  run.fusion.same_gates = same_gates(timestep);
  run_blocks(c, run, x, time, cos, sin, text, layout, attention, cache, step);
  return head(c, x, time);
}

Tensor wan_unpatchify(const WanForwardContext& c, const Tensor& tokens, int64_t T, int64_t H, int64_t W) {
  return unpatchify(input_on(tokens, c.device), c.cfg.patch_size, c.cfg.out_channels, T, H, W, DType::kF32);
}

}  // namespace vgen
