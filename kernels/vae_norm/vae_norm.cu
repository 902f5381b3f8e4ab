// Wan VAE channel RMS norm on the device (contract in vae_norm.cuh).
// Channels-last: one warp per position. With C % 8 == 0 and C <= 1024 (every Wan decoder width) the
// warp holds its row in registers (16-byte loads, one read); otherwise it reads the C channels twice
// (sum of squares, then the scaled output; the second read hits L1). The per-element math is a
// multiply by scale / ‖x‖ and SiLU through a correctly rounded reciprocal instead of two IEEE
// divisions (each a multi-instruction sequence), within 2 ulp of the reference's order of operations.
// Channels-first: one thread per position, the channel loop strides by S (coalesced over S).
#include <cmath>

#include "kernels/common/elem_io.cuh"
#include "kernels/vae_norm/vae_norm.cuh"

namespace vgen::kern {
namespace {

using dev::bf16;

__device__ __forceinline__ float norm_out(float v, float nrm, float scale, float g, bool silu) {
  float r = v / nrm * scale * g;  // the reference's order of operations
  if (silu) r = r / (1.0f + expf(-r));
  return r;
}

__device__ __forceinline__ float norm_out_mul(float v, float inv, float g, bool silu) {
  float r = v * inv * g;
  if (silu) r = r * __frcp_rn(1.0f + expf(-r));
  return r;
}

// The row of C <= 32 · 8 · NV channels in registers: lane l holds channels [8(32k + l), +8), k < NV.
template <typename TX, typename TY, int NV>
__global__ void rms_cl_reg_kernel(const TX* x, const float* __restrict__ gamma, TY* y, int64_t P, int64_t C,
                                  float scale, float eps, bool silu) {
  const int lane = threadIdx.x & 31;
  const int64_t wpb = blockDim.x >> 5;
  const int64_t step = int64_t(gridDim.x) * wpb;
  for (int64_t p = int64_t(blockIdx.x) * wpb + (threadIdx.x >> 5); p < P; p += step) {
    const TX* xr = x + p * C;
    TY* yr = y + p * C;
    float v[NV][8];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; ++k) {
      const int64_t i = (int64_t(k) * 32 + lane) * 8;
      if (i < C) {
        dev::load8<TX>(xr + i, v[k]);
#pragma unroll
        for (int j = 0; j < 8; ++j) ss += v[k][j] * v[k][j];
      }
    }
    const float inv = scale / fmaxf(sqrtf(dev::warp_sum(ss)), eps);
#pragma unroll
    for (int k = 0; k < NV; ++k) {
      const int64_t i = (int64_t(k) * 32 + lane) * 8;
      if (i < C) {
        float g[8];
        dev::load8<float>(gamma + i, g);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[k][j] = norm_out_mul(v[k][j], inv, g[j], silu);
        dev::store8<TY>(yr + i, v[k]);
      }
    }
  }
}

template <typename TX, typename TY, bool kVec>
__global__ void rms_cl_kernel(const TX* x, const float* __restrict__ gamma, TY* y, int64_t P, int64_t C, float scale,
                              float eps, bool silu) {
  const int lane = threadIdx.x & 31;
  const int64_t wpb = blockDim.x >> 5;
  const int64_t step = int64_t(gridDim.x) * wpb;
  for (int64_t p = int64_t(blockIdx.x) * wpb + (threadIdx.x >> 5); p < P; p += step) {
    const TX* xr = x + p * C;
    TY* yr = y + p * C;
    float ss = 0.0f;
    if constexpr (kVec) {
      for (int64_t i = int64_t(lane) * 8; i < C; i += 256) {
        float v[8];
        dev::load8<TX>(xr + i, v);
#pragma unroll
        for (int j = 0; j < 8; ++j) ss += v[j] * v[j];
      }
    } else {
      for (int64_t i = lane; i < C; i += 32) {
        const float v = dev::to_f(xr[i]);
        ss += v * v;
      }
    }
    const float inv = scale / fmaxf(sqrtf(dev::warp_sum(ss)), eps);
    if constexpr (kVec) {
      for (int64_t i = int64_t(lane) * 8; i < C; i += 256) {
        float v[8], g[8];
        dev::load8<TX>(xr + i, v);
        dev::load8<float>(gamma + i, g);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = norm_out_mul(v[j], inv, g[j], silu);
        dev::store8<TY>(yr + i, v);
      }
    } else {
      for (int64_t i = lane; i < C; i += 32)
        yr[i] = dev::from_f<TY>(norm_out_mul(dev::to_f(xr[i]), inv, gamma[i], silu));
    }
  }
}

template <typename TX, typename TY>
__global__ void rms_cf_kernel(const TX* x, const float* __restrict__ gamma, TY* y, int64_t N, int64_t C, int64_t S,
                              float scale, float eps, bool silu) {
  const int64_t total = N * S, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t n = i / S, s = i - n * S;
    const TX* xp = x + n * C * S + s;
    TY* yp = y + n * C * S + s;
    float ss = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      const float v = dev::to_f(xp[c * S]);
      ss += v * v;
    }
    const float nrm = fmaxf(sqrtf(ss), eps);
    for (int64_t c = 0; c < C; ++c) yp[c * S] = dev::from_f<TY>(norm_out(dev::to_f(xp[c * S]), nrm, scale, gamma[c], silu));
  }
}

