// Wan VAE encoder layout kernels (contracts in vae_down.cuh). Grid-stride loops, one thread per
// output element (channels fastest, so neighbouring threads write neighbouring addresses).
#include "kernels/common/elem_io.cuh"
#include "kernels/vae_down/vae_down.cuh"

namespace vgen::kern {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void patchify_kernel(const float* x, T* y, int64_t C, int64_t T_, int64_t H, int64_t W, int64_t p) {
  const int64_t h = H / p, w = W / p, Cp = C * p * p, total = T_ * h * w * Cp;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t k = i % Cp, pix = i / Cp;  // pix = (t·h + hi)·w + wi
    const int64_t wi = pix % w, th = pix / w, hi = th % h, t = th / h;
    const int64_t r = k % p, q = (k / p) % p, c = k / (p * p);
    y[i] = dev::from_f<T>(x[((c * T_ + t) * H + hi * p + r) * W + wi * p + q]);
  }
}

template <typename T>
__global__ void avg_down_add_kernel(const T* x, T* y, int64_t Cin, int64_t T_, int64_t H, int64_t W, int64_t Cout,
                                    int64_t ft, int64_t fs) {
  const int64_t To = (T_ + ft - 1) / ft, pad_t = To * ft - T_, Ho = H / fs, Wo = W / fs;
  const int64_t factor = ft * fs * fs, g = Cin * factor / Cout, total = To * Ho * Wo * Cout;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t o = i % Cout, pix = i / Cout;  // pix = (t·Ho + hi)·Wo + wi
    const int64_t wi = pix % Wo, th = pix / Wo, hi = th % Ho, t = th / Ho;
    float sum = 0.0f;
    for (int64_t k = o * g; k < (o + 1) * g; ++k) {
      const int64_t c = k / factor, rem = k % factor, a = rem / (fs * fs), pq = rem % (fs * fs);
      const int64_t ti = t * ft + a - pad_t;
      if (ti >= 0) sum += dev::to_f(x[((ti * H + hi * fs + pq / fs) * W + wi * fs + pq % fs) * Cin + c]);
    }
    y[i] = dev::from_f<T>(dev::to_f(y[i]) + sum / float(g));
  }
}

}  // namespace

cudaError_t vae_patchify(const float* x, void* y, FloatType type, int64_t C, int64_t T, int64_t H, int64_t W,
                         int64_t p, cudaStream_t stream) {
  if (p < 1 || H % p != 0 || W % p != 0) return cudaErrorInvalidValue;
  const int64_t total = C * T * H * W;
  if (total == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, E, {
    patchify_kernel<E><<<dev::grid_for(total, kThreads), kThreads, 0, stream>>>(x, static_cast<E*>(y), C, T, H, W, p);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t vae_avg_down_add(const void* x, void* y, FloatType type, int64_t Cin, int64_t T, int64_t H, int64_t W,
                             int64_t Cout, int64_t ft, int64_t fs, cudaStream_t stream) {
  if (ft < 1 || fs < 1 || Cout < 1 || H % fs != 0 || W % fs != 0 || (Cin * ft * fs * fs) % Cout != 0)
    return cudaErrorInvalidValue;
  const int64_t total = (T + ft - 1) / ft * (H / fs) * (W / fs) * Cout;
  if (total == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, E, {
    avg_down_add_kernel<E><<<dev::grid_for(total, kThreads), kThreads, 0, stream>>>(
        static_cast<const E*>(x), static_cast<E*>(y), Cin, T, H, W, Cout, ft, fs);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

}  // namespace vgen::kern
