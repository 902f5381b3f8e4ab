// Helpers of the GPU benchmarks (tests/bench/*_bench.cpp, label bench): random bf16 device data
// and the median of repeated timings with CUDA events on the compute stream.
#pragma once
#include <algorithm>
#include <functional>
#include <vector>

#include "core/cuda_stream.h"
#include "core/tensor.h"
#include "kernels/common/convert.cuh"

namespace vgen::bench {

// Uniform in [-amp, amp), bf16, on the device.
inline Tensor random_bf16(const Shape& s, uint64_t seed, float amp = 1.0f) {
  Tensor t = Tensor::empty(s, DType::kBF16, Device::kCUDA);
  VGEN_CUDA_CHECK(kern::fill_uniform(t.raw(), kern::FloatType::kBF16, t.numel(), seed, -amp, amp, compute_stream()));
  return t;
}

// Median milliseconds of `reps` runs of fn after `warmup` untimed ones.
inline double median_ms(const std::function<void()>& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  CudaEventTimer t;
  for (int i = 0; i < reps; ++i) {
    t.start();
    fn();
    t.stop();
    ms.push_back(t.seconds() * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace vgen::bench
