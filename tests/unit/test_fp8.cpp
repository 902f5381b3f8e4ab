// precision fp8 (docs/fp8.md) on the CPU (its recipe keys: test_fp8_recipe.cpp): the per-thread
// switches and the denoising loop's per-step switch, the CPU emulation (a block in fp8 against a
// direct composition of the kernel references, the forward's wiring), the refusal, the reports.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "core/random.h"
#include "dit_test_util.h"
#include "io/diffusers_dir.h"
#include "kernels/attention/attention_fp8_ref.h"
#include "kernels/attention/attention_ref.h"
#include "kernels/gemm/gemm_fp8_ref.h"
#include "kernels/quant/quant_ref.h"
#include "model/wan/dit/rope_tables.h"
#include "model/wan/dit/transformer_block.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/fp8.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "parallel/local_attention.h"
#include "pipeline/denoise.h"
#include "plan/plan.h"
#include "model/wan/dit/fp8_options.h"
#include "pipeline/precision.h"

namespace vgen {
namespace {

// ---- the CPU emulation -----------------------------------------------------------------------

std::string tiny_dir() { return test::golden_dir() + "/wan21-tiny/transformer"; }

// The tiny transformer in precision fp8 (attention and GEMMs) with blocks wholly in bf16
// (fp8_config.bf16_blocks) and blocks with bf16 linears (bf16_gemm_blocks).
auto fp8_tiny(std::vector<int> whole, std::vector<int> gemm) {
  WanFp8Options o{true, true, true};
  o.bf16_blocks = std::move(whole);
  o.bf16_gemm_blocks = std::move(gemm);
  auto m = WanTransformer::load(tiny_dir());
  m->enable_fp8(o);
  return m;
}

// A linear straight from the references: both operands quantised per row (e4m3 or INT8), then the
// formula.
Tensor ref_linear(const WanLinear& l, const Tensor& x, bool fp8, GemmFormat f) {
  if (!fp8) return linear(x, l.w, l.b);
  const int64_t K = x.dim(-1), M = x.numel() / K, N = l.w.dim(0);
  std::vector<uint8_t> x8(static_cast<size_t>(M * K)), w8(static_cast<size_t>(N * K));
  std::vector<float> sx(static_cast<size_t>(M)), sw(static_cast<size_t>(N));
  Shape os = x.shape();
  os.back() = N;
  Tensor y = Tensor::empty(os, DType::kF32);
  const float* b = l.b.defined() ? l.b.f32() : nullptr;
  if (f == GemmFormat::kInt8) {
    auto* xi = reinterpret_cast<int8_t*>(x8.data());
    auto* wi = reinterpret_cast<int8_t*>(w8.data());
    kern::quantize_rows_int8_ref(x.f32(), false, M, K, K, xi, sx.data());
    kern::quantize_rows_int8_ref(l.w.f32(), false, N, K, K, wi, sw.data());
    kern::linear_int8_quantized_ref(xi, sx.data(), wi, sw.data(), b, y.f32(), M, N, K);
    return y;
  }
  kern::quantize_rows_fp8_ref(x.f32(), false, M, K, K, x8.data(), sx.data());
  kern::quantize_rows_fp8_ref(l.w.f32(), false, N, K, K, w8.data(), sw.data());
  kern::linear_fp8_quantized_ref(x8.data(), sx.data(), w8.data(), sw.data(), b, y.f32(), M, N, K);
  return y;
}

// wan_spec §1.4.4-5 written out with the references: which linears and which attention are fp8.
void ref_block(const WanTransformerConfig& cfg, const WanBlockWeights& w, Tensor& x, const Tensor& tproj,
               const Tensor& cos, const Tensor& sin, const Tensor& tk, const Tensor& tv, Fp8Switches sw) {
  const int64_t B = x.dim(0), S = x.dim(1), D = x.dim(2), H = cfg.num_attention_heads, Dh = cfg.attention_head_dim;
  const float eps = float(cfg.eps), scale = float(1.0 / std::sqrt(double(Dh)));
  Tensor mod = add_row(tproj.reshape({B, 6 * D}), w.scale_shift_table.reshape({6 * D})).reshape({B, 6, D});
  {
    Tensor n = layer_norm_modulate(x, mod, 0, 1, eps);
    Tensor q = rms_norm(ref_linear(w.attn1.q, n, sw.gemm, sw.gemm_format), w.attn1.norm_q, eps).reshape({B, S, H, Dh});
    Tensor k = rms_norm(ref_linear(w.attn1.k, n, sw.gemm, sw.gemm_format), w.attn1.norm_k, eps).reshape({B, S, H, Dh});
    Tensor v = ref_linear(w.attn1.v, n, sw.gemm, sw.gemm_format).reshape({B, S, H, Dh});
    rope_(q, cos, sin);
    rope_(k, cos, sin);
    Tensor o = Tensor::empty(q.shape(), DType::kF32);
    if (sw.attention)
      kern::attention_fp8_ref(q.f32(), k.f32(), v.f32(), o.f32(), nullptr, B, S, S, H, Dh, S, scale);
    else
      kern::attention_ref(q.f32(), k.f32(), v.f32(), o.f32(), nullptr, B, S, S, H, Dh, S, scale);
    gated_residual_(x, ref_linear(w.attn1.o, o.reshape({B, S, D}), sw.gemm, sw.gemm_format), mod, 2);
  }
  {
    Tensor n = layer_norm(x, w.norm2_w, w.norm2_b, eps);
    Tensor q = rms_norm(ref_linear(w.attn2.q, n, sw.gemm, sw.gemm_format), w.attn2.norm_q, eps).reshape({B, S, H, Dh});
    Tensor o = Tensor::empty(q.shape(), DType::kF32);  // cross-attention: never fp8
    kern::attention_ref(q.f32(), tk.f32(), tv.f32(), o.f32(), nullptr, B, S, tk.dim(1), H, Dh, tk.dim(1), scale);
    add_inplace(x, ref_linear(w.attn2.o, o.reshape({B, S, D}), sw.gemm, sw.gemm_format));
  }
  {
    Tensor h = ref_linear(w.ffn1, layer_norm_modulate(x, mod, 3, 4, eps), sw.gemm, sw.gemm_format);
    gelu_tanh_(h);
    gated_residual_(x, ref_linear(w.ffn2, h, sw.gemm, sw.gemm_format), mod, 5);
  }
}

TEST(Fp8Emulation, BlockEqualsTheReferences) {
  auto m = WanTransformer::load(tiny_dir());
  const WanTransformerConfig& cfg = m->config();
  const int64_t S = 150, D = cfg.dim(), L = 7;  // 150 tokens: two Q/K scale blocks of 128
  const Tensor x0 = randn({1, S, D}, 1), tproj = randn({1, 6, D}, 2);
  const Tensor tk = randn({1, L, cfg.num_attention_heads, cfg.attention_head_dim}, 3),
               tv = randn({1, L, cfg.num_attention_heads, cfg.attention_head_dim}, 4);
  Tensor cos, sin;
  WanRopeTables(cfg).make(3, 5, 10, 0, S, cos, sin);
  const SeqLayout layout = SeqLayout::make(S, 1, 0);
  Tensor plain, e4m3_gemm;
  const GemmFormat i8 = GemmFormat::kInt8;
  for (Fp8Switches sw : {Fp8Switches{false, false}, Fp8Switches{true, false}, Fp8Switches{false, true},
                         Fp8Switches{true, true}, Fp8Switches{false, true, false, 0, i8},
                         Fp8Switches{true, true, false, 0, i8}}) {
    Tensor want = x0.clone(), got = x0.clone();
    ref_block(cfg, m->weights().blocks[0], want, tproj, cos, sin, tk, tv, sw);
    {
      LocalAttention attn;
      WanPendingResidual pending;  // the FFN residual, added here as the next block would
      const WanCrossKv kv{tk, tv, Tensor(), Tensor()};  // no image path
      wan_block_forward(WanBlockRun{cfg}, m->weights().blocks[0], got, pending,
                        WanTimeEmbedding{Tensor(), tproj.reshape({1, 6 * D}), Tensor()}, cos, sin, kv, layout, attn,
                        WanBlockPolicy{sw, LinearRows::kBatched, AttentionConfig{}});
      pending.flush(got, nullptr);
    }
    const std::string what = fmt::format("attention {} gemm {} {}", sw.attention, sw.gemm,
                                         gemm_format_name(sw.gemm_format));
    EXPECT_LT(test::rel_l2(got, want), 1e-6) << what;
    if (!sw.any()) plain = got;
    else EXPECT_GT(test::rel_l2(got, plain), 1e-4) << "fp8 changed nothing: " << what;
    // The INT8 GEMMs are another rounding than the e4m3 ones.
    if (sw.gemm && !sw.attention && sw.gemm_format == GemmFormat::kE4m3) e4m3_gemm = got;
    if (sw.gemm && !sw.attention && sw.gemm_format == i8) {
      EXPECT_GT(test::rel_l2(got, e4m3_gemm), 1e-4) << what;
    }
  }
}

TEST(Fp8Emulation, ForwardWiring) {
  auto fp32 = WanTransformer::load(tiny_dir());
  auto fp8 = WanTransformer::load(tiny_dir());
  fp8->enable_fp8({true, true, true});
  // The e4m3 weights are the per-channel quantisation of the fp32 ones; only the block linears.
  const WanLinear& q = fp8->weights().blocks[1].attn1.q;
  ASSERT_TRUE(q.w8.defined());
  std::vector<uint8_t> w8(size_t(q.w.numel()));
  std::vector<float> sw(size_t(q.w.dim(0)));
  kern::quantize_rows_fp8_ref(q.w.f32(), false, q.w.dim(0), q.w.dim(1), q.w.dim(1), w8.data(), sw.data());
  EXPECT_EQ(std::memcmp(w8.data(), q.w8.raw(), w8.size()), 0);
  EXPECT_EQ(std::memcmp(sw.data(), q.w_scale.raw(), sw.size() * 4), 0);
  EXPECT_FALSE(fp8->weights().blocks[0].attn2.k.w8.defined());  // text K/V projections stay fp32
  EXPECT_FALSE(fp8->weights().proj_out.w8.defined());
  EXPECT_TRUE(fp8->weights().blocks[0].ffn2.w8.defined());

  WeightStore ws = WeightStore::open(test::golden_dir() + "/cases/dit_forward.safetensors");
  const Tensor x = ws.get_f32("hidden_states_b2"), t = ws.get_f32("timestep_b2"),
               ctx = ws.get_f32("encoder_hidden_states_b2"), ref = ws.get_f32("output_b2");
  fp32->set_row_wise_linears(true);  // as the fp8 model's linears run
  const TextContext a = fp32->prepare_text(ctx);
  fp32->set_row_wise_linears(false);
  const TextContext b = fp8->prepare_text(ctx);
  EXPECT_TRUE(test::bitwise_equal(a.k[1], b.k[1]));  // computed once per prompt, in fp32
  const Tensor y32 = fp32->forward(x, t, ctx), y8 = fp8->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(y8, y32), 1e-3);
  EXPECT_LT(test::rel_l2(y8, ref), 5e-2);
  {
    // A bf16 step of the loop: the plain fp32 forward, with the row-wise linears of a model that
    // quantises (so that a mesh's bf16 steps round as one rank's).
    fp32->set_row_wise_linears(true);
    const Tensor y32_rows = fp32->forward(x, t, ctx);
    fp32->set_row_wise_linears(false);
    EXPECT_TRUE(test::bitwise_equal(fp8->forward(x, t, ctx, StepPolicy{/*fp8=*/false}), y32_rows));
  }
  // The same model with gemm off / attention off: each part alone changes the output.
  auto att = WanTransformer::load(tiny_dir());
  att->enable_fp8({true, false, true});
  const Tensor ya = att->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(ya, y32), 1e-4);
  EXPECT_GT(test::rel_l2(ya, y8), 1e-4);
  EXPECT_THROW(att->enable_fp8({true, true, true}), Error);  // once
  // fp8_config.bf16_blocks: a listed block keeps its fp32 linears (no e4m3 copy) and runs without
  // fp8; every block listed is the fp32 forward bit for bit, one listed block another output.
  auto none = fp8_tiny({0, -1}, {});
  EXPECT_FALSE(none->weights().blocks[0].ffn2.w8.defined());
  EXPECT_FALSE(none->weights().blocks[1].attn1.q.w8.defined());
  EXPECT_TRUE(test::bitwise_equal(none->forward(x, t, ctx), y32));
  auto one = fp8_tiny({-1}, {});
  EXPECT_TRUE(one->weights().blocks[0].ffn2.w8.defined());
  EXPECT_FALSE(one->weights().blocks[1].ffn2.w8.defined());
  const Tensor y1 = one->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(y1, y32), 1e-5);
  EXPECT_GT(test::rel_l2(y1, y8), 1e-5);
  EXPECT_LT(test::rel_l2(y1, ref), 5e-2);
  EXPECT_THROW(fp8_tiny({2}, {}), Error);  // the tiny model has 2 blocks
  // fp8_config.bf16_gemm_blocks: the listed blocks' linears stay fp32 (no e4m3 copy), their
  // self-attention stays fp8: every block listed is the attention-only forward bit for bit.
  auto g = fp8_tiny({}, {0, 1});
  EXPECT_FALSE(g->weights().blocks[0].ffn1.w8.defined());
  EXPECT_FALSE(g->weights().blocks[1].attn2.o.w8.defined());
  EXPECT_TRUE(test::bitwise_equal(g->forward(x, t, ctx), ya));
  auto g0 = fp8_tiny({}, {0});
  EXPECT_FALSE(g0->weights().blocks[0].ffn2.w8.defined());
  EXPECT_TRUE(g0->weights().blocks[1].ffn2.w8.defined());
  const Tensor yg0 = g0->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(yg0, ya), 1e-5);
  EXPECT_GT(test::rel_l2(yg0, y8), 1e-5);
  EXPECT_LT(test::rel_l2(yg0, ref), 5e-2);
  // A block in both lists runs wholly in bf16.
  EXPECT_TRUE(test::bitwise_equal(fp8_tiny({0, 1}, {0, -1})->forward(x, t, ctx), y32));
  EXPECT_THROW(fp8_tiny({}, {-3}), Error);
  // fp8_config.attention_qk int8: the switch reaches the self-attention (another output, as close).
  auto i8 = WanTransformer::load(tiny_dir());
  i8->enable_fp8({true, true, true, /*qk_int8=*/true});
  const Tensor yi = i8->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(yi, y8), 1e-5);
  EXPECT_LT(test::rel_l2(yi, ref), 5e-2);
  // fp8_config.gemm_format int8: the block linears hold INT8 weights, the per-channel quantisation
  // of the fp32 ones (quantize_rows_int8_ref), and the forward takes them (another output, as close).
  auto g8 = WanTransformer::load(tiny_dir());
  g8->enable_fp8({true, true, true, false, GemmFormat::kInt8});
  const WanLinear& qi = g8->weights().blocks[1].attn1.q;
  ASSERT_TRUE(qi.w8.defined());
  EXPECT_EQ(qi.w8.dtype(), DType::kI8);
  std::vector<int8_t> wi(size_t(qi.w.numel()));
  std::vector<float> si(size_t(qi.w.dim(0)));
  kern::quantize_rows_int8_ref(qi.w.f32(), false, qi.w.dim(0), qi.w.dim(1), qi.w.dim(1), wi.data(), si.data());
  EXPECT_EQ(std::memcmp(wi.data(), qi.w8.raw(), wi.size()), 0);
  EXPECT_EQ(std::memcmp(si.data(), qi.w_scale.raw(), si.size() * 4), 0);
  EXPECT_EQ(g8->weights().blocks[0].ffn2.w8.dtype(), DType::kI8);
  const Tensor yg = g8->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(yg, y8), 1e-5);
  EXPECT_GT(test::rel_l2(yg, y32), 1e-5);
  EXPECT_LT(test::rel_l2(yg, ref), 5e-2);
}

