// Wan 2.2 VAE layout kernels (contracts in vae_up.cuh). Grid-stride loops; the DupUp3D add moves
// 16-byte vectors (8 channels) of the upsampled output where the channel counts and pointers allow.
#include "kernels/common/elem_io.cuh"
#include "kernels/vae_up/vae_up.cuh"

namespace vgen::kern {
namespace {

constexpr int kThreads = 256;

// One thread per V consecutive output channels of one output pixel.
template <typename T, int V>
__global__ void dup_up_add_kernel(T* y, const T* x, int64_t Tn, int64_t H, int64_t W, int64_t Cin, int64_t Cout,
                                  int64_t Cy, int64_t ft, int64_t fs, int64_t phase, int64_t r) {
  const int64_t CV = Cout / V, Ho = fs * H, Wo = fs * W, total = Tn * Ho * Wo * CV;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t cv = i % CV, pix = i / CV;  // pix = (t·Ho + yo)·Wo + xo
    const int64_t xo = pix % Wo, ty = pix / Wo, yo = ty % Ho, t = ty / Ho;
    const int64_t b = yo % fs, d = xo % fs;
    const T* src = x + ((t * H + yo / fs) * W + xo / fs) * Cin;
    T* dst = y + pix * Cy + cv * V;
    float v[V];
    if constexpr (V == 8)
      dev::load8<T>(dst, v);
    else
      v[0] = dev::to_f(dst[0]);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const int64_t o = cv * V + k, j = ((o * ft + phase) * fs + b) * fs + d;
      v[k] += dev::to_f(src[j / r]);
    }
    if constexpr (V == 8)
      dev::store8<T>(dst, v);
    else
      dst[0] = dev::from_f<T>(v[0]);
  }
}

// The sub-pixel upsampler's shuffle with the DupUp3D add (fs = 2) in one pass: the upsampled
// frame is written once instead of written, read back and written again. One thread per V
// consecutive output channels of one output pixel; the same fp32 sum and rounding as the two passes.
template <typename T, int V>
__global__ void shuffle_dup_up_kernel(const T* r, const T* x, T* y, int64_t Tn, int64_t H, int64_t W, int64_t Cr,
                                      int64_t C, int64_t Cin, int64_t ft, int64_t phase, int64_t rep) {
  const int64_t CV = C / V, Ho = 2 * H, Wo = 2 * W, total = Tn * Ho * Wo * CV;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t cv = e % CV, pix = e / CV;  // pix = (t·Ho + yo)·Wo + xo
    const int64_t xo = pix % Wo, ty = pix / Wo, yo = ty % Ho, t = ty / Ho;
    const int64_t a = yo % 2, b = xo % 2, i = yo / 2, j = xo / 2;
    const T* src = r + ((t * (H + 1) + i + a) * (W + 1) + j + b) * Cr + (2 * a + b) * C + cv * V;
    const T* xs = x + ((t * H + i) * W + j) * Cin;
    T* dst = y + pix * C + cv * V;
    float v[V];
    if constexpr (V == 8)
      dev::load8<T>(src, v);
    else
      v[0] = dev::to_f(src[0]);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const int64_t o = cv * V + k, jj = ((o * ft + phase) * 2 + a) * 2 + b;
      v[k] += dev::to_f(xs[jj / rep]);
    }
    if constexpr (V == 8)
      dev::store8<T>(dst, v);
    else
      dst[0] = dev::from_f<T>(v[0]);
  }
}

// One thread per output element, in the output's channels-first order (coalesced writes).
template <typename T>
__global__ void unpatchify_kernel(const T* x, float* y, int64_t Tn, int64_t H, int64_t W, int64_t Cx, int64_t C,
                                  int64_t p, int64_t c_stride, float lo, float hi) {
  const int64_t Ho = p * H, Wo = p * W, per_c = Tn * Ho * Wo, total = C * per_c;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t c = i / per_c, rest = i % per_c;
    const int64_t xo = rest % Wo, ty = rest / Wo, yo = ty % Ho, t = ty / Ho;
    const int64_t ch = (c * p + xo % p) * p + yo % p;
    const float v = dev::to_f(x[((t * H + yo / p) * W + xo / p) * Cx + ch]);
    y[c * c_stride + rest] = fminf(fmaxf(v, lo), hi);
  }
}

}  // namespace