template <typename TX, typename TY>
cudaError_t launch(const void* xv, const float* gamma, void* yv, int64_t N, int64_t C, int64_t S, bool silu,
                   VaeLayout layout, cudaStream_t stream, float eps) {
  const TX* x = static_cast<const TX*>(xv);
  TY* y = static_cast<TY*>(yv);
  const float scale = sqrtf(float(C));
  if (layout == VaeLayout::kChannelsFirst) {
    rms_cf_kernel<TX, TY><<<dev::grid_for(N * S, 256), 256, 0, stream>>>(x, gamma, y, N, C, S, scale, eps, silu);
  } else {
    const int64_t P = N * S;
    const unsigned grid = dev::grid_for(P * 32, 256);
    const bool vec = C % 8 == 0 && dev::aligned16(x) && dev::aligned16(y) && dev::aligned16(gamma);
    if (vec && C <= 256)
      rms_cl_reg_kernel<TX, TY, 1><<<grid, 256, 0, stream>>>(x, gamma, y, P, C, scale, eps, silu);
    else if (vec && C <= 512)
      rms_cl_reg_kernel<TX, TY, 2><<<grid, 256, 0, stream>>>(x, gamma, y, P, C, scale, eps, silu);
    else if (vec && C <= 1024)
      rms_cl_reg_kernel<TX, TY, 4><<<grid, 256, 0, stream>>>(x, gamma, y, P, C, scale, eps, silu);
    else if (vec)
      rms_cl_kernel<TX, TY, true><<<grid, 256, 0, stream>>>(x, gamma, y, P, C, scale, eps, silu);
    else
      rms_cl_kernel<TX, TY, false><<<grid, 256, 0, stream>>>(x, gamma, y, P, C, scale, eps, silu);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t vae_rms_norm(const void* x, FloatType x_type, const float* gamma, void* y, FloatType y_type, int64_t N,
                         int64_t C, int64_t S, bool silu, VaeLayout layout, cudaStream_t stream, float eps) {
  if (N < 0 || C < 0 || S < 0) return cudaErrorInvalidValue;
  if (N * S == 0 || C == 0) return cudaSuccess;
  if (!x || !y || !gamma) return cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(x_type, TX, {
    VGEN_DISPATCH_FB(y_type, TY, { return launch<TX, TY>(x, gamma, y, N, C, S, silu, layout, stream, eps); });
  });
  return cudaErrorInvalidValue;
}

}  // namespace vgen::kern