// With LinearRows::kRowByRow a row's result does not depend on the rows computed with it: the rows
// of any split, computed apart, are the whole call's bytes (OpenBLAS's Haswell and Zen sgemm round
// a row by its place in the call, which the mesh tests' fp8 emulation would amplify).
TEST(Fp8Emulation, LinearRowsIndependentOfTheSplit) {
  const int64_t M = 150, K = 64, N = 192;
  const Tensor x = randn({M, K}, 11), w = randn({N, K}, 12), b = randn({N}, 13);
  constexpr LinearRows kRows = LinearRows::kRowByRow;
  const Tensor whole = linear(x, w, b, kRows);  // [M, N]
  for (int64_t cut : {int64_t(1), int64_t(37), int64_t(75), M - 1}) {
    EXPECT_TRUE(test::bitwise_equal(whole.narrow(0, cut), linear(x.narrow(0, cut), w, b, kRows))) << cut;
    EXPECT_TRUE(test::bitwise_equal(whole.narrow(cut, M - cut), linear(x.narrow(cut, M - cut), w, b, kRows))) << cut;
  }
  const Tensor plain = linear(x, w, b);  // one sgemm: the same values up to rounding
  EXPECT_LT(test::rel_l2(whole, plain), 1e-6);
}

// ---- the denoising loop's per-step switch ----------------------------------------------------

