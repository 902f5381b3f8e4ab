// The norms that write their output straight in a GEMM's per-token quantised form, e4m3
// (linear_fp8) or INT8 (linear_int8) (kern::*_fp8 through cuda_layer_norm_fp8 /
// cuda_layer_norm_modulate_fp8 / cuda_residual_layer_norm_modulate_fp8) against the two ops they
// replace, the norm and then cuda_quantize_activation in the same format, bit for bit: the bytes
// (u8 e4m3 or i8 INT8), the per-token scales and (residual form) the updated x, for bf16 and f32
// rows of DiT-like and odd widths, rows of very different magnitudes, a zero row; and the refusal
// (false, x untouched) where the fused kernel does not apply.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include "ops/dit_device_ops.h"
#include "ops/fp8.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

// x [B, S, D] with row r scaled by 2^(r % 9 − 4) and row 1 of batch 0 zero; mod [B, 6, D] f32.
Tensor make_x(int64_t B, int64_t S, int64_t D, DType dt, uint64_t seed) {
  std::vector<float> v(size_t(B * S * D));
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t d = 0; d < D; ++d)
      v[size_t(r * D + d)] = r == 1 ? 0.0f : hash_uniform(uint64_t(r * D + d), seed) * std::ldexp(1.0f, int(r % 9) - 4);
  return device_tensor(maybe_round(v, dt), {B, S, D}, dt);
}

Tensor make_mod(int64_t B, int64_t D, uint64_t seed) {
  std::vector<float> v(size_t(B * 6 * D));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * hash_uniform(i, seed);
  return device_tensor(v, {B, 6, D}, DType::kF32);
}

void expect_same(const Fp8Activation& got, const Fp8Activation& want, GemmFormat f, const std::string& what) {
  ASSERT_TRUE(got.x8.defined() && want.x8.defined()) << what;
  EXPECT_EQ(got.x8.dtype(), gemm_format_dtype(f)) << what << ": the bytes' dtype";
  EXPECT_EQ(want.x8.dtype(), gemm_format_dtype(f)) << what << ": the reference's dtype";
  EXPECT_EQ(got.shape, want.shape) << what;
  ASSERT_EQ(got.x8.shape(), want.x8.shape()) << what;
  const size_t n = size_t(want.x8.numel()), m = size_t(want.scale.numel());
  const std::vector<uint8_t> a = download<uint8_t>(got.x8, n), b = download<uint8_t>(want.x8, n);
  const std::vector<uint32_t> sa = download<uint32_t>(got.scale, m), sb = download<uint32_t>(want.scale, m);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i] && ++bad <= 5)
      ADD_FAILURE() << what << ": byte " << i << " (row " << i / size_t(want.x8.dim(1)) << ") " << int(a[i])
                    << " against " << int(b[i]);
  EXPECT_EQ(bad, 0u) << what;
  EXPECT_EQ(sa, sb) << what << ": the per-token scales";
}

void expect_bitwise(const Tensor& a, const Tensor& b, const std::string& what) {
  const size_t bytes = size_t(a.numel()) * dtype_size(a.dtype());
  ASSERT_EQ(a.shape(), b.shape()) << what;
  EXPECT_EQ(download<uint8_t>(a, bytes), download<uint8_t>(b, bytes)) << what;
}

struct Shape3 {
  int64_t B, S, D;
};