cudaError_t vae_dup_up_add(void* y, const void* x, FloatType type, int64_t T, int64_t H, int64_t W, int64_t Cin,
                           int64_t Cout, int64_t Cy, int64_t ft, int64_t fs, int64_t phase, cudaStream_t stream) {
  if (T < 0 || H < 0 || W < 0 || Cin < 1 || Cout < 0 || Cy < Cout || ft < 1 || fs < 1 || phase < 0 || phase >= ft ||
      (Cout * ft * fs * fs) % Cin != 0)
    return cudaErrorInvalidValue;
  const int64_t r = Cout * ft * fs * fs / Cin;
  if (T * H * W * Cout == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, TT, {
    TT* ys = static_cast<TT*>(y);
    const TT* xs = static_cast<const TT*>(x);
    const int64_t px = T * fs * H * fs * W;
    if (Cout % 8 == 0 && Cy % 8 == 0 && dev::aligned16(ys))
      dup_up_add_kernel<TT, 8><<<dev::grid_for(px * (Cout / 8), kThreads), kThreads, 0, stream>>>(
          ys, xs, T, H, W, Cin, Cout, Cy, ft, fs, phase, r);
    else
      dup_up_add_kernel<TT, 1><<<dev::grid_for(px * Cout, kThreads), kThreads, 0, stream>>>(ys, xs, T, H, W, Cin, Cout,
                                                                                            Cy, ft, fs, phase, r);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t vae_shuffle_dup_up(const void* r, const void* x, void* y, FloatType type, int64_t T, int64_t H, int64_t W,
                               int64_t Cr, int64_t C, int64_t Cin, int64_t ft, int64_t phase, cudaStream_t stream) {
  if (T < 0 || H < 0 || W < 0 || C < 0 || Cr < 4 * C || Cin < 1 || ft < 1 || phase < 0 || phase >= ft ||
      (C * ft * 4) % Cin != 0)
    return cudaErrorInvalidValue;
  const int64_t rep = C * ft * 4 / Cin, px = T * 4 * H * W;
  if (px * C == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, TT, {
    const TT* rs = static_cast<const TT*>(r);
    const TT* xs = static_cast<const TT*>(x);
    TT* ys = static_cast<TT*>(y);
    if (C % 8 == 0 && Cr % 8 == 0 && dev::aligned16(rs) && dev::aligned16(ys))
      shuffle_dup_up_kernel<TT, 8><<<dev::grid_for(px * (C / 8), kThreads), kThreads, 0, stream>>>(
          rs, xs, ys, T, H, W, Cr, C, Cin, ft, phase, rep);
    else
      shuffle_dup_up_kernel<TT, 1><<<dev::grid_for(px * C, kThreads), kThreads, 0, stream>>>(rs, xs, ys, T, H, W, Cr,
                                                                                          C, Cin, ft, phase, rep);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t vae_unpatchify_to_channels_first(const void* x, FloatType x_type, float* y, int64_t T, int64_t H,
                                             int64_t W, int64_t Cx, int64_t C, int64_t p, int64_t c_stride, float lo,
                                             float hi, cudaStream_t stream) {
  if (T < 0 || H < 0 || W < 0 || C < 0 || p < 1 || C * p * p > Cx || c_stride < T * p * p * H * W)
    return cudaErrorInvalidValue;
  const int64_t n = C * T * p * p * H * W;
  if (n == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(x_type, TT, {
    unpatchify_kernel<TT><<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const TT*>(x), y, T, H, W,
                                                                               Cx, C, p, c_stride, lo, hi);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

}  // namespace vgen::kern
