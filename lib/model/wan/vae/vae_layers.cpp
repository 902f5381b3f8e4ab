#include "model/wan/vae/vae_layers.h"

#include <cmath>
#include <cstring>

#include "kernels/attention/attention_ref.h"

namespace vgen {

VaeConv VaeConv::load(const WeightStore& ws, const std::string& prefix, int64_t cout, int64_t cin, int64_t kt,
                      int64_t kh, int64_t kw) {
  VaeConv c;
  c.cin = cin;
  c.cout = cout;
  c.kt = kt == 0 ? 1 : kt;
  c.kh = kh;
  c.kw = kw;
  Shape ws_shape = kt == 0 ? Shape{cout, cin, kh, kw} : Shape{cout, cin, kt, kh, kw};
  c.w = ws.get_f32(prefix + ".weight", ws_shape);
  c.b = ws.get_f32(prefix + ".bias", {cout});
  return c;
}

Tensor causal_conv(const VaeConv& conv, const Tensor& x, Tensor& cache, VaeSpatialContext& ctx) {
  VGEN_ASSERT(x.dim(0) == conv.cin, "causal_conv: input {} for a conv with {} input channels", x.str(), conv.cin);
  VGEN_ASSERT(conv.kh == conv.kw && conv.kh % 2 == 1, "causal_conv: kernel {}x{} must be square and odd", conv.kh,
              conv.kw);
  const int64_t halo = (conv.kh - 1) / 2;
  Conv3dPad pad;
  Tensor xe = halo > 0 ? ctx.extend(x, halo, pad) : x;  // [Cin, t, H', W']
  if (conv.kt == 1) return vae_conv3d(xe, conv.w, conv.b, pad);
  const int64_t keep = conv.kt - 1;  // frames carried to the next chunk
  if (!cache.defined()) cache = Tensor::zeros({xe.dim(0), keep, xe.dim(2), xe.dim(3)}, DType::kF32);
  VGEN_ASSERT(cache.dim(2) == xe.dim(2) && cache.dim(3) == xe.dim(3), "causal_conv: cache {} vs chunk {}",
              cache.str(), xe.str());
  Tensor y = vae_conv3d(xe, conv.w, conv.b, pad, cache);  // [Cout, t, H, W] over [cache, xe]
  // New cache: the last `keep` frames of [cache, xe].
  const int64_t t = xe.dim(1);
  cache = t >= keep ? slice_time(xe, t - keep, keep) : cat_time(slice_time(cache, t, keep - t), xe);
  return y;
}

VaeResBlock VaeResBlock::load(const WeightStore& ws, const std::string& p, int64_t in, int64_t out) {
  VaeResBlock r;
  r.norm1 = ws.get_f32(p + ".norm1.gamma", {in, 1, 1, 1});
  r.conv1 = VaeConv::load(ws, p + ".conv1", out, in, 3, 3, 3);
  r.norm2 = ws.get_f32(p + ".norm2.gamma", {out, 1, 1, 1});
  r.conv2 = VaeConv::load(ws, p + ".conv2", out, out, 3, 3, 3);
  if (in != out) r.shortcut = VaeConv::load(ws, p + ".conv_shortcut", out, in, 1, 1, 1);
  return r;
}

Tensor VaeResBlock::forward(const Tensor& x, State& st, VaeSpatialContext& ctx) const {
  Tensor unused;
  Tensor h = shortcut.w.defined() ? causal_conv(shortcut, x, unused, ctx) : x;  // [out, t, H, W]
  Tensor a = vae_rms_norm(x, norm1, /*silu=*/true);                              // [in, t, H, W]
  a = causal_conv(conv1, a, st.cache1, ctx);                                     // [out, t, H, W]
  a = vae_rms_norm(a, norm2, /*silu=*/true);
  a = causal_conv(conv2, a, st.cache2, ctx);  // [out, t, H, W]
  add_(a, h);
  return a;
}

VaeAttnBlock VaeAttnBlock::load(const WeightStore& ws, const std::string& p, int64_t dim) {
  VaeAttnBlock a;
  a.dim = dim;
  a.norm = ws.get_f32(p + ".norm.gamma", {dim, 1, 1});
  a.to_qkv = VaeConv::load(ws, p + ".to_qkv", 3 * dim, dim, 0, 1, 1);
  a.proj = VaeConv::load(ws, p + ".proj", dim, dim, 0, 1, 1);
  return a;
}

namespace {
// [C, S] → [S, C]
void transpose_cs(const float* src, float* dst, int64_t C, int64_t S) {
#pragma omp parallel for schedule(static)
  for (int64_t s = 0; s < S; ++s)
    for (int64_t c = 0; c < C; ++c) dst[s * C + c] = src[c * S + s];
}
}  // namespace

Tensor VaeAttnBlock::forward(const Tensor& x, VaeSpatialContext& ctx) const {
  const int64_t C = dim, T = x.dim(1), H = x.dim(2), W = x.dim(3), S = H * W;
  Tensor unused;
  Tensor xn = vae_rms_norm(x, norm, /*silu=*/false);  // [C, T, H, W]
  Tensor qkv = causal_conv(to_qkv, xn, unused, ctx);   // [3C, T, H, W] (1×1: per position)
  // Keys and values cover the whole frame: gather them; queries stay local.
  Tensor kv_full = ctx.gather(qkv.narrow(C, 2 * C));  // [2C, T, Hf, Wf]
  const int64_t Sf = kv_full.dim(2) * kv_full.dim(3);
  Tensor q_t = Tensor::empty({S, C}, DType::kF32), k_t = Tensor::empty({Sf, C}, DType::kF32);
  Tensor v_t = Tensor::empty({Sf, C}, DType::kF32), o_t = Tensor::empty({S, C}, DType::kF32);
  Tensor attn = Tensor::empty({C, T, H, W}, DType::kF32);
  for (int64_t t = 0; t < T; ++t) {
    // Channel-major frame t of each part → token-major [S, C] for the attention kernel.
    Tensor q_c = Tensor::empty({C, S}, DType::kF32), k_c = Tensor::empty({C, Sf}, DType::kF32);
    Tensor v_c = Tensor::empty({C, Sf}, DType::kF32);
    for (int64_t c = 0; c < C; ++c) {
      std::memcpy(q_c.f32() + c * S, qkv.f32() + (c * T + t) * S, size_t(S) * sizeof(float));
      std::memcpy(k_c.f32() + c * Sf, kv_full.f32() + (c * T + t) * Sf, size_t(Sf) * sizeof(float));
      std::memcpy(v_c.f32() + c * Sf, kv_full.f32() + ((C + c) * T + t) * Sf, size_t(Sf) * sizeof(float));
    }
    transpose_cs(q_c.f32(), q_t.f32(), C, S);
    transpose_cs(k_c.f32(), k_t.f32(), C, Sf);
    transpose_cs(v_c.f32(), v_t.f32(), C, Sf);
    kern::attention_ref(q_t.f32(), k_t.f32(), v_t.f32(), o_t.f32(), nullptr, 1, S, Sf, 1, C, Sf,
                        1.0f / std::sqrt(float(C)));
    transpose_cs(o_t.f32(), q_c.f32(), S, C);  // [C, S]
    for (int64_t c = 0; c < C; ++c)
      std::memcpy(attn.f32() + (c * T + t) * S, q_c.f32() + c * S, size_t(S) * sizeof(float));
  }
  Tensor y = causal_conv(proj, attn, unused, ctx);  // [C, T, H, W]
  add_(y, x);
  return y;
}

VaeUpsampler VaeUpsampler::load(const WeightStore& ws, const std::string& p, int64_t dim, bool temporal) {
  VaeUpsampler u;
  u.temporal = temporal;
  if (temporal) u.time_conv = VaeConv::load(ws, p + ".time_conv", 2 * dim, dim, 3, 1, 1);
  u.resample = VaeConv::load(ws, p + ".resample.1", dim / 2, dim, 0, 3, 3);
  return u;
}

Tensor VaeUpsampler::forward(const Tensor& x, State& st, VaeSpatialContext& ctx) const {
  Tensor cur = x;  // [C, t, H, W]
  if (temporal) {
    if (!st.seen) {
      st.seen = true;  // first chunk: one frame in, one frame out
    } else {
      Tensor tc = causal_conv(time_conv, x, st.cache, ctx);  // [2C, t, H, W]
      cur = time_interleave2(tc);                             // [C, 2t, H, W]
    }
  }
  // Nearest ×2 then the 3×3 Conv2d, one frame at a time: the ×4-sized upsampled frame is the
  // largest activation of the decoder, so only one is alive.
  const int64_t frames = cur.dim(1), Co = resample.cout, H2 = 2 * cur.dim(2), W2 = 2 * cur.dim(3);
  Tensor out = Tensor::empty({Co, frames, H2, W2}, DType::kF32);  // [C/2, t', 2H, 2W]
  Tensor unused;
  for (int64_t f = 0; f < frames; ++f) {
    Tensor up = upsample_nearest2x(slice_time(cur, f, 1));  // [C, 1, 2H, 2W]
    Tensor y = causal_conv(resample, up, unused, ctx);      // [C/2, 1, 2H, 2W]
    for (int64_t c = 0; c < Co; ++c)
      std::memcpy(out.f32() + (c * frames + f) * H2 * W2, y.f32() + c * H2 * W2, size_t(H2 * W2) * sizeof(float));
  }
  return out;
}

}  // namespace vgen
