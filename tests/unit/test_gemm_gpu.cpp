// cuBLASLt GEMM (kernels/gemm/gemm.cu via ops/device_ops.h) against linear_ref on odd shapes:
// bf16 and fp32 inputs, bias bf16/f32/none, GELU-tanh, bf16/f32 output, a residual added in place,
// fused and separate epilogue.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <string>
#include <tuple>

#include "kernels/gemm/gemm.cuh"
#include "kernels/gemm/gemm_ref.h"
#include "ops/device_ops.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

struct Case {
  int64_t M, N, K;
};
const Case kShapes[] = {{1, 1, 1},      {1, 7, 33},   {7, 33, 130},  {33, 130, 7},  {130, 1000, 33},
                        {1000, 130, 1000}, {7, 1000, 1}, {64, 64, 64}, {1000, 1000, 130}, {129, 257, 520}};

enum class BiasKind { kNone, kBF16, kF32 };

double gelu_tanh(double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }

// Runs one configuration and compares element by element with a bound derived from the arithmetic:
// fp32 accumulation in any order differs from the reference by at most K·2⁻²⁴·Σ|x||w| (inputs are
// exact in fp32), the GELU epilogue may use tanh.approx (|Δtanh| ≤ 2⁻¹⁰·⁹, so |Δgelu| ≤ 5e-4·|v|),
// and a bf16 output adds at most half an ulp (2⁻⁸ relative); the fused bf16 epilogues (bias, GELU)
// may add another half ulp of the product (rounded before the bias is added, as in PyTorch's addmm).
// residual: cuda_linear_add_ onto a random y of out_dt (y += x·wᵀ + b in the epilogue); offset_y: y
// starts one element past an aligned address.
void run_case(const Case& c, DType in_dt, BiasKind bias_kind, bool gelu, DType out_dt, bool fused, uint32_t seed,
              bool residual = false, bool offset_y = false) {
  SCOPED_TRACE(::testing::Message() << "M=" << c.M << " N=" << c.N << " K=" << c.K << " in=" << dtype_name(in_dt)
                                    << " bias=" << int(bias_kind) << " gelu=" << gelu << " out=" << dtype_name(out_dt)
                                    << " fused=" << fused << " residual=" << residual);
  const bool in_bf16 = in_dt == DType::kBF16;
  auto x = random_vec(size_t(c.M * c.K), seed);
  auto w = random_vec(size_t(c.N * c.K), seed + 1);
  auto b = random_vec(size_t(c.N), seed + 2);
  if (in_bf16) {
    x = rounded_bf16(x);
    w = rounded_bf16(w);
  }
  if (bias_kind == BiasKind::kBF16) b = rounded_bf16(b);
  const DType bias_dt = bias_kind == BiasKind::kBF16 ? DType::kBF16 : DType::kF32;

  Tensor dx = device_tensor(x, {c.M, c.K}, in_dt);
  Tensor dw = device_tensor(w, {c.N, c.K}, in_dt);
  Tensor db = bias_kind == BiasKind::kNone ? Tensor() : device_tensor(b, {c.N}, bias_dt);
  std::vector<float> r(size_t(c.M * c.N), 0.0f);
  if (residual) r = random_vec(r.size(), seed + 3);
  if (residual && out_dt == DType::kBF16) r = rounded_bf16(r);
  kern::gemm_set_fused_epilogue(fused);
  Tensor dy;
  if (residual) {
    std::vector<float> buf(offset_y ? 1 : 0, 0.25f);
    buf.insert(buf.end(), r.begin(), r.end());
    dy = device_tensor(buf, {int64_t(buf.size())}, out_dt).narrow(offset_y ? 1 : 0, c.M * c.N).reshape({c.M, c.N});
    cuda_linear_add_(dy, dx, dw, db);
  } else {
    dy = cuda_linear(dx, dw, db, out_dt, gelu ? Activation::kGeluTanh : Activation::kNone);
  }
  kern::gemm_set_fused_epilogue(true);
  ASSERT_EQ(dy.shape(), (Shape{c.M, c.N}));
  ASSERT_EQ(dy.dtype(), out_dt);
  std::vector<float> y = host_f32(dy);

  std::vector<float> pre(size_t(c.M * c.N));
  kern::linear_ref(x.data(), w.data(), bias_kind == BiasKind::kNone ? nullptr : b.data(), pre.data(), c.M, c.N, c.K);
  double max_ref = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      double abs_sum = bias_kind == BiasKind::kNone ? 0.0 : std::fabs(b[size_t(j)]);
      for (int64_t k = 0; k < c.K; ++k) abs_sum += std::fabs(double(x[size_t(i * c.K + k)]) * w[size_t(j * c.K + k)]);
      const double acc_tol = 2.0 * double(c.K + 1) * std::ldexp(1.0, -24) * abs_sum;
      const double v = pre[size_t(i * c.N + j)];
      const double rij = r[size_t(i * c.N + j)];
      const double ref = (gelu ? gelu_tanh(v) : v) + rij;
      double tol = 1.2 * acc_tol + 1e-6 + (gelu ? 5e-4 * std::fabs(v) : 0.0);
      if (out_dt == DType::kBF16) tol += std::ldexp(1.0, -8) * (std::fabs(ref) + tol);
      // cuBLASLt's fused bf16 epilogues (bias as PyTorch's addmm; GELU for bf16 in and out) may round
      // the product to bf16 before bias and GELU; GELU-tanh's slope is at most 1.13.
      const bool lt_epilogue =
          fused && out_dt == DType::kBF16 &&
          (bias_kind == BiasKind::kBF16 || residual || (gelu && in_bf16 && bias_kind == BiasKind::kNone));
      const double bj = bias_kind == BiasKind::kNone ? 0.0 : std::fabs(b[size_t(j)]);
      const double prod = std::fabs(v - (bias_kind == BiasKind::kNone ? 0.0 : b[size_t(j)])) + acc_tol;
      if (lt_epilogue) tol += (gelu ? 1.13 : 1.0) * std::ldexp(1.0, -8) * prod;
      // With a residual the bf16 epilogue also rounds a partial sum (of the product, bias and residual)
      // before the last term is added: another half ulp of at most |product| + |bias| + |residual|.
      if (lt_epilogue && residual) tol += std::ldexp(1.0, -8) * (prod + bj + std::fabs(rij));
      const double got = y[size_t(i * c.N + j)];
      max_ref = std::max(max_ref, std::fabs(ref));
      if (!(std::fabs(got - ref) <= tol)) {
        if (++bad <= 5)
          ADD_FAILURE() << "y[" << i << "," << j << "] = " << got << ", expected " << ref << " ± " << tol;
      }
    }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(max_ref, 0.0);  // the comparison is not on zeros
}

}  // namespace