void check_equals_norm_then_quantise(GemmFormat f) {
  const float eps = 1e-6f;
  uint64_t seed = 3;
  for (DType dt : {DType::kBF16, DType::kF32})
    for (const Shape3& s : {Shape3{2, 37, 5120}, Shape3{1, 130, 1536}, Shape3{3, 5, 512}}) {
      const std::string what = std::string(gemm_format_name(f)) + " " + dtype_name(dt) + " " + std::to_string(s.B) +
                               "x" + std::to_string(s.S) + "x" + std::to_string(s.D);
      SCOPED_TRACE(what);
      const Tensor x = make_x(s.B, s.S, s.D, dt, ++seed), mod = make_mod(s.B, s.D, ++seed);
      // AdaLN (shift row 0, scale row 1).
      Fp8Activation got;
      ASSERT_TRUE(cuda_layer_norm_modulate_fp8(x, mod, 0, 1, eps, got, f));
      expect_same(got, cuda_quantize_activation(cuda_layer_norm_modulate(x, mod, 0, 1, eps), f), f,
                  "layer_norm_modulate");
      // Residual + AdaLN: x += y·gate (row 5), then the AdaLN of rows 3, 4; and without a gate.
      for (int gate : {5, -1}) {
        const Tensor y = make_x(s.B, s.S, s.D, dt, ++seed);
        Tensor x1 = x.clone(), x2 = x.clone();
        Fp8Activation g;
        ASSERT_TRUE(cuda_residual_layer_norm_modulate_fp8(x1, y, mod, gate, mod, 3, 4, eps, g, f));
        const Tensor n = cuda_residual_layer_norm_modulate(x2, y, mod, gate, mod, 3, 4, eps);
        expect_same(g, cuda_quantize_activation(n, f), f, "residual_layer_norm_modulate, gate " + std::to_string(gate));
        expect_bitwise(x1, x2, "the updated x, gate " + std::to_string(gate));
      }
      // Affine LayerNorm (the cross-attention's norm2).
      const Tensor w = device_tensor(random_vec(size_t(s.D), uint32_t(++seed), 0.5f, 1.5f), {s.D}, DType::kF32);
      const Tensor b = device_tensor(random_vec(size_t(s.D), uint32_t(++seed)), {s.D}, DType::kF32);
      Fp8Activation l;
      ASSERT_TRUE(cuda_layer_norm_fp8(x, w, b, eps, l, f));
      expect_same(l, cuda_quantize_activation(cuda_layer_norm(x, w, b, eps), f), f, "layer_norm");
    }
}

TEST(NormFp8Gpu, EqualsNormThenQuantise) {
  VGEN_REQUIRE_GPU();
  check_equals_norm_then_quantise(GemmFormat::kE4m3);
}

TEST(NormFp8Gpu, EqualsNormThenQuantiseInt8) {
  VGEN_REQUIRE_GPU();
  check_equals_norm_then_quantise(GemmFormat::kInt8);
}

void check_refused(GemmFormat f) {
  // 24 wide: padded to 32 for the GEMMs; 400 wide: no register shape (50 vectors of 8).
  for (int64_t D : {24, 400}) {
    SCOPED_TRACE(std::string(gemm_format_name(f)) + " width " + std::to_string(D));
    const Tensor x = make_x(1, 9, D, DType::kBF16, 1), mod = make_mod(1, D, 2), y = make_x(1, 9, D, DType::kBF16, 3);
    Tensor x1 = x.clone();
    Fp8Activation q;
    EXPECT_FALSE(cuda_layer_norm_modulate_fp8(x, mod, 0, 1, 1e-6f, q, f)) << D;
    EXPECT_FALSE(q.x8.defined());
    EXPECT_FALSE(cuda_layer_norm_fp8(x, Tensor(), Tensor(), 1e-6f, q, f)) << D;
    EXPECT_FALSE(q.x8.defined());
    EXPECT_FALSE(cuda_residual_layer_norm_modulate_fp8(x1, y, mod, 5, mod, 3, 4, 1e-6f, q, f)) << D;
    expect_bitwise(x1, x, "x untouched, width " + std::to_string(D));
  }
}

TEST(NormFp8Gpu, RefusedWhereTheKernelDoesNotApply) {
  VGEN_REQUIRE_GPU();
  check_refused(GemmFormat::kE4m3);
}

TEST(NormFp8Gpu, RefusedWhereTheKernelDoesNotApplyInt8) {
  VGEN_REQUIRE_GPU();
  check_refused(GemmFormat::kInt8);
}

}  // namespace
#else
VGEN_GPU_TESTS_NEED_CUDA(NormFp8Gpu)
#endif
