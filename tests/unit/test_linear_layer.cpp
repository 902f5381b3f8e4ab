// ops/linear_layer.h on the host: each op equals the unfused CPU ops it stands for, bit for bit
// (the plain and row-by-row GEMMs, the fp8 emulation with a held or a just-quantised weight, the
// activation after the GEMM, the residual add after it, the gate folded into the weights), and
// the quantised activation shared by several GEMMs is the device's alone (nullopt here).
#include <gtest/gtest.h>

#include <cstring>

#include "core/random.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/linear_layer.h"

namespace vgen {
namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

LinearWeights make_linear(int64_t N, int64_t K, uint64_t seed) {
  return {randn({N, K}, seed), randn({N}, seed + 1), Tensor(), Tensor()};
}

TEST(LinearLayer, PlainIsTheLinearOfItsRows) {
  const LinearWeights l = make_linear(7, 24, 1);
  const Tensor x = randn({2, 5, 24}, 3);  // [B, S, K]
  for (LinearRows rows : {LinearRows::kBatched, LinearRows::kRowByRow}) {
    LinearMode m;
    m.rows = rows;
    EXPECT_TRUE(same_bits(linear(l, x, m), linear(x, l.w, l.b, rows)));
  }
  Tensor want = linear(x, l.w, l.b);
  gelu_tanh_(want);
  EXPECT_TRUE(same_bits(linear(l, x, LinearMode{}, Activation::kGeluTanh), want)) << "the GELU after the GEMM";
}

TEST(LinearLayer, Fp8IsTheHostEmulation) {
  for (GemmFormat f : {GemmFormat::kE4m3, GemmFormat::kInt8}) {
    LinearWeights l = make_linear(9, 32, 4);
    const Tensor x = randn({3, 32}, 6);
    const Fp8Weight q = fp8_quantize_weight(l.w, f);
    const Tensor want = fp8_linear_host(x, q, l.b);
    LinearMode m{true, f};
    EXPECT_TRUE(same_bits(linear(l, x, m), want)) << "quantised at its use, " << gemm_format_name(f);
    l.w8 = q.w8;
    l.w_scale = q.scale;
    EXPECT_TRUE(same_bits(linear(l, x, m), want)) << "the held copy, " << gemm_format_name(f);
    EXPECT_FALSE(quantize_activation_shared(x, f).has_value()) << "the host quantises at each GEMM";
  }
}

TEST(LinearLayer, LinearAddIsTheLinearThenTheAdd) {
  const LinearWeights l = make_linear(6, 10, 7);
  const Tensor x = randn({4, 10}, 9), y0 = randn({4, 6}, 10);
  Tensor got = y0.clone(), want = y0.clone();
  linear_add_(got, l, x, LinearMode{});
  add_inplace(want, linear(x, l.w, l.b));
  EXPECT_TRUE(same_bits(got, want));
}

TEST(LinearLayer, FoldGateScalesTheRows) {
  const int64_t N = 5, K = 8;
  LinearWeights l = make_linear(N, K, 11);
  const Tensor g = randn({N}, 13);
  const LinearWeights plain = fold_gate(l, g, LinearMode{});
  for (int64_t n = 0; n < N; ++n) {
    EXPECT_EQ(plain.b.f32()[n], l.b.f32()[n] * g.f32()[n]);
    for (int64_t k = 0; k < K; ++k) EXPECT_EQ(plain.w.f32()[n * K + k], l.w.f32()[n * K + k] * g.f32()[n]);
  }
  const Fp8Weight q = fp8_quantize_weight(l.w, GemmFormat::kE4m3);
  l.w8 = q.w8;
  l.w_scale = q.scale;
  const LinearWeights fp8 = fold_gate(l, g, LinearMode{true});
  EXPECT_TRUE(same_bits(fp8.w8, q.w8)) << "the quantised weight is shared";
  for (int64_t n = 0; n < N; ++n) {
    EXPECT_EQ(fp8.w_scale.f32()[n], q.scale.f32()[n] * g.f32()[n]);
    EXPECT_EQ(fp8.b.f32()[n], l.b.f32()[n] * g.f32()[n]);
  }
}

TEST(LinearLayer, AFreedWeightIsAnError) {
  LinearWeights l = make_linear(3, 4, 14);
  l.w = Tensor();
  EXPECT_ANY_THROW(linear(l, randn({2, 4}, 15), LinearMode{}));
}

}  // namespace
}  // namespace vgen