TEST(GemmGpu, Bf16MatchesLinearRefOnOddShapes) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 1;
  for (const Case& c : kShapes)
    for (bool fused : {true, false}) {
      run_case(c, DType::kBF16, BiasKind::kNone, false, DType::kBF16, fused, seed += 3);
      run_case(c, DType::kBF16, BiasKind::kBF16, false, DType::kBF16, fused, seed += 3);
      run_case(c, DType::kBF16, BiasKind::kBF16, true, DType::kBF16, fused, seed += 3);
      run_case(c, DType::kBF16, BiasKind::kF32, true, DType::kF32, fused, seed += 3);
      run_case(c, DType::kBF16, BiasKind::kNone, true, DType::kF32, fused, seed += 3);
      run_case(c, DType::kBF16, BiasKind::kF32, false, DType::kBF16, fused, seed += 3);
    }
}

TEST(GemmGpu, Fp32MatchesLinearRef) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 1000;
  for (const Case& c : kShapes)
    for (bool fused : {true, false}) {
      run_case(c, DType::kF32, BiasKind::kNone, false, DType::kF32, fused, seed += 3);
      run_case(c, DType::kF32, BiasKind::kF32, false, DType::kF32, fused, seed += 3);
      run_case(c, DType::kF32, BiasKind::kF32, true, DType::kF32, fused, seed += 3);
    }
}

// y += x·wᵀ + b in the GEMM epilogue (cuBLASLt's C, in place) and in the separate epilogue, bf16
// and fp32, with and without bias, y aligned or not; a residual with an activation is refused.
TEST(GemmGpu, ResidualEpilogueMatchesLinearRef) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 2000;
  for (const Case& c : kShapes)
    for (bool fused : {true, false}) {
      run_case(c, DType::kBF16, BiasKind::kNone, false, DType::kBF16, fused, seed += 4, true);
      run_case(c, DType::kBF16, BiasKind::kBF16, false, DType::kBF16, fused, seed += 4, true);
      run_case(c, DType::kBF16, BiasKind::kF32, false, DType::kF32, fused, seed += 4, true);
      run_case(c, DType::kBF16, BiasKind::kF32, false, DType::kBF16, fused, seed += 4, true);
      run_case(c, DType::kF32, BiasKind::kF32, false, DType::kF32, fused, seed += 4, true);
      run_case(c, DType::kF32, BiasKind::kNone, false, DType::kF32, fused, seed += 4, true);
      run_case(c, DType::kBF16, BiasKind::kBF16, false, DType::kBF16, fused, seed += 4, true, true);
      run_case(c, DType::kF32, BiasKind::kF32, false, DType::kF32, fused, seed += 4, true, true);
    }
  // cuBLASLt has no kernel for an fp32 bias with bf16 output: with fusion on, the residual still runs,
  // through the separate epilogue.
  const uint64_t unfused0 = kern::gemm_cache_stats().unfused;
  run_case(kShapes[4], DType::kBF16, BiasKind::kF32, false, DType::kBF16, true, seed += 4, true);
  EXPECT_GT(kern::gemm_cache_stats().unfused, unfused0);
  kern::LinearArgs a;
  Tensor x = device_tensor(random_vec(8 * 16, 3), {8, 16}, DType::kBF16);
  Tensor w = device_tensor(random_vec(8 * 16, 4), {8, 16}, DType::kBF16);
  Tensor y = Tensor::zeros({8, 8}, DType::kBF16, Device::kCUDA);
  a.x = x.raw(), a.w = w.raw(), a.y = y.raw(), a.residual = y.raw();
  a.M = 8, a.N = 8, a.K = 16, a.act = kern::GemmAct::kGeluTanh;
  EXPECT_EQ(kern::linear(a, compute_stream()), cudaErrorInvalidValue);
  EXPECT_NE(std::string(kern::gemm_last_error()).find("residual"), std::string::npos) << kern::gemm_last_error();
}

