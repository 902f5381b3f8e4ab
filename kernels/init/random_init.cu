// Hash-based normal / constant fills on the device (contract in random_init.cuh).
#include "kernels/common/elem_io.cuh"
#include "kernels/init/random_init.cuh"

namespace vgen::kern {
namespace {

__device__ __forceinline__ uint64_t mix64(uint64_t z) {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void normal_kernel(T* dst, int64_t n, uint64_t seed, float mean, float std) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + uint64_t(i));
    // Two 24-bit uniforms; u1 in (0, 1] so the log is finite.
    const float u1 = (float((h >> 40) & 0xffffff) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = float((h >> 8) & 0xffffff) * (1.0f / 16777216.0f);
    const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    dst[i] = dev::from_f<T>(mean + std * z);
  }
}

template <typename T>
__global__ void constant_kernel(T* dst, int64_t n, float value) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = dev::from_f<T>(value);
}

}  // namespace

cudaError_t fill_normal(void* dst, FloatType type, int64_t n, uint64_t seed, float mean, float std,
                        cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, T, {
    normal_kernel<T><<<dev::grid_for(n, 256), 256, 0, stream>>>(static_cast<T*>(dst), n, seed, mean, std);
    return cudaGetLastError();
  });
}

cudaError_t fill_constant(void* dst, FloatType type, int64_t n, float value, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, T, {
    constant_kernel<T><<<dev::grid_for(n, 256), 256, 0, stream>>>(static_cast<T*>(dst), n, value);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
