// The residual norms of ops/norm.h and ops/norm_fp8.h on the host: the residual update and then
// the norm, bit for bit as the two ops (gated, plain, none), fused or not; the norms into a
// quantised GEMM input are the device's alone (nullopt here, x untouched).
#include <gtest/gtest.h>

#include <cstring>

#include "core/random.h"
#include "ops/elementwise.h"
#include "ops/norm.h"
#include "ops/norm_fp8.h"

namespace vgen {
namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

constexpr float kEps = 1e-6f;

TEST(ResidualNorm, ModulateIsTheResidualThenTheNorm) {
  const int64_t B = 2, S = 5, D = 24;
  const Tensor x0 = randn({B, S, D}, 1), y = randn({B, S, D}, 2);
  const Tensor gate_mod = randn({B, 6, D}, 3), mod = randn({B, 6, D}, 4);
  for (bool fused : {true, false})
    for (int gate : {5, -1}) {
      Tensor want_x = x0.clone();
      if (gate < 0) add_inplace(want_x, y);
      else gated_residual_(want_x, y, gate_mod, gate);
      const Tensor want = layer_norm_modulate(want_x, mod, 0, 1, kEps);
      Tensor x = x0.clone();
      const Tensor got = residual_layer_norm_modulate(x, y, gate_mod, gate, mod, 0, 1, kEps, fused);
      EXPECT_TRUE(same_bits(got, want)) << "gate " << gate << " fused " << fused;
      EXPECT_TRUE(same_bits(x, want_x)) << "x updated, gate " << gate;
    }
  Tensor x = x0.clone();
  EXPECT_TRUE(same_bits(residual_layer_norm_modulate(x, Tensor(), Tensor(), 5, mod, 3, 4, kEps),
                        layer_norm_modulate(x0, mod, 3, 4, kEps)));
  EXPECT_TRUE(same_bits(x, x0)) << "no residual: x untouched";
}

TEST(ResidualNorm, AffineIsTheResidualThenTheNorm) {
  const int64_t B = 1, S = 7, D = 16;
  const Tensor x0 = randn({B, S, D}, 5), y = randn({B, S, D}, 6), gate_mod = randn({B, 6, D}, 7);
  const Tensor w = randn({D}, 8), b = randn({D}, 9);
  Tensor want_x = x0.clone();
  gated_residual_(want_x, y, gate_mod, 2);
  Tensor x = x0.clone();
  EXPECT_TRUE(same_bits(residual_layer_norm(x, y, gate_mod, 2, w, b, kEps), layer_norm(want_x, w, b, kEps)));
  EXPECT_TRUE(same_bits(x, want_x));
}

TEST(ResidualNorm, QuantisedInputIsTheDevicesAlone) {
  const Tensor x0 = randn({1, 4, 32}, 10), y = randn({1, 4, 32}, 11), mod = randn({1, 6, 32}, 12);
  Tensor x = x0.clone();
  for (GemmFormat f : {GemmFormat::kE4m3, GemmFormat::kInt8}) {
    EXPECT_FALSE(layer_norm_fp8(x, Tensor(), Tensor(), kEps, f).has_value());
    EXPECT_FALSE(residual_layer_norm_modulate_fp8(x, y, mod, 5, mod, 0, 1, kEps, f).has_value());
    EXPECT_FALSE(residual_layer_norm_modulate_fp8(x, Tensor(), Tensor(), -1, mod, 3, 4, kEps, f).has_value());
  }
  EXPECT_TRUE(same_bits(x, x0)) << "x untouched";
}

}  // namespace
}  // namespace vgen