TEST(GemmGpu, MisalignedViewsAndLeadingDims) {
  VGEN_REQUIRE_GPU();
  // Rows 1.. of a [M+1, K] tensor with odd K: the operand starts 2 bytes past a 16-byte boundary.
  const int64_t M = 33, N = 65, K = 37;
  auto x = rounded_bf16(random_vec(size_t((M + 1) * K), 7));
  auto w = rounded_bf16(random_vec(size_t(N * K), 8));
  Tensor dx = device_tensor(x, {M + 1, K}, DType::kBF16).narrow(1, M);
  Tensor dw = device_tensor(w, {N, K}, DType::kBF16);
  std::vector<float> y = host_f32(cuda_linear(dx, dw, Tensor(), DType::kF32));
  std::vector<float> ref(size_t(M * N));
  kern::linear_ref(x.data() + K, w.data(), nullptr, ref.data(), M, N, K);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-4) << "at " << i;

  // Raw launcher with leading dims: y[:, :N] of a wider buffer, x rows strided.
  const int64_t ldx = K + 3, ldy = N + 5;
  auto xs = rounded_bf16(random_vec(size_t(M * ldx), 9));
  Tensor dxs = device_tensor(xs, {M, ldx}, DType::kBF16);
  Tensor dys = Tensor::zeros({M, ldy}, DType::kF32, Device::kCUDA);
  kern::LinearArgs a;
  a.x = dxs.raw(), a.w = dw.raw(), a.y = dys.raw();
  a.in_type = kern::GemmType::kBF16, a.out_type = kern::GemmType::kF32;
  a.M = M, a.N = N, a.K = K, a.ldx = ldx, a.ldy = ldy;
  ASSERT_EQ(kern::linear(a, compute_stream()), cudaSuccess) << kern::gemm_last_error();
  std::vector<float> ys = host_f32(dys);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double r = 0;
      for (int64_t k = 0; k < K; ++k) r += double(xs[size_t(i * ldx + k)]) * w[size_t(j * K + k)];
      ASSERT_NEAR(ys[size_t(i * ldy + j)], r, 1e-4) << i << "," << j;
    }
    for (int64_t j = N; j < ldy; ++j) ASSERT_EQ(ys[size_t(i * ldy + j)], 0.0f) << "wrote past N at " << i << "," << j;
  }
}

TEST(GemmGpu, EdgeSizes) {
  VGEN_REQUIRE_GPU();
  // K = 0: y = act(bias).
  auto b = rounded_bf16(random_vec(9, 3));
  Tensor x = Tensor::zeros({4, 0}, DType::kBF16, Device::kCUDA);
  Tensor w = Tensor::zeros({9, 0}, DType::kBF16, Device::kCUDA);
  std::vector<float> y = host_f32(cuda_linear(x, w, device_tensor(b, {9}, DType::kBF16), DType::kF32,
                                              Activation::kGeluTanh));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 9; ++j) ASSERT_NEAR(y[size_t(i * 9 + j)], gelu_tanh(b[size_t(j)]), 1e-6);
  // M = 0: nothing to do, empty result.
  Tensor x0 = Tensor::zeros({0, 5}, DType::kBF16, Device::kCUDA);
  Tensor w0 = device_tensor(random_vec(15, 4), {3, 5}, DType::kBF16);
  EXPECT_EQ(cuda_linear(x0, w0, Tensor()).shape(), (Shape{0, 3}));
}

TEST(GemmGpu, PlanCacheReuse) {
  VGEN_REQUIRE_GPU();
  Tensor x = device_tensor(random_vec(77 * 41, 5), {77, 41}, DType::kBF16);
  Tensor w = device_tensor(random_vec(59 * 41, 6), {59, 41}, DType::kBF16);
  cuda_linear(x, w, Tensor());
  const kern::GemmCacheStats s0 = kern::gemm_cache_stats();
  cuda_linear(x, w, Tensor());
  const kern::GemmCacheStats s1 = kern::gemm_cache_stats();
  EXPECT_EQ(s1.misses, s0.misses);
  EXPECT_EQ(s1.hits, s0.hits + 1);
  Tensor w2 = device_tensor(random_vec(61 * 41, 7), {61, 41}, DType::kBF16);
  cuda_linear(x, w2, Tensor());
  EXPECT_EQ(kern::gemm_cache_stats().misses, s1.misses + 1);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(GemmGpu)
#endif
