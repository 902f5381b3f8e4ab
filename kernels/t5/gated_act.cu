// T5 feed-forward activation on the device (contract in gated_act.cuh): a grid-stride loop over
// the elements; each element is read and written by one thread, so out may alias an input.
#include "kernels/common/elem_io.cuh"
#include "kernels/t5/gated_act.cuh"

namespace vgen::kern {
namespace {

template <typename T> __device__ __forceinline__ float r(float v) { return dev::round_as<T>(v); }

// act(x) as the value the activation module's output tensor holds (rounded into T).
template <typename T> __device__ __forceinline__ float apply(float x, int act) {
  switch (act) {
    case int(T5Act::kRelu): return x > 0.0f ? x : 0.0f;
    case int(T5Act::kGeluTanh): {
      const float k = 0.7978845608028654f;  // sqrt(2/π) as a float, as the reference
      if constexpr (sizeof(T) == 4) {
        const float inner = k * (x + 0.044715f * (x * x * x));
        return 0.5f * x * (1.0f + tanhf(inner));
      } else {
        // NewGELUActivation: 0.5 * x * (1 + tanh(k * (x + 0.044715 * pow(x, 3)))), each op a bf16 tensor
        // (pow as one rounded op, as CPU eager; CUDA eager rounds x·x first: at most an ulp apart).
        float c = r<T>(x * x * x);
        c = r<T>(0.044715f * c);
        c = r<T>(x + c);
        c = r<T>(k * c);
        c = r<T>(tanhf(c));
        c = r<T>(1.0f + c);
        const float hx = r<T>(0.5f * x);
        return r<T>(hx * c);
      }
    }
    case int(T5Act::kGeluErf): return r<T>(0.5f * x * (1.0f + erff(x * 0.7071067811865476f)));
    case int(T5Act::kSilu): return r<T>(x / (1.0f + expf(-x)));
  }
  return x;
}

template <typename T>
__global__ void gated_act_kernel(const T* gate, const T* lin, T* out, int64_t n, int act) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const float g = apply<T>(dev::to_f(gate[i]), act);
    out[i] = dev::from_f<T>(lin ? g * dev::to_f(lin[i]) : g);
  }
}

}  // namespace

cudaError_t t5_gated_act(const void* gate, const void* lin, void* out, FloatType type, int64_t n, T5Act act,
                         cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!gate || !out) return cudaErrorInvalidValue;
  if (act != T5Act::kRelu && act != T5Act::kGeluTanh && act != T5Act::kGeluErf && act != T5Act::kSilu)
    return cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(type, T, {
    gated_act_kernel<T><<<dev::grid_for(n, 256), 256, 0, stream>>>(static_cast<const T*>(gate),
                                                                   static_cast<const T*>(lin), static_cast<T*>(out),
                                                                   n, int(act));
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
