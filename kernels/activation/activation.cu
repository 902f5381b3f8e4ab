// Pointwise activations on the device (contracts in activation.cuh): chunks of 8 elements with
// 16-byte accesses when the pointers allow, scalar tail.
#include "kernels/activation/activation.cuh"
#include "kernels/common/elem_io.cuh"

namespace vgen::kern {
namespace {

enum ActOp : int { kGelu = 0, kSilu = 1, kGeluErf = 2, kQuickGelu = 3 };

template <int kOp> __device__ __forceinline__ float act(float v) {
  if constexpr (kOp == kGelu) {
    const float k = 0.7978845608028654f;  // sqrt(2/π)
    return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
  } else if constexpr (kOp == kGeluErf) {
    return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
  } else if constexpr (kOp == kQuickGelu) {
    return v / (1.0f + expf(-1.702f * v));
  } else {
    return v / (1.0f + expf(-v));
  }
}

template <typename TX, typename TY, int kOp>
__global__ void act_kernel(const TX* x, TY* y, int64_t n, bool vec) {
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, step = int64_t(gridDim.x) * blockDim.x;
  int64_t done = 0;
  if (vec) {
    const int64_t chunks = n / 8;
    for (int64_t c = tid; c < chunks; c += step) {
      float v[8];
      dev::load8<TX>(x + 8 * c, v);
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = act<kOp>(v[j]);
      dev::store8<TY>(y + 8 * c, v);
    }
    done = chunks * 8;
  }
  for (int64_t i = done + tid; i < n; i += step) y[i] = dev::from_f<TY>(act<kOp>(dev::to_f(x[i])));
}

template <int kOp>
cudaError_t launch(const void* x, FloatType xt, void* y, FloatType yt, int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const bool vec = dev::aligned16(x) && dev::aligned16(y);
  VGEN_DISPATCH_FB(xt, TX, {
    VGEN_DISPATCH_FB(yt, TY, {
      act_kernel<TX, TY, kOp><<<dev::grid_for(vec ? (n + 7) / 8 : n, 256), 256, 0, stream>>>(
          static_cast<const TX*>(x), static_cast<TY*>(y), n, vec);
      return cudaGetLastError();
    });
  });
}

}  // namespace

cudaError_t gelu_tanh(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream) {
  return launch<kGelu>(x, x_type, y, y_type, n, stream);
}

cudaError_t gelu_erf(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream) {
  return launch<kGeluErf>(x, x_type, y, y_type, n, stream);
}

cudaError_t quick_gelu(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream) {
  return launch<kQuickGelu>(x, x_type, y, y_type, n, stream);
}

cudaError_t silu(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream) {
  return launch<kSilu>(x, x_type, y, y_type, n, stream);
}

}  // namespace vgen::kern
