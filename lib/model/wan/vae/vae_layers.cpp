// Forwards of the VAE decoder's blocks (vae_layers.h) over the device-dispatching ops of
// ops/vae_ops.h; shapes in comments are the host's [C, t, H, W] (device: [t, H, W, C]).
#include "model/wan/vae/vae_layers.h"

#include "ops/vae_subpixel_ops.h"
#include "ops/vae_up_ops.h"

namespace vgen {

Tensor vae_conv(const VaeConvWeights& c, const Shape& in_shape, VaeConvCache* cache, const VaeRun& run,
                VaeSpatialContext& ctx, const VaeFill& fill, const Tensor* residual) {
  VGEN_ASSERT(c.kh == c.kw && c.kh % 2 == 1, "VAE conv: kernel {}x{} must be square and odd", c.kh, c.kw);
  const int64_t halo = (c.kh - 1) / 2;
  Conv3dPad pad;
  if (vae_ring_applies(c, cache, in_shape, run.device, run.cache_copy)) {
    ctx.conv_input(in_shape, run.dtype, run.device, halo, vae_ring_alloc(*cache, c.kt, run.dtype, run.device), fill,
                   pad);                                  // the frame into its ring slot
    return vae_ring_conv(c, *cache, pad, run.conv, residual);  // [1, H, W, cout_s]
  }
  Tensor buf = ctx.conv_input(in_shape, run.dtype, run.device, halo,
                              vae_buffer_alloc(run.dtype, run.device, vae_conv_front(run.device, c.kt)), fill,
                              pad);  // [cin, front + t, H', W']
  return vae_causal_conv(c, buf, pad, cache, run.cache_copy, run.conv, residual);  // [cout_s, t, H, W]
}

Tensor vae_res_forward(const VaeResBlock& r, const Tensor& x, VaeResState& st, const VaeRun& run,
                       VaeSpatialContext& ctx) {
  Tensor h = r.has_shortcut ? vae_pointwise(r.shortcut, x) : x;  // [out, t, H, W]
  Tensor a = vae_conv(r.conv1, x.shape(), &st.c1, run, ctx,
                      [&](Tensor& d) { vae_rms_norm_into(x, r.norm1, /*silu=*/true, d); });  // [out, t, H, W]
  // The shortcut joins conv2's epilogue: the block's output is written once.
  return vae_conv(r.conv2, a.shape(), &st.c2, run, ctx,
                  [&](Tensor& d) { vae_rms_norm_into(a, r.norm2, /*silu=*/true, d); }, &h);  // [out, t, H, W]
}

Tensor vae_attn_forward(const VaeAttnBlock& a, const Tensor& x, VaeSpatialContext& ctx) {
  Tensor qkv = vae_pointwise(a.to_qkv, vae_rms_norm(x, a.norm, /*silu=*/false));  // [3C, t, H, W]
  // Keys and values cover the whole frame: gather them; queries stay local.
  Tensor kv = ctx.gather(qkv);                                                  // [3C, t, Hf, Wf]
  Tensor y = vae_pointwise(a.proj, vae_frame_attention(qkv, kv, a.dim));        // [C, t, H, W]
  add_(y, x);
  return y;
}

namespace {

// The residual up block's DupUp3D shortcut as the upsampler adds it to its output frames.
struct VaeUpShortcut {
  const VaeDupUp* dup = nullptr;
  const Tensor* x = nullptr;  // the block input [Cin, t, H, W]
  bool first = false;         // the upsampler's first chunk (time_conv skipped)
};

void up_forward(const VaeUpsampler& u, const Tensor& x, VaeUpState& st, const VaeRun& run, VaeSpatialContext& ctx,
                const std::function<void(const Tensor&)>& next, const VaeUpShortcut& sc) {
  const VaeDims d = vae_dims(x);
  Tensor src = x;  // [C, t, H, W]
  int64_t halves = 1;
  if (u.temporal) {
    if (!st.seen) {
      st.seen = true;  // first chunk: one frame in, one frame out
    } else {
      src = vae_conv(u.time_conv, x.shape(), &st.cache, run, ctx, [&](Tensor& b) { b.copy_from(x); });  // [2C, t, H, W]
      halves = 2;
    }
  }
  // Nearest ×2 then the 3×3 Conv2d as its sub-pixel 2×2 conv of the low-resolution frame (4/9 of
  // the multiply-adds; ops/vae_subpixel_ops.h), one output frame at a time: the ×2 frame is the
  // largest activation of the decoder, so only one is alive.
  const Shape frame_shape = vae_shape({d.C, 1, d.H, d.W}, run.device);  // [C, 1, H, W]
  const int64_t cout = u.resample.cout / 4;
  for (int64_t f = 0; f < d.t; ++f) {
    const Tensor sf = vae_frames(src, f, 1);  // [C·halves, 1, H, W]
    for (int64_t k = 0; k < halves; ++k) {
      Conv3dPad pad;
      Tensor buf = ctx.conv_input(frame_shape, run.dtype, run.device, /*halo=*/1,
                                  vae_buffer_alloc(run.dtype, run.device, vae_conv_front(run.device, 1)),
                                  [&](Tensor& b) { vae_channels_into(sf, k * d.C, d.C, b); }, pad);  // [C, 1, H', W']
      Tensor r = vae_causal_conv(u.resample, buf, pad, nullptr, run.cache_copy, run.conv);  // [4C', 1, H + 1, W + 1]
      if (!sc.dup) {
        next(vae_subpixel_shuffle(r, cout));  // [C', 1, 2H, 2W]
        continue;
      }
      // Time phase k of the shortcut's frame f; the last phase alone on the first chunk.
      const Tensor xf = vae_dims(*sc.x).t == 1 ? *sc.x : vae_frames(*sc.x, f, 1);  // [Cin, 1, H, W]
      VGEN_ASSERT(sc.dup->cout == cout, "VAE up block: DupUp3D onto {} channels, upsampler {}", sc.dup->cout, cout);
      next(vae_subpixel_shuffle_dup_up(r, cout, xf, sc.dup->factor_t,
                                       sc.first ? sc.dup->factor_t - 1 : k));  // [C', 1, 2H, 2W]
    }
  }
}

}  // namespace

void vae_up_forward(const VaeUpsampler& u, const Tensor& x, VaeUpState& st, const VaeRun& run, VaeSpatialContext& ctx,
                    const std::function<void(const Tensor&)>& next) {
  up_forward(u, x, st, run, ctx, next, VaeUpShortcut{});
}

void vae_residual_up_forward(const VaeUpsampler& u, const VaeDupUp& s, const Tensor& x, const Tensor& h,
                             VaeUpState& st, const VaeRun& run, VaeSpatialContext& ctx,
                             const std::function<void(const Tensor&)>& next) {
  VGEN_ASSERT(s.factor_s == 2, "VAE up block: DupUp3D factor_s {} with the ×2 upsampler", s.factor_s);
  up_forward(u, h, st, run, ctx, next, VaeUpShortcut{&s, &x, u.temporal && !st.seen});
}

}  // namespace vgen
