// Helpers shared by the gpu-labelled unit tests (test_*_gpu.cpp). The only allowed skip is the
// absence of a CUDA device (or of the CUDA backend in this build).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "core/tensor.h"
#include "kernels/common/bf16.h"

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>

#include "kernels/attention/attention_fp8.cuh"
#include "kernels/common/convert.cuh"
#endif

#define VGEN_REQUIRE_GPU()                                                 \
  do {                                                                     \
    if (::vgen::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

// The one test of a gpu test file built without the CUDA backend: ctest reports the file as
// skipped (exit 77 through tests/skip_status.sh), never as passed.
#define VGEN_GPU_TESTS_NEED_CUDA(Suite) \
  TEST(Suite, NoCudaBackend) { GTEST_SKIP() << "no CUDA device (built without the CUDA backend)"; }

namespace vgen::testing {

// The bits of a float, to compare results bit for bit.
inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline std::vector<float> random_vec(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Values as a bf16 store would leave them (inputs of bf16 kernels are exactly these).
inline std::vector<float> rounded_bf16(std::vector<float> v) {
  for (auto& x : v) x = kern::round_bf16(x);
  return v;
}

inline Tensor device_tensor(const std::vector<float>& v, const Shape& s, DType dt) {
  return Tensor::from_vector(v, s).to(dt).to(Device::kCUDA);
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const double kUlp = std::ldexp(1.0, -8);  // allowed error per bf16 rounding, relative

// A device tensor of NaN: an element a kernel leaves unwritten fails the comparison.
inline Tensor poisoned(const Shape& s, DType dt) {
  return device_tensor(std::vector<float>(size_t(shape_numel(s)), kNaN), s, dt);
}

// A hash of (i, seed) as a float in [-1, 1): cheap random data for large tensors.
inline float hash_uniform(uint64_t i, uint64_t seed) {
  uint64_t z = i + (seed + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(int64_t(z >> 40) - (int64_t(1) << 23)) * (1.0f / float(1 << 23));
}

// Inputs of a dt kernel: bf16-exact values for bf16, unchanged for f32.
inline std::vector<float> maybe_round(std::vector<float> v, DType dt) {
  return dt == DType::kBF16 ? rounded_bf16(v) : v;
}

inline std::vector<float> host_f32(const Tensor& t) {
  Tensor h = t.to(Device::kCPU).to(DType::kF32);
  std::vector<float> v(size_t(h.numel()));
  if (!v.empty()) std::memcpy(v.data(), h.raw(), v.size() * sizeof(float));
  return v;
}

// ‖out − ref‖ / ‖ref‖ over host f32 copies (any device, any float dtype); infinite when out has a
// non-finite value.
inline double rel_l2(const Tensor& out, const Tensor& ref) {
  const std::vector<float> o = host_f32(out), r = host_f32(ref);
  EXPECT_EQ(o.size(), r.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < o.size() && i < r.size(); ++i) {
    if (!std::isfinite(o[i])) return INFINITY;
    num += (double(o[i]) - r[i]) * (double(o[i]) - r[i]);
    den += double(r[i]) * r[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1.0));
}

#ifdef VGEN_WITH_CUDA
inline kern::FloatType ft(DType dt) { return dt == DType::kF32 ? kern::FloatType::kF32 : kern::FloatType::kBF16; }

inline void sync_stream() { VGEN_CUDA_CHECK(cudaStreamSynchronize(compute_stream())); }

// fp32 data as an F32 device tensor (f32() checks the dtype); empty data gives one element.
inline Tensor upload_f32(const std::vector<float>& v) {
  return Tensor::from_vector(v, {int64_t(v.size() ? v.size() : 1)}).to(Device::kCUDA);
}

// Raw bytes as a U8 device tensor (at least one byte).
inline Tensor upload(const void* p, size_t bytes) {
  Tensor h = Tensor::empty({int64_t(bytes ? bytes : 1)}, DType::kU8);
  if (bytes) std::memcpy(h.raw(), p, bytes);
  return h.to(Device::kCUDA);
}

// n values of T from a device tensor, starting byte_offset bytes in (after the compute stream).
template <typename T>
std::vector<T> download(const Tensor& d, size_t n, size_t byte_offset = 0) {
  sync_stream();
  Tensor h = d.to(Device::kCPU);
  std::vector<T> v(n);
  if (n) std::memcpy(v.data(), static_cast<const char*>(h.raw()) + byte_offset, n * sizeof(T));
  return v;
}
#endif

// |got − ref| ≤ tol(i) for every element; NaN fails.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& ref,
                         const std::function<double(size_t)>& tol, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double t = tol(i);
    if (!(std::fabs(double(got[i]) - ref[i]) <= t) && ++bad <= 5)
      ADD_FAILURE() << what << ": element " << i << " = " << got[i] << ", expected " << ref[i] << " ± " << t;
  }
}


#ifdef VGEN_WITH_CUDA
// The FP8 tests on a GPU without the FP8 kernel (not sm_90): what holds there is that the kernel
// refuses (cudaErrorNotSupported, nothing launched), never a silent bf16 fallback; false then,
// and the caller returns after that check instead of skipping.
inline bool fp8_runs_here() {
  if (kern::attention_fp8_available()) return true;
  kern::AttnArgs a;
  int dummy = 0;
  a.q = a.k = a.v = &dummy, a.out = &dummy;
  a.B = a.Sq = a.Skv = a.H = 1, a.D = 128, a.num_valid_kv = 1, a.scale = 0.1f;
  EXPECT_EQ(kern::attention_fwd_fp8(a, nullptr, 0, nullptr), cudaErrorNotSupported)
      << "a GPU without the FP8 kernel must refuse it";
  return false;
}
#endif
}  // namespace vgen::testing
