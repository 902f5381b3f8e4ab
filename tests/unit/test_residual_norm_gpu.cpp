// The residual norms of ops/norm.h on the device, fused (one pass) and as two ops, against their
// CPU fallback; and those of ops/norm_fp8.h, whose CPU fallback is none (nullopt), against the
// device's norm followed by the shared quantisation, bit for bit.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include "ops/linear_layer.h"
#include "ops/norm.h"
#include "ops/norm_fp8.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

constexpr int64_t B = 2, S = 9, D = 512;  // a width with a register shape (the fp8 norms)
constexpr float kEps = 1e-6f;

struct Pair {
  Tensor host, dev;
};

Pair make(const Shape& s, DType dt, uint32_t seed, float scale = 1.0f) {
  std::vector<float> v = random_vec(size_t(shape_numel(s)), seed);
  for (float& f : v) f *= scale;
  v = maybe_round(v, dt);
  return {Tensor::from_vector(v, s), device_tensor(v, s, dt)};
}

Pair make_mod(uint32_t seed) {
  const std::vector<float> v = random_vec(size_t(B * 6 * D), seed, -0.5f, 0.5f);
  return {Tensor::from_vector(v, {B, 6, D}), device_tensor(v, {B, 6, D}, DType::kF32)};
}

TEST(ResidualNormGpu, MatchesTheHost) {
  VGEN_REQUIRE_GPU();
  for (DType dt : {DType::kF32, DType::kBF16})
    for (bool fused : {true, false})
      for (int gate : {5, -1}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + (fused ? " fused" : " two ops") + " gate " + std::to_string(gate));
        Pair x = make({B, S, D}, dt, 1), y = make({B, S, D}, dt, 2);
        const Pair gm = make_mod(3), mod = make_mod(4);
        const double tol = dt == DType::kF32 ? 1e-5 : 8e-3;
        const Tensor got = residual_layer_norm_modulate(x.dev, y.dev, gm.dev, gate, mod.dev, 0, 1, kEps, fused);
        const Tensor want = residual_layer_norm_modulate(x.host, y.host, gm.host, gate, mod.host, 0, 1, kEps, fused);
        EXPECT_LE(rel_l2(got, want), tol);
        EXPECT_LE(rel_l2(x.dev, x.host), tol) << "x updated";
        const Pair w = make({D}, DType::kF32, 5), bias = make({D}, DType::kF32, 6);
        const Tensor got2 = residual_layer_norm(x.dev, y.dev, gm.dev, gate, w.dev, bias.dev, kEps, fused);
        const Tensor want2 = residual_layer_norm(x.host, y.host, gm.host, gate, w.host, bias.host, kEps, fused);
        EXPECT_LE(rel_l2(got2, want2), tol);
      }
}

void expect_same(const Fp8Activation& a, const Fp8Activation& b) {
  ASSERT_EQ(a.x8.shape(), b.x8.shape());
  EXPECT_EQ(download<uint8_t>(a.x8, size_t(a.x8.numel())), download<uint8_t>(b.x8, size_t(b.x8.numel())));
  EXPECT_EQ(download<uint32_t>(a.scale, size_t(a.scale.numel())), download<uint32_t>(b.scale, size_t(b.scale.numel())));
}

TEST(ResidualNormGpu, QuantisedInputIsTheNormThenTheQuantisation) {
  VGEN_REQUIRE_GPU();
  for (GemmFormat f : {GemmFormat::kE4m3, GemmFormat::kInt8}) {
    SCOPED_TRACE(gemm_format_name(f));
    const Pair x = make({B, S, D}, DType::kBF16, 7), y = make({B, S, D}, DType::kBF16, 8);
    const Pair mod = make_mod(9);
    Tensor x1 = x.dev.clone(), x2 = x.dev.clone();
    const std::optional<Fp8Activation> got =
        residual_layer_norm_modulate_fp8(x1, y.dev, mod.dev, 5, mod.dev, 0, 1, kEps, f);
    ASSERT_TRUE(got.has_value());
    const Tensor n = residual_layer_norm_modulate(x2, y.dev, mod.dev, 5, mod.dev, 0, 1, kEps);
    expect_same(*got, *quantize_activation_shared(n, f));
    EXPECT_EQ(host_f32(x1), host_f32(x2)) << "x updated alike";
    Tensor x3 = x.dev.clone();
    EXPECT_FALSE(residual_layer_norm_modulate_fp8(x3, y.dev, mod.dev, 5, mod.dev, 0, 1, kEps, f, false).has_value());
    EXPECT_EQ(host_f32(x3), host_f32(x.dev)) << "not fused: nothing done";
    const std::optional<Fp8Activation> ln = layer_norm_fp8(x.dev, Tensor(), Tensor(), kEps, f);
    ASSERT_TRUE(ln.has_value());
    expect_same(*ln, *quantize_activation_shared(layer_norm(x.dev, Tensor(), Tensor(), kEps), f));
  }
}

}  // namespace
#else
VGEN_GPU_TESTS_NEED_CUDA(ResidualNormGpu)
#endif
