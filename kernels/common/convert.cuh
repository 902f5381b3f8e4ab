// Device dtype conversions between f32, bf16 and f16 (round to nearest even, like kernels/common/bf16.h
// on the host; NaN stays NaN, though its payload may differ). Raw device pointers, launches on
// `stream`, returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

enum class FloatType : uint8_t { kF32, kBF16, kF16 };

// dst[i] = convert(src[i]) for i < n; src and dst must not overlap unless identical with equal types.
cudaError_t convert_float(const void* src, FloatType src_type, void* dst, FloatType dst_type, int64_t n,
                          cudaStream_t stream);

// Deterministic pseudo-random fill, uniform in [lo, hi) (a hash of (seed, index); for benchmarks
// and tests that need large non-trivial device data without a host copy).
cudaError_t fill_uniform(void* dst, FloatType type, int64_t n, uint64_t seed, float lo, float hi, cudaStream_t stream);

inline cudaError_t f32_to_bf16_device(const float* src, void* dst, int64_t n, cudaStream_t stream) {
  return convert_float(src, FloatType::kF32, dst, FloatType::kBF16, n, stream);
}
inline cudaError_t bf16_to_f32_device(const void* src, float* dst, int64_t n, cudaStream_t stream) {
  return convert_float(src, FloatType::kBF16, dst, FloatType::kF32, n, stream);
}

}  // namespace vgen::kern