std::vector<Tensor> loop(const WanTransformer& m, const Fp8Config& f) {
  DiffusersDir dir(test::golden_dir() + "/wan21-tiny");
  auto sched = make_scheduler(dir.component_config("scheduler"));
  DenoiseSettings st;
  st.num_inference_steps = 4;
  st.guidance_scale = 5.0;
  st.fp8 = f;
  Mesh mesh = test::single_rank_mesh();
  std::vector<Tensor> steps;
  denoise(DenoiseModels{{&m}, {}}, *sched, randn({1, 16, 32}, 5), randn({1, 16, 32}, 6), randn({1, 16, 2, 4, 6}, 7), st, mesh,
          nullptr, [&](const DenoiseStepInfo&, const Tensor& lat) { steps.push_back(lat.clone()); });
  return steps;
}

TEST(Fp8Denoise, Bf16FirstAndLastSteps) {
  auto fp32 = WanTransformer::load(tiny_dir());
  auto fp8 = WanTransformer::load(tiny_dir());
  fp8->enable_fp8({true, true, true});
  fp32->set_row_wise_linears(true);  // the fp32 loop with the row-wise linears of a model that quantises
  const std::vector<Tensor> plain = loop(*fp32, {});
  const std::vector<Tensor> all = loop(*fp8, {});
  Fp8Config every;
  every.bf16_first_steps = 4;
  const std::vector<Tensor> none = loop(*fp8, every);
  Fp8Config first, last;
  first.bf16_first_steps = 1;
  last.bf16_last_steps = 1;
  const std::vector<Tensor> f1 = loop(*fp8, first), l1 = loop(*fp8, last);
  ASSERT_EQ(all.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(test::bitwise_equal(none[size_t(i)], plain[size_t(i)])) << i;  // every step without fp8
    EXPECT_FALSE(test::bitwise_equal(all[size_t(i)], plain[size_t(i)])) << i;
    EXPECT_EQ(test::bitwise_equal(l1[size_t(i)], all[size_t(i)]), i < 3) << i;  // only the last step differs
  }
  EXPECT_TRUE(test::bitwise_equal(f1[0], plain[0]));  // the first step without fp8...
  EXPECT_FALSE(test::bitwise_equal(f1[1], plain[1]));  // ...the second with it
  EXPECT_FALSE(test::bitwise_equal(f1[1], all[1]));
}

