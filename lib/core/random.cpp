#include "core/random.h"

#include <cmath>

namespace vgen {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void randn_fill(float* out, int64_t n, uint64_t seed, int64_t offset) {
  const uint64_t key = splitmix64(seed);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  constexpr double k53 = 1.0 / 9007199254740992.0;  // 2^-53
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < n; ++j) {
    const int64_t idx = offset + j;
    const uint64_t pair = uint64_t(idx >> 1);
    // Two uniforms per pair: u1 in (0, 1] (log-safe), u2 in [0, 1).
    const uint64_t a = splitmix64(key + 0x9e3779b97f4a7c15ULL * (2 * pair + 1));
    const uint64_t b = splitmix64(key + 0x9e3779b97f4a7c15ULL * (2 * pair + 2));
    const double u1 = double((a >> 11) + 1) * k53;
    const double u2 = double(b >> 11) * k53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    out[j] = float((idx & 1) ? r * std::sin(kTwoPi * u2) : r * std::cos(kTwoPi * u2));
  }
}

Tensor randn(const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape, DType::kF32);
  randn_fill(t.f32(), t.numel(), seed, 0);
  return t;
}

}  // namespace vgen
