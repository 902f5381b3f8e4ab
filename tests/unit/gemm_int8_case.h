// A random INT8 W8A8 linear problem on the host, shared by the INT8 GEMM's CPU and GPU tests
// (test_gemm_int8.cpp, test_gemm_int8_gpu.cpp): int8 x8 [M,K] and w8 [N,K] in [−127, 127], positive
// scales around 1e-3, a bf16 bias in ±0.5 and a bf16 residual [M,N] in ±1, all from one seed.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/common/bf16.h"

namespace vgen::testing {

struct Int8GemmCase {
  int64_t M = 0, N = 0, K = 0;
  std::vector<int8_t> x8, w8;
  std::vector<float> sx, sw;
  std::vector<uint16_t> bias, res;  // bf16 bits
};

inline Int8GemmCase make_int8_gemm_case(int64_t M, int64_t N, int64_t K, uint32_t seed) {
  Int8GemmCase c;
  c.M = M, c.N = N, c.K = K;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> i8(-127, 127);
  std::uniform_real_distribution<float> scale(0.5e-3f, 1.5e-3f), u(-1.0f, 1.0f);
  c.x8.resize(size_t(M * K)), c.w8.resize(size_t(N * K));
  for (auto& v : c.x8) v = int8_t(i8(rng));
  for (auto& v : c.w8) v = int8_t(i8(rng));
  for (int64_t m = 0; m < M; ++m) c.sx.push_back(scale(rng));
  for (int64_t n = 0; n < N; ++n) c.sw.push_back(scale(rng));
  for (int64_t n = 0; n < N; ++n) c.bias.push_back(kern::f32_to_bf16(0.5f * u(rng)));
  for (int64_t i = 0; i < M * N; ++i) c.res.push_back(kern::f32_to_bf16(u(rng)));
  return c;
}

}  // namespace vgen::testing
