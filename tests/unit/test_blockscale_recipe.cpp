// The block-scaled precisions' recipe keys and CPU emulation wiring (docs/fp8.md "Block scaling"):
// precision fp4 with fp4_config (defaults, the keys it takes and those it does not, bf16 first and
// last steps), fp8_config.scaling (block: MXFP8 GEMMs), the report timing.json carries, and a
// Linear through ops/linear_layer.h in each emulated format against the references.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "io/recipe.h"
#include "kernels/blockscale/mxfp8_ref.h"
#include "kernels/blockscale/nvfp4_ref.h"
#include "model/wan/dit/fp8_options.h"
#include "ops/fp8.h"
#include "ops/linear_layer.h"
#include "pipeline/precision.h"

namespace vgen {
namespace {

void expect_recipe_error(const std::string& yaml, const std::vector<std::string>& sets, const std::string& fragment) {
  try {
    parse_recipe(yaml, "r.yaml", sets);
    FAIL() << "no error for:\n" << yaml;
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(ExitCode::kRecipe)) << e.message();
    EXPECT_NE(e.message().find(fragment), std::string::npos) << "'" << fragment << "' not in: " << e.message();
  }
}

TEST(BlockScaleRecipe, Fp4KeysAndDefaults) {
  Recipe d = parse_recipe("precision: fp4\n", "r.yaml", {});
  EXPECT_TRUE(d.is_fp4());
  EXPECT_TRUE(d.is_quantised());
  EXPECT_FALSE(d.is_fp8());
  EXPECT_EQ(d.compute_dtype(), DType::kF32);  // the CPU emulates fp4 in fp32
  EXPECT_FALSE(d.fp8.attention);              // the switches the quantised paths read
  EXPECT_TRUE(d.fp8.gemm);
  EXPECT_EQ(d.fp8.gemm_format, GemmFormat::kNvfp4);
  EXPECT_EQ(d.fp8.bf16_first_steps, 1);
  EXPECT_EQ(d.fp8.bf16_last_steps, 1);
  const WanFp8Options o = wan_fp8_options(d);
  EXPECT_EQ(o.gemm_format, GemmFormat::kNvfp4);
  EXPECT_FALSE(o.attention);
  EXPECT_TRUE(o.gemm);
  EXPECT_TRUE(d.fp8.step_in_fp8(1, 4));
  EXPECT_FALSE(d.fp8.step_in_fp8(0, 4));
  EXPECT_FALSE(d.fp8.step_in_fp8(3, 4));
  Recipe r = parse_recipe("precision: fp4\nfp4_config: {bf16_first_steps: 0, bf16_last_steps: 2, "
                          "bf16_linears: [ffn.net.2]}\ndevice: cuda\n",
                          "r.yaml", {});
  EXPECT_EQ(r.compute_dtype(), DType::kBF16);
  EXPECT_EQ(r.fp8.bf16_first_steps, 0);
  EXPECT_EQ(r.fp8.bf16_last_steps, 2);
  EXPECT_EQ(r.fp8.bf16_linears, std::vector<std::string>{"ffn.net.2"});
  EXPECT_EQ(r.fp8.gemm_format, GemmFormat::kNvfp4);
  EXPECT_EQ(recipe_to_json(r).at("fp4_config").at("bf16_last_steps"), 2);
  EXPECT_EQ(recipe_to_json(r).at("fp8_config").at("gemm_format"), "int8");  // fp8_config's defaults
}

TEST(BlockScaleRecipe, Fp4TakesOnlyItsKeys) {
  expect_recipe_error("precision: fp4\nfp4_config: {attention: true}\n", {}, "fp4_config.attention");
  expect_recipe_error("precision: fp4\nfp4_config: {gemm_format: e4m3}\n", {}, "fp4_config.gemm_format");
  expect_recipe_error("precision: fp4\nfp4_config: {bf16_first_steps: -1}\n", {}, "fp4_config.bf16_first_steps");
  expect_recipe_error("precision: fp5\n", {}, "precision");
  // The other precision's section is ignored (with a warning) either way.
  Recipe r = parse_recipe("precision: fp4\nfp8_config: {attention: false}\n", "r.yaml", {});
  EXPECT_EQ(r.fp8.gemm_format, GemmFormat::kNvfp4);
  r = parse_recipe("precision: fp4\nfp4_config: {bf16_first_steps: 3}\n", "r.yaml", {"precision=bf16"});
  EXPECT_EQ(r.fp4.bf16_first_steps, 1);  // back to the defaults
  EXPECT_FALSE(r.is_quantised());
}

TEST(BlockScaleRecipe, Fp8ScalingBlock) {
  Recipe r = parse_recipe("precision: fp8\nfp8_config: {scaling: block}\n", "r.yaml", {});
  EXPECT_EQ(r.fp8.scaling, Fp8Scaling::kBlock);
  EXPECT_EQ(wan_fp8_options(r).gemm_format, GemmFormat::kMxfp8);
  EXPECT_EQ(std::string(r.fp8.gemm_label()), "MXFP8");
  EXPECT_EQ(recipe_to_json(r).at("fp8_config").at("scaling"), "block");
  Recipe a = parse_recipe("precision: fp8\n", "r.yaml", {});
  EXPECT_EQ(a.fp8.scaling, Fp8Scaling::kAuto);
  EXPECT_EQ(wan_fp8_options(a).gemm_format, GemmFormat::kInt8);  // auto is tensor off Blackwell (the CPU)
  expect_recipe_error("precision: fp8\nfp8_config: {scaling: block, gemm_format: int8}\n", {}, "fp8_config.gemm_format");
  expect_recipe_error("precision: fp8\nfp8_config: {scaling: rows}\n", {}, "fp8_config.scaling");
  expect_recipe_error("precision: fp8\nfp8_config: {gemm_format: nvfp4}\n", {}, "fp8_config.gemm_format");
}

TEST(BlockScaleRecipe, PrecisionReport) {
  Json j = precision_report(parse_recipe("precision: fp4\ngeneration: {num_inference_steps: 4}\n", "r.yaml", {}));
  EXPECT_EQ(j.at("precision"), "fp4");
  EXPECT_EQ(j.at("emulated"), true);
  EXPECT_EQ(j.at("gemm"), "NVFP4 (block linears)");
  EXPECT_EQ(j.at("self_attention"), "f32");
  EXPECT_EQ(j.at("bf16_steps"), Json::array({0, 3}));
  j = precision_report(parse_recipe("precision: fp8\nfp8_config: {scaling: block}\n", "r.yaml", {}));
  EXPECT_EQ(j.at("gemm"), "MXFP8 (block linears)");
}

// x [M, K] and w [N, K] through linear() in an emulated format: the references' read-back x and w
// (w with one tensor scale, x with one per row for NVFP4) in an fp32 GEMM, plus the bias.
void expect_emulated_linear(GemmFormat f) {
  const int64_t M = 3, N = 5, K = 48;
  std::vector<float> xv(M * K), wv(N * K), bv(N);
  for (int64_t i = 0; i < M * K; ++i) xv[i] = std::sin(0.7f * float(i)) * float(1 + i % 5);
  for (int64_t i = 0; i < N * K; ++i) wv[i] = std::cos(0.3f * float(i)) * 0.1f;
  for (int64_t i = 0; i < N; ++i) bv[i] = 0.01f * float(i);
  LinearWeights l;
  l.w = Tensor::from_vector(wv, {N, K});
  l.b = Tensor::from_vector(bv, {N});
  const Fp8Weight q = fp8_quantize_weight(l.w, f);
  l.w8 = q.w8;
  l.w_scale = q.scale;
  const Tensor y = linear(l, Tensor::from_vector(xv, {M, K}), LinearMode{true, f, LinearRows::kRowByRow});
  std::vector<float> xr = xv, wr = wv;
  if (f == GemmFormat::kMxfp8) {
    kern::mxfp8_fake_quant_ref(xr.data(), M, K);
    kern::mxfp8_fake_quant_ref(wr.data(), N, K);
  } else {
    kern::nvfp4_fake_quant_rows_ref(xr.data(), M, K);
    kern::nvfp4_fake_quant_ref(wr.data(), N, K);
  }
  double err = 0, ref = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0, exact = 0;
      for (int64_t k = 0; k < K; ++k) s += double(xr[m * K + k]) * wr[n * K + k], exact += double(xv[m * K + k]) * wv[n * K + k];
      EXPECT_NEAR(y.f32()[m * N + n], s + bv[n], 1e-4) << m << "," << n;
      err += (s - exact) * (s - exact), ref += exact * exact;
    }
  EXPECT_GT(err / ref, 1e-8);  // quantised, not a pass-through (the error bounds: test_blockscale)
}

TEST(BlockScaleEmulation, LinearIsTheReferences) {
  expect_emulated_linear(GemmFormat::kMxfp8);
  expect_emulated_linear(GemmFormat::kNvfp4);
}

}  // namespace
}  // namespace vgen
