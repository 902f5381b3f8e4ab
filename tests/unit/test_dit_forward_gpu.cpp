// The tiny golden Wan DiT (tests/golden/wan21-tiny/transformer: 2 heads × 12, so the attention
// kernel's generic head-dim path) run on the device against diffusers' output: fp32 rel-L2 ≤ 1e-4,
// bf16 ≤ 3e-2 (tests/golden/README.md), for B = 1 and the batch of 2; the fp32 device forward
// also against the CPU forward; the same for the TI2V transformer's per-token timesteps
// (tests/golden-i2v-dit). Random-weight device models: finite, deterministic, odd shapes; per-token
// gates beside the per-sample gate folds.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <cmath>
#include <string>

#include "dit_test_util.h"
#include "io/safetensors.h"
#include "model/wan/dit/transformer.h"
#include "model/wan/dit/transformer_block.h"

using namespace vgen;
using namespace vgen::testing;
using vgen::test::golden_dir;
using vgen::test::per_token_timesteps;
using vgen::test::predict_one_rank;

namespace {

// Per-token timesteps [B, S] (Wan 2.2 TI2V, the first frame's tokens at 0) on the tiny TI2V
// transformer, 45 tokens: against diffusers, the fp32 device forward against the CPU one, device
// timesteps as host ones.
void ti2v_case(DType dt, double tol) {
  const std::string dir = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v";
  WeightStore cases = WeightStore::open(dir + "-dit/cases/dit_forward_ti2v_pad.safetensors");
  auto model = WanTransformer::load(dir + "/wan22-ti2v-tiny/transformer");
  auto cpu_model = WanTransformer::load(dir + "/wan22-ti2v-tiny/transformer");
  model->to_device(WanDeviceOptions{dt});
  for (std::string suffix : {"", "_b2"}) {
    SCOPED_TRACE("ti2v output" + suffix + " " + dtype_name(dt));
    Tensor x = cases.get_f32("hidden_states" + suffix), t = cases.get_f32("timestep" + suffix);
    Tensor ctx = cases.get_f32("encoder_hidden_states" + suffix), ref = cases.get_f32("output" + suffix);
    ASSERT_EQ(t.ndim(), 2);  // [B, S]
    Tensor out = predict_one_rank(*model, x, t, ctx);
    const double err = rel_l2(out, ref);
    std::printf("[dit gpu %s] ti2v output%s rel-L2 %.3e (tol %.0e)\n", dtype_name(dt), suffix.c_str(), err, tol);
    EXPECT_LE(err, tol);
    if (dt == DType::kF32) {
      EXPECT_LE(rel_l2(out, predict_one_rank(*cpu_model, x, t, ctx)), 2e-5);
    }
    EXPECT_EQ(rel_l2(predict_one_rank(*model, x, t.to(Device::kCUDA), ctx), out), 0.0);
  }
}

void golden_case(DType dt, double tol) {
  WeightStore cases = WeightStore::open(golden_dir() + "/cases/dit_forward.safetensors");
  auto model = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  auto cpu_model = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  model->to_device(WanDeviceOptions{dt});
  ASSERT_TRUE(model->on_device());
  int ran = 0;
  for (std::string suffix : {"", "_b2"}) {
    if (!cases.has("output" + suffix)) continue;
    SCOPED_TRACE("output" + suffix + " " + dtype_name(dt));
    Tensor x = cases.get_f32("hidden_states" + suffix), t = cases.get_f32("timestep" + suffix);
    Tensor ctx = cases.get_f32("encoder_hidden_states" + suffix), ref = cases.get_f32("output" + suffix);
    Tensor out = predict_one_rank(*model, x, t, ctx);
    ASSERT_TRUE(out.is_cpu());
    ASSERT_EQ(out.shape(), ref.shape());
    const double err = rel_l2(out, ref);
    std::printf("[dit gpu %s] output%s rel-L2 %.3e (tol %.0e)\n", dtype_name(dt), suffix.c_str(), err, tol);
    EXPECT_LE(err, tol);
    if (dt == DType::kF32) {  // the device fp32 path against the CPU reference path
      const double e2 = rel_l2(out, predict_one_rank(*cpu_model, x, t, ctx));
      std::printf("[dit gpu f32] output%s vs CPU forward rel-L2 %.3e\n", suffix.c_str(), e2);
      EXPECT_LE(e2, 2e-5);
    }
    // Device inputs give the same result as host inputs.
    Tensor out_dev_in = predict_one_rank(*model, x.to(Device::kCUDA), t.to(Device::kCUDA), ctx.to(Device::kCUDA));
    EXPECT_EQ(rel_l2(out_dev_in, out), 0.0);
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

}  // namespace

TEST(DitForwardGpu, GoldenFp32) {
  VGEN_REQUIRE_GPU();
  golden_case(DType::kF32, 1e-4);
}

TEST(DitForwardGpu, GoldenBf16) {
  VGEN_REQUIRE_GPU();
  golden_case(DType::kBF16, 3e-2);
}

TEST(DitForwardGpu, PerTokenTimestepsGolden) {
  VGEN_REQUIRE_GPU();
  ti2v_case(DType::kF32, 1e-4);
  ti2v_case(DType::kBF16, 3e-2);
}

// The same model through forward_local twice in one process (cached RoPE rows, reused buffers):
// identical results; and WanTransformer::forward returns the device prediction.
TEST(DitForwardGpu, RepeatableAndForward) {
  VGEN_REQUIRE_GPU();
  WeightStore cases = WeightStore::open(golden_dir() + "/cases/dit_forward.safetensors");
  auto model = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  model->to_device(WanDeviceOptions{DType::kBF16});
  Tensor x = cases.get_f32("hidden_states"), t = cases.get_f32("timestep"),
         ctx = cases.get_f32("encoder_hidden_states");
  Tensor a = predict_one_rank(*model, x, t, ctx), b = predict_one_rank(*model, x, t, ctx);
  EXPECT_EQ(rel_l2(a, b), 0.0);
  Tensor f = model->forward(x, t, ctx);
  EXPECT_FALSE(f.is_cpu());
  EXPECT_EQ(f.dtype(), DType::kF32);
  EXPECT_EQ(rel_l2(f, a), 0.0);
}

// Random device weights (the benchmark's model) on a small config with odd sizes: finite output of
// the right shape, the same for the same seed, different for another seed; bf16 and fp32 agree
// to bf16 accuracy.
TEST(DitForwardGpu, RandomWeights) {
  VGEN_REQUIRE_GPU();
  WanTransformerConfig cfg;
  cfg.num_attention_heads = 3;
  cfg.attention_head_dim = 24;
  cfg.ffn_dim = 100;
  cfg.num_layers = 2;
  cfg.text_dim = 40;
  cfg.validate("test config");
  const int64_t B = 1, T = 3, H = 6, W = 10, L = 7;
  Tensor x = Tensor::from_vector(random_vec(size_t(B * 16 * T * H * W), 1), {B, 16, T, H, W});
  Tensor t = Tensor::from_vector({731.0f}, {1});
  Tensor ctx = Tensor::from_vector(random_vec(size_t(B * L * cfg.text_dim), 2), {B, L, cfg.text_dim});
  auto m1 = WanTransformer::random_on_device(cfg, WanDeviceOptions{DType::kBF16}, 5);
  auto m2 = WanTransformer::random_on_device(cfg, WanDeviceOptions{DType::kBF16}, 5);
  auto m3 = WanTransformer::random_on_device(cfg, WanDeviceOptions{DType::kBF16}, 6);
  auto m32 = WanTransformer::random_on_device(cfg, WanDeviceOptions{DType::kF32}, 5);
  Tensor a = predict_one_rank(*m1, x, t, ctx);
  ASSERT_EQ(a.shape(), (Shape{B, 16, T, H, W}));
  for (float v : host_f32(a)) ASSERT_TRUE(std::isfinite(v));
  EXPECT_EQ(rel_l2(predict_one_rank(*m2, x, t, ctx), a), 0.0);
  EXPECT_GT(rel_l2(predict_one_rank(*m3, x, t, ctx), a), 1e-2);
  const double e = rel_l2(a, predict_one_rank(*m32, x, t, ctx));
  std::printf("[dit gpu random] bf16 vs fp32 rel-L2 %.3e\n", e);
  EXPECT_LE(e, 3e-2);
}

// A model whose block width the fused norm kernels take (2 heads × 128 = 256), three blocks, a batch
// of 2 of T × H × W latents with timesteps t0, t1 (different ones: different gates per sample); inputs
// from `seed`.
struct BlockCase {
  WanTransformerConfig cfg;
  Tensor x, t, ctx;
  BlockCase(uint32_t seed, int64_t T, int64_t H, int64_t W, float t0, float t1, bool cross_attn_norm = true) {
    cfg.num_attention_heads = 2;
    cfg.attention_head_dim = 128;
    cfg.ffn_dim = 384;
    cfg.num_layers = 3;
    cfg.text_dim = 40;
    cfg.cross_attn_norm = cross_attn_norm;
    cfg.validate("test config");
    const int64_t B = 2, L = 5;
    x = Tensor::from_vector(random_vec(size_t(B * 16 * T * H * W), seed), {B, 16, T, H, W});
    t = Tensor::from_vector({t0, t1}, {2});
    ctx = Tensor::from_vector(random_vec(size_t(B * L * cfg.text_dim), seed + 1), {B, L, cfg.text_dim});
  }
  int64_t tokens() const { return x.dim(2) * x.dim(3) * x.dim(4) / 4; }  // per sample, patch 1×2×2
  Tensor run(const WanDeviceOptions& o, uint64_t weight_seed) const {
    return predict_one_rank(*WanTransformer::random_on_device(cfg, o, weight_seed), x, t, ctx);
  }
};

// With the residual adds in the norms (fused_residual_gemm off), adding them inside the norms' pass
// gives the same forward, bit for bit, as the separate ops.
TEST(DitForwardGpu, FusedResidualNormsEqualSeparateOps) {
  VGEN_REQUIRE_GPU();
  const BlockCase c(11, 2, 6, 8, 731.0f, 12.0f);
  for (DType dt : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dt));
    WanDeviceOptions fused{dt}, separate{dt};
    fused.fused_residual_gemm = separate.fused_residual_gemm = false;  // the residual adds in the norms
    separate.fused_residual_norm = false;
    Tensor a = c.run(fused, 7), b = c.run(separate, 7);
    for (float v : host_f32(a)) ASSERT_TRUE(std::isfinite(v));
    EXPECT_EQ(host_f32(a), host_f32(b));
  }
}

