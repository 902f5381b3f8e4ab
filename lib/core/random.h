// Deterministic Gaussian noise: a counter-based generator (splitmix64 stream + Box-Muller), so
// element i of a seed's stream depends only on (seed, i) — identical on every rank, thread count
// and device, and any slice can be generated on its own.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace vgen {

// out[j] = element (offset + j) of the standard normal stream of `seed`.
void randn_fill(float* out, int64_t n, uint64_t seed, int64_t offset = 0);
// A host f32 tensor of standard normal samples.
Tensor randn(const Shape& shape, uint64_t seed);

// splitmix64 finaliser (exposed for tests and derived seeds).
uint64_t splitmix64(uint64_t x);

}  // namespace vgen