// ---- refusal and reports ---------------------------------------------------------------------

TEST(Fp8Refusal, NoFp8DeviceIsARecipeError) {
  Recipe r = parse_recipe("device: cuda\nprecision: fp8\n", "r.yaml", {});
  auto world = test::self_comm();
  auto expect_refused = [&] {
    try {
      refuse_fp8_without_device(r, *world);
      FAIL() << "not refused";
    } catch (const Error& e) {
      EXPECT_EQ(int(e.code()), int(ExitCode::kRecipe));
      EXPECT_NE(e.message().find("precision fp8"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("rank 0's GPU is"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("precision bf16"), std::string::npos) << e.message();
    }
  };
  if (cuda_fp8_available(nullptr))
    EXPECT_NO_THROW(refuse_fp8_without_device(r, *world));
  else
    expect_refused();  // no GPU here, or one without FP8 tensor cores
  setenv("VGEN_INJECT_NO_FP8", "@0", 1);  // the test hook: this rank's GPU counts as one without
  expect_refused();
  unsetenv("VGEN_INJECT_NO_FP8");
  // Not refused: other precisions, other devices.
  EXPECT_NO_THROW(refuse_fp8_without_device(parse_recipe("device: cuda\nprecision: bf16\n", "r.yaml", {}), *world));
  EXPECT_NO_THROW(refuse_fp8_without_device(parse_recipe("device: cpu\nprecision: fp8\n", "r.yaml", {}), *world));
}

TEST(Fp8Reports, TimingAndPlanNameThePrecision) {
  Recipe r = parse_recipe(
      "device: cuda\nprecision: fp8\nfp8_config: {attention: false, bf16_first_steps: 1, bf16_last_steps: 2}\n"
      "generation: {num_inference_steps: 6}\n",
      "r.yaml", {});
  const Json j = precision_report(r);
  EXPECT_EQ(j.at("precision"), "fp8");
  EXPECT_EQ(j.at("compute"), "bf16");
  EXPECT_EQ(j.at("self_attention"), "bf16");
  EXPECT_EQ(j.at("gemm"), "INT8 (block linears)");
  EXPECT_EQ(precision_report(parse_recipe("device: cuda\nprecision: fp8\nfp8_config: {gemm_format: e4m3}\n", "r.yaml",
                                          {})).at("gemm"),
            "fp8 e4m3 (block linears)");
  EXPECT_EQ(j.at("cross_attention"), "bf16");
  EXPECT_EQ(j.at("bf16_steps"), (Json{0, 4, 5}));
  EXPECT_EQ(j.at("emulated"), false);
  EXPECT_EQ(precision_report(parse_recipe("precision: bf16\n", "r.yaml", {})).size(), 2u);
  EXPECT_EQ(precision_report(parse_recipe("device: cuda\nprecision: fp8\n", "r.yaml", {})).at("self_attention"),
            "fp8 e4m3");
  EXPECT_EQ(precision_report(parse_recipe("device: cuda\nprecision: fp8\nfp8_config: {attention_qk: int8}\n", "r.yaml",
                                          {})).at("self_attention"),
            "fp8 (INT8 Q·Kᵀ, e4m3 P·V)");
  EXPECT_EQ(wan_fp8_options(r).keep_weights, true);  // bf16 steps need the bf16 weights
  EXPECT_EQ(wan_fp8_options(parse_recipe("device: cuda\nprecision: fp8\n", "r.yaml", {})).keep_weights, false);

  Recipe p = parse_recipe("model: " + test::golden_dir() + "/wan21-tiny\nprecision: fp8\n"
                          "fp8_config: {bf16_last_steps: 1}\ngeneration: {num_inference_steps: 4}\n",
                          "r.yaml", {});
  const std::string text = format_plan(p, make_plan(p, 1));
  EXPECT_NE(text.find("precision: fp8 (CPU emulation"), std::string::npos) << text;
  EXPECT_NE(text.find("bf16_first/last_steps): 4 (of 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("INT8 block linears + fp32 scales"), std::string::npos) << text;
  EXPECT_NE(text.find("self-attention e4m3, block GEMMs INT8"), std::string::npos) << text;
  Recipe p8 = parse_recipe("model: " + test::golden_dir() +
                               "/wan21-tiny\nprecision: fp8\nfp8_config: {attention_qk: int8, gemm_format: e4m3}\n",
                           "r.yaml", {});
  const std::string t8 = format_plan(p8, make_plan(p8, 1));
  EXPECT_NE(t8.find("self-attention INT8 Q·Kᵀ + e4m3 P·V, block GEMMs e4m3"), std::string::npos) << t8;
  EXPECT_NE(t8.find("e4m3 block linears + fp32 scales"), std::string::npos) << t8;
}

}  // namespace
}  // namespace vgen