// The residual adds in the GEMM epilogues (the default: gates folded into the weights) against the
// adds in the norms, with per-sample gates (two timesteps) and one gate for both samples (one
// timestep), with and without the cross-attention norm; 480 tokens per sample, so the gates of the
// O-projection (K 256) and of FFN2 (K 384) are folded. fp32: the paths differ in rounding order only
// (measured 1.9e-7 on the H200). bf16: the folded gate moves a bf16 rounding from the GEMM's output
// to its weight, so both paths are about as far from the fp32 forward (measured 6.09e-3 against
// 6.17e-3); 25% more would be a real loss of accuracy.
TEST(DitForwardGpu, ResidualInGemmEpilogueMatchesNorms) {
  VGEN_REQUIRE_GPU();
  for (bool one_timestep : {false, true})
    for (bool cross_attn_norm : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "one timestep " << one_timestep << " cross_attn_norm " << cross_attn_norm);
      const BlockCase c(21, 3, 16, 40, 731.0f, one_timestep ? 731.0f : 12.0f, cross_attn_norm);
      const int64_t copies = one_timestep ? 1 : 2;
      ASSERT_TRUE(folds_gate(2 * c.tokens(), c.cfg.dim(), copies));
      ASSERT_TRUE(folds_gate(2 * c.tokens(), c.cfg.ffn_dim, copies));
      auto run = [&](DType dt, bool in_gemm) {
        WanDeviceOptions o{dt};
        o.fused_residual_gemm = in_gemm;
        return c.run(o, 9);
      };
      const Tensor ref = run(DType::kF32, false);
      const double e32 = rel_l2(run(DType::kF32, true), ref);
      const double e_gemm = rel_l2(run(DType::kBF16, true), ref), e_norm = rel_l2(run(DType::kBF16, false), ref);
      std::printf("[dit gpu residual in gemm] one timestep %d cross_attn_norm %d: fp32 %.3e, bf16 vs fp32: in gemm "
                  "%.3e, in norms %.3e\n",
                  int(one_timestep), int(cross_attn_norm), e32, e_gemm, e_norm);
      EXPECT_LE(e32, 2e-6);
      EXPECT_GT(e_norm, 0.0);
      EXPECT_LE(e_gemm, 1.25 * e_norm);
    }
}

