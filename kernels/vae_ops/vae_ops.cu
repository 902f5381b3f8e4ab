// Wan VAE elementwise / layout kernels (contracts in vae_ops.cuh). Grid-stride loops; 16-byte
// vectors (8 elements) where the channel count and the pointers allow it.
#include <cmath>

#include "kernels/common/elem_io.cuh"
#include "kernels/vae_ops/vae_ops.cuh"

namespace vgen::kern {
namespace {

using dev::bf16;

constexpr int kThreads = 256;

template <typename T>
__global__ void silu_kernel(const T* x, T* y, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const float v = dev::to_f(x[i]);
    y[i] = dev::from_f<T>(v / (1.0f + expf(-v)));
  }
}

template <typename T>
__global__ void clamp_kernel(const T* x, T* y, int64_t n, float lo, float hi) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    y[i] = dev::from_f<T>(fminf(fmaxf(dev::to_f(x[i]), lo), hi));
}

template <typename T, bool kVec>
__global__ void add_kernel(T* y, const T* x, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  if constexpr (kVec) {
    const int64_t nv = n / 8;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nv; i += step) {
      float a[8], b[8];
      dev::load8<T>(y + i * 8, a);
      dev::load8<T>(x + i * 8, b);
#pragma unroll
      for (int j = 0; j < 8; ++j) a[j] += b[j];
      dev::store8<T>(y + i * 8, a);
    }
    for (int64_t i = nv * 8 + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
      y[i] = dev::from_f<T>(dev::to_f(y[i]) + dev::to_f(x[i]));
  } else {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
      y[i] = dev::from_f<T>(dev::to_f(y[i]) + dev::to_f(x[i]));
  }
}

template <typename T>
__global__ void interleave_cl_kernel(const T* x, T* y, int64_t C, int64_t T2, int64_t S) {
  // y [2T, S, C] from x [T, S, 2C]
  const int64_t total = T2 * S * C, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t c = i % C, r = i / C, s = r % S, f = r / S;  // f = 2t + k
    const int64_t t = f >> 1, k = f & 1;
    y[i] = x[(t * S + s) * 2 * C + k * C + c];
  }
}

template <typename T>
__global__ void interleave_cf_kernel(const T* x, T* y, int64_t C, int64_t T1, int64_t S) {
  // y [C, 2T, S] from x [2, C, T, S]
  const int64_t total = C * 2 * T1 * S, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t s = i % S, r = i / S, f = r % (2 * T1), c = r / (2 * T1);
    const int64_t t = f >> 1, k = f & 1;
    y[i] = x[((k * C + c) * T1 + t) * S + s];
  }
}

template <typename T>
__global__ void to_cf_kernel(const T* x, float* y, int64_t T1, int64_t S, int64_t Cx, int64_t C, int64_t c_stride,
                             float lo, float hi) {
  const int64_t total = T1 * S, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const T* src = x + i * Cx;  // i = t·S + s
    for (int64_t c = 0; c < C; ++c) y[c * c_stride + i] = fminf(fmaxf(dev::to_f(src[c]), lo), hi);
  }
}

}  // namespace

cudaError_t vae_silu(const void* x, void* y, FloatType type, int64_t n, cudaStream_t stream) {
  if (n <= 0) return n == 0 ? cudaSuccess : cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(type, T, {
    silu_kernel<T><<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t vae_clamp(const void* x, void* y, FloatType type, int64_t n, float lo, float hi, cudaStream_t stream) {
  if (n <= 0) return n == 0 ? cudaSuccess : cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(type, T, {
    clamp_kernel<T><<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                                         n, lo, hi);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t vae_add_inplace(void* y, const void* x, FloatType type, int64_t n, cudaStream_t stream) {
  if (n <= 0) return n == 0 ? cudaSuccess : cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(type, T, {
    T* ys = static_cast<T*>(y);
    const T* xs = static_cast<const T*>(x);
    if (dev::aligned16(ys) && dev::aligned16(xs) && n >= 8)
      add_kernel<T, true><<<dev::grid_for(n / 8, kThreads), kThreads, 0, stream>>>(ys, xs, n);
    else
      add_kernel<T, false><<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(ys, xs, n);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t vae_time_interleave2(const void* x, void* y, FloatType type, int64_t C, int64_t T, int64_t S,
                                 bool channels_last, cudaStream_t stream) {
  if (C < 0 || T < 0 || S < 0) return cudaErrorInvalidValue;
  const int64_t n = 2 * C * T * S;
  if (n == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, TT, {
    const TT* xs = static_cast<const TT*>(x);
    TT* ys = static_cast<TT*>(y);
    if (channels_last)
      interleave_cl_kernel<TT><<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(xs, ys, C, 2 * T, S);
    else
      interleave_cf_kernel<TT><<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(xs, ys, C, T, S);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t vae_to_channels_first(const void* x, FloatType x_type, float* y, int64_t T, int64_t S, int64_t Cx,
                                  int64_t C, int64_t c_stride, float lo, float hi, cudaStream_t stream) {
  if (T < 0 || S < 0 || C < 0 || C > Cx || c_stride < T * S) return cudaErrorInvalidValue;
  if (T * S * C == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(x_type, TT, {
    to_cf_kernel<TT><<<dev::grid_for(T * S, kThreads), kThreads, 0, stream>>>(static_cast<const TT*>(x), y, T, S, Cx, C,
                                                                              c_stride, lo, hi);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

}  // namespace vgen::kern
