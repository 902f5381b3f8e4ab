// ops/linear_layer.h on the device against its CPU fallback (the same op on host f32 copies):
// the plain GEMM with and without the GELU epilogue, the residual add in the epilogue, the gate
// folded into a copy of the weights (f32: the same products, bit for bit), the fp8 GEMMs against
// the host emulation, and the activation quantised once for several GEMMs.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include "ops/fp8.h"
#include "ops/linear_layer.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

constexpr int64_t N = 48, K = 64, M = 37;

struct Case {
  LinearWeights host, dev;
  Tensor x_host, x_dev;  // [M, K]
};

Case make_case(DType dt, uint64_t seed) {
  Case c;
  const std::vector<float> w = maybe_round(random_vec(size_t(N * K), uint32_t(seed)), dt);
  const std::vector<float> b = maybe_round(random_vec(size_t(N), uint32_t(seed + 1)), dt);
  const std::vector<float> x = maybe_round(random_vec(size_t(M * K), uint32_t(seed + 2)), dt);
  c.host = {Tensor::from_vector(w, {N, K}), Tensor::from_vector(b, {N}), Tensor(), Tensor()};
  c.dev = {device_tensor(w, {N, K}, dt), device_tensor(b, {N}, dt), Tensor(), Tensor()};
  c.x_host = Tensor::from_vector(x, {M, K});
  c.x_dev = device_tensor(x, {M, K}, dt);
  return c;
}

double tolerance(DType dt) { return dt == DType::kF32 ? 1e-5 : 8e-3; }

TEST(LinearLayerGpu, PlainAndAddMatchTheHost) {
  VGEN_REQUIRE_GPU();
  for (DType dt : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Case c = make_case(dt, 1);
    for (Activation act : {Activation::kNone, Activation::kGeluTanh}) {
      const Tensor got = linear(c.dev, c.x_dev, LinearMode{}, act);
      EXPECT_EQ(got.dtype(), dt);
      EXPECT_LE(rel_l2(got, linear(c.host, c.x_host, LinearMode{}, act)), tolerance(dt)) << int(act);
    }
    const std::vector<float> y0 = maybe_round(random_vec(size_t(M * N), 5), dt);
    Tensor y_dev = device_tensor(y0, {M, N}, dt), y_host = Tensor::from_vector(y0, {M, N});
    linear_add_(y_dev, c.dev, c.x_dev, LinearMode{});
    linear_add_(y_host, c.host, c.x_host, LinearMode{});
    EXPECT_LE(rel_l2(y_dev, y_host), tolerance(dt));
  }
}

TEST(LinearLayerGpu, FoldGateMatchesTheHost) {
  VGEN_REQUIRE_GPU();
  const Case c = make_case(DType::kF32, 7);
  const std::vector<float> g = random_vec(size_t(N), 8, 0.5f, 1.5f);
  const LinearWeights dev = fold_gate(c.dev, device_tensor(g, {N}, DType::kF32), LinearMode{});
  const LinearWeights host = fold_gate(c.host, Tensor::from_vector(g, {N}), LinearMode{});
  EXPECT_EQ(host_f32(dev.w), host_f32(host.w));
  EXPECT_EQ(host_f32(dev.b), host_f32(host.b));
}

TEST(LinearLayerGpu, Fp8MatchesTheHostEmulation) {
  VGEN_REQUIRE_GPU();
  if (!fp8_runs_here()) return;
  for (GemmFormat f : {GemmFormat::kE4m3, GemmFormat::kInt8}) {
    SCOPED_TRACE(gemm_format_name(f));
    Case c = make_case(DType::kBF16, 11);
    const Fp8Weight qd = fp8_quantize_weight(c.dev.w, f), qh = fp8_quantize_weight(c.host.w, f);
    c.dev.w8 = qd.w8, c.dev.w_scale = qd.scale;
    c.host.w8 = qh.w8, c.host.w_scale = qh.scale;
    const LinearMode m{true, f, LinearRows::kBatched, DType::kBF16};
    const Tensor want = linear(c.host, c.x_host, m);
    EXPECT_LE(rel_l2(linear(c.dev, c.x_dev, m), want), 8e-3);
    const std::optional<Fp8Activation> xq = quantize_activation_shared(c.x_dev, f);
    ASSERT_TRUE(xq.has_value());
    EXPECT_LE(rel_l2(linear(c.dev, Tensor(), m, Activation::kNone, &*xq), want), 8e-3);
    const std::vector<float> g = random_vec(size_t(N), 12, 0.5f, 1.5f);
    const LinearWeights gd = fold_gate(c.dev, device_tensor(g, {N}, DType::kF32), m);
    const LinearWeights gh = fold_gate(c.host, Tensor::from_vector(g, {N}), m);
    EXPECT_EQ(host_f32(gd.w_scale), host_f32(gh.w_scale));
    Tensor y_dev = device_tensor(std::vector<float>(size_t(M * N), 0.0f), {M, N}, DType::kBF16);
    Tensor y_host = Tensor::from_vector(std::vector<float>(size_t(M * N), 0.0f), {M, N});
    linear_add_(y_dev, gd, c.x_dev, m);
    linear_add_(y_host, gh, c.x_host, m);
    EXPECT_LE(rel_l2(y_dev, y_host), 8e-3);
  }
}

}  // namespace
#else
VGEN_GPU_TESTS_NEED_CUDA(LinearLayerGpu)
#endif