// Per-token timesteps with every token at its sample's t against the per-sample timesteps [B]: bit
// for bit with the residual adds in the norms (the same values per token through the fused norm
// kernels), and within rounding order where the [B] forward folds its gates into the GEMM epilogues
// and the per-token one adds them in the norms (as ResidualInGemmEpilogueMatchesNorms, fp32).
TEST(DitForwardGpu, PerTokenTimestepsMatchPerSample) {
  VGEN_REQUIRE_GPU();
  const BlockCase c(31, 3, 16, 40, 731.0f, 12.0f);
  const Tensor t2 = per_token_timesteps(c.t, c.tokens());  // [2, S]
  for (DType dt : {DType::kF32, DType::kBF16})
    for (bool in_gemm : {false, true}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " residual in gemm " << in_gemm);
      WanDeviceOptions o{dt};
      o.fused_residual_gemm = in_gemm;
      auto m = WanTransformer::random_on_device(c.cfg, o, 13);
      const Tensor a = predict_one_rank(*m, c.x, c.t, c.ctx), b = predict_one_rank(*m, c.x, t2, c.ctx);
      for (float v : host_f32(b)) ASSERT_TRUE(std::isfinite(v));
      const double e = rel_l2(b, a);
      std::printf("[dit gpu per-token] %s residual in gemm %d: vs per-sample rel-L2 %.3e\n", dtype_name(dt),
                  int(in_gemm), e);
      EXPECT_LE(e, !in_gemm ? 0.0 : dt == DType::kF32 ? 2e-6 : 3e-2);
    }
}

#else
VGEN_GPU_TESTS_NEED_CUDA(DitForwardGpu)
#endif
