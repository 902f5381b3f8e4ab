// precision fp8 on the device (docs/fp8.md): the DiT with e4m3 block GEMMs (quantize_rows_fp8 +
// linear_fp8, the gate folded into the weight scale) and the FP8 self-attention, against the CPU
// emulation (same quantisation, fp32 math) and the bf16 device path; the tiny golden model (head dim
// 12, widths 24/48: the generic attention kernel and zero-padded GEMM rows) and a 2 × 128-head model
// (the Hopper kernels); weights freed or kept; the phase profiler; the start-up refusal. INT8 GEMMs
// (fp8_config.gemm_format int8): the ops bit for bit against their references, the DiT against its
// emulation.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "dist/communicator.h"
#include "dit_test_util.h"
#include "io/recipe.h"
#include "io/safetensors.h"
#include "kernels/attention/attention_fp8.cuh"
#include "kernels/common/bf16.h"
#include "kernels/gemm/gemm_int8_ref.h"
#include "kernels/quant/quant_ref.h"
#include "model/wan/dit/transformer.h"
#include "ops/fp8.h"
#include "model/wan/dit/fp8_options.h"
#include "pipeline/precision.h"

using namespace vgen;
using namespace vgen::testing;
using vgen::test::golden_dir;
using vgen::test::predict_one_rank;

namespace {

#define VGEN_REQUIRE_FP8()                                                                  \
  do {                                                                                      \
    VGEN_REQUIRE_GPU();                                                                     \
    if (!fp8_runs_here()) return; /* the kernel's refusal checked instead of a skip */     \
  } while (0)

// The tiny golden DiT: device fp8 against the CPU emulation (the difference is the bf16 between
// ops: the bf16 tolerance of a forward), against diffusers fp32 (golden_fp8_tolerance on the GPU),
// and against the device bf16 forward (fp8 did run).
TEST(Fp8Gpu, TinyDitAgainstEmulation) {
  VGEN_REQUIRE_FP8();
  WeightStore cases = WeightStore::open(golden_dir() + "/cases/dit_forward.safetensors");
  auto emu = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  auto dev = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  auto bf16 = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  emu->enable_fp8({true, true, true});
  dev->to_device(WanDeviceOptions{DType::kBF16});
  dev->enable_fp8({true, true, false});
  bf16->to_device(WanDeviceOptions{DType::kBF16});
  for (std::string s : {"", "_b2"}) {
    SCOPED_TRACE("output" + s);
    const Tensor x = cases.get_f32("hidden_states" + s), t = cases.get_f32("timestep" + s);
    const Tensor ctx = cases.get_f32("encoder_hidden_states" + s), ref = cases.get_f32("output" + s);
    const Tensor y = predict_one_rank(*dev, x, t, ctx), ye = predict_one_rank(*emu, x, t, ctx);
    const Tensor yb = predict_one_rank(*bf16, x, t, ctx);
    const double e_emu = rel_l2(y, ye), e_ref = rel_l2(y, ref), e_bf16 = rel_l2(y, yb);
    std::printf("[fp8 gpu tiny] output%s: vs emulation %.3e, vs fp32 fixture %.3e (emulation %.3e), vs bf16 %.3e\n",
                s.c_str(), e_emu, e_ref, rel_l2(ye, ref), e_bf16);
    EXPECT_LE(e_emu, 3e-2);
    EXPECT_LE(e_ref, 6e-2);
    EXPECT_GE(e_bf16, 1e-3);
  }
}

// 2 heads × 128 (the Hopper kernels), 192 tokens, a batch of 2 with different timesteps (per-sample
// gates folded into per-sample weight scales).
struct Case {
  WanTransformerConfig cfg;
  Tensor x, t, ctx;
  Case() {
    cfg.num_attention_heads = 2;
    cfg.attention_head_dim = 128;
    cfg.ffn_dim = 512;
    cfg.num_layers = 2;
    cfg.text_dim = 64;
    cfg.validate("test config");
    x = Tensor::from_vector(random_vec(size_t(2 * 16 * 3 * 16 * 16), 3), {2, 16, 3, 16, 16});
    t = Tensor::from_vector({731.0f, 120.0f}, {2});
    ctx = Tensor::from_vector(random_vec(size_t(2 * 9 * 64), 4), {2, 9, 64});
  }
  std::unique_ptr<WanTransformer> model(const WanDeviceOptions& o, const WanFp8Options* f) const {
    auto m = WanTransformer::random_on_device(cfg, o, 77);
    if (f) m->enable_fp8(*f);
    return m;
  }
};

TEST(Fp8Gpu, HopperShapesFusionsAndProfiler) {
  VGEN_REQUIRE_FP8();
  const Case c;
  const WanFp8Options all{true, true, false};
  WanDeviceOptions o{DType::kBF16}, unfused{DType::kBF16};
  unfused.fused_residual_gemm = false;
  unfused.fused_gelu = false;
  const uint64_t wgmma0 = kern::attention_fp8_wgmma_calls();
  auto m = c.model(o, &all);
  DitPhaseProfiler prof;
  m->device_model()->set_profiler(&prof);
  const Tensor y = predict_one_rank(*m, c.x, c.t, c.ctx);
  m->device_model()->set_profiler(nullptr);
  for (float v : host_f32(y)) ASSERT_TRUE(std::isfinite(v));
  EXPECT_GT(kern::attention_fp8_wgmma_calls(), wgmma0);  // D = 128: the wgmma kernel served
  EXPECT_GT(prof.calls(DitPhaseProfiler::kGemm), 0);
  EXPECT_GT(prof.calls(DitPhaseProfiler::kSelfAttention), 0);
  EXPECT_GT(prof.seconds(DitPhaseProfiler::kGemm), 0.0);
  const Tensor yb = predict_one_rank(*c.model(o, nullptr), c.x, c.t, c.ctx);
  const Tensor yu = predict_one_rank(*c.model(unfused, &all), c.x, c.t, c.ctx);
  const double e_bf16 = rel_l2(y, yb), e_unfused = rel_l2(y, yu);
  std::printf("[fp8 gpu 2x128] vs bf16 %.3e, gate folded into the scales vs separate residual ops %.3e\n", e_bf16,
              e_unfused);
  EXPECT_GE(e_bf16, 1e-3);
  EXPECT_LE(e_bf16, 1e-1);
  // The two differ by bf16 roundings (and the GELU epilogue's tanh) that flip some e4m3 codes
  // downstream: less than the whole fp8 error (on the CPU a 2e-3 input perturbation moves the fp8
  // forward by half its error against fp32, docs/fp8.md).
  EXPECT_LE(e_unfused, e_bf16);
  // Each part alone is used and changes the result.
  const WanFp8Options att{true, false, false}, gemm{false, true, false};
  EXPECT_GE(rel_l2(predict_one_rank(*c.model(o, &att), c.x, c.t, c.ctx), yb), 1e-4);
  EXPECT_GE(rel_l2(predict_one_rank(*c.model(o, &gemm), c.x, c.t, c.ctx), yb), 1e-4);
}

// The INT8 ops of ops/fp8.h: the device quantisation of a weight and an activation (K = 40: padded
// to 48 with zero columns) bit for bit as quantize_rows_int8_ref, cuda_linear_fp8 (bias, GELU) and
// cuda_linear_fp8_add_ (in place, a folded scale) as linear_int8_ref (GELU: within a bf16 ulp, the
// kernel's tanhf), and a format mismatch refused.
TEST(Fp8Gpu, Int8OpsMatchTheReferences) {
  VGEN_REQUIRE_FP8();
  const int64_t M = 150, N = 72, K = 40, Kp = fp8_padded_k(K);
  const std::vector<float> xv = maybe_round(random_vec(size_t(M * K), 11, -3.0f, 3.0f), DType::kBF16);
  const std::vector<float> wv = maybe_round(random_vec(size_t(N * K), 12, -0.1f, 0.1f), DType::kBF16);
  const std::vector<float> bv = maybe_round(random_vec(size_t(N), 13), DType::kBF16);
  const Tensor x = device_tensor(xv, {3, M / 3, K}, DType::kBF16), w = device_tensor(wv, {N, K}, DType::kBF16);
  const Tensor b = device_tensor(bv, {N}, DType::kBF16);
  // Host references on the same values, zero-padded to Kp.
  std::vector<float> xp(size_t(M * Kp), 0.0f), wp(size_t(N * Kp), 0.0f);
  for (int64_t r = 0; r < M; ++r) std::copy_n(&xv[size_t(r * K)], K, &xp[size_t(r * Kp)]);
  for (int64_t r = 0; r < N; ++r) std::copy_n(&wv[size_t(r * K)], K, &wp[size_t(r * Kp)]);
  std::vector<int8_t> x8(size_t(M * Kp)), w8(size_t(N * Kp));
  std::vector<float> sx(static_cast<size_t>(M)), sw(static_cast<size_t>(N));
  kern::quantize_rows_int8_ref(xp.data(), false, M, Kp, Kp, x8.data(), sx.data());
  kern::quantize_rows_int8_ref(wp.data(), false, N, Kp, Kp, w8.data(), sw.data());
  const Fp8Weight qw = cuda_quantize_weight(w, GemmFormat::kInt8);
  const Fp8Activation qx = cuda_quantize_activation(x, GemmFormat::kInt8);
  ASSERT_EQ(qw.w8.dtype(), DType::kI8);
  ASSERT_EQ(qx.x8.dtype(), DType::kI8);
  EXPECT_EQ(download<int8_t>(qw.w8, w8.size()), w8);
  EXPECT_EQ(download<float>(qw.scale, sw.size()), sw);
  EXPECT_EQ(download<int8_t>(qx.x8, x8.size()), x8);
  EXPECT_EQ(download<float>(qx.scale, sx.size()), sx);
  std::vector<uint16_t> bb(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) bb[size_t(n)] = kern::f32_to_bf16(bv[size_t(n)]);
  auto bf16_bits = [](const Tensor& t) { return download<uint16_t>(t, size_t(t.numel())); };
  auto ulps = [](uint16_t a, uint16_t c) { return std::abs(int(int16_t(a)) - int(int16_t(c))); };
  for (bool gelu : {false, true}) {
    std::vector<uint16_t> want(size_t(M * N));
    kern::linear_int8_ref(x8.data(), sx.data(), w8.data(), sw.data(), bb.data(), nullptr, want.data(), M, N, Kp, gelu);
    const Tensor y = cuda_linear_fp8(x, qw, b, DType::kBF16, gelu ? Activation::kGeluTanh : Activation::kNone);
    ASSERT_EQ(y.shape(), (Shape{3, M / 3, N}));
    const std::vector<uint16_t> got = bf16_bits(y);
    int worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, ulps(got[i], want[i]));
    EXPECT_LE(worst, gelu ? 1 : 0) << "gelu " << gelu;
  }
  // In place with a per-channel gate folded into the scale (gated_linear_add's form).
  const std::vector<float> yv = maybe_round(random_vec(size_t(M * N), 14), DType::kBF16);
  Tensor y = device_tensor(yv, {3, M / 3, N}, DType::kBF16);
  const Tensor g = device_tensor(random_vec(size_t(N), 15, 0.5f, 1.5f), {N}, DType::kF32);
  const Tensor sg = cuda_fp8_scale_vector(qw.scale, g);
  std::vector<uint16_t> want(size_t(M * N));
  for (size_t i = 0; i < want.size(); ++i) want[i] = kern::f32_to_bf16(yv[i]);
  const std::vector<float> sgv = download<float>(sg, size_t(N));
  kern::linear_int8_ref(x8.data(), sx.data(), w8.data(), sgv.data(), nullptr, want.data(), want.data(), M, N, Kp, false);
  cuda_linear_fp8_add_(y, x, qw.w8, sg, Tensor());
  EXPECT_EQ(bf16_bits(y), want);
  // An e4m3 activation for an INT8 weight is an error, not a silent mix.
  EXPECT_THROW(cuda_linear_fp8(cuda_quantize_activation(x), qw, b, DType::kBF16), Error);
}

// The DiT with INT8 GEMMs: the tiny model against its CPU emulation (the bf16-between-ops tolerance)
// and diffusers fp32, another output than the e4m3 GEMMs; the 2 × 128-head model (the Hopper
// kernels, the fused norms' INT8 output, per-sample gates folded into the INT8 scales) against the
// same with the residual ops unfused, and its weights INT8 on the device.
TEST(Fp8Gpu, Int8GemmDit) {
  VGEN_REQUIRE_FP8();
  WeightStore cases = WeightStore::open(golden_dir() + "/cases/dit_forward.safetensors");
  const WanFp8Options emu_o{true, true, true, false, GemmFormat::kInt8}, dev_o{true, true, false, false,
                                                                                GemmFormat::kInt8};
  auto emu = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  auto dev = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  auto e4m3 = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  emu->enable_fp8(emu_o);
  dev->to_device(WanDeviceOptions{DType::kBF16});
  dev->enable_fp8(dev_o);
  e4m3->to_device(WanDeviceOptions{DType::kBF16});
  e4m3->enable_fp8({true, true, false});
  for (std::string s : {"", "_b2"}) {
    SCOPED_TRACE("output" + s);
    const Tensor x = cases.get_f32("hidden_states" + s), t = cases.get_f32("timestep" + s);
    const Tensor ctx = cases.get_f32("encoder_hidden_states" + s), ref = cases.get_f32("output" + s);
    const Tensor y = predict_one_rank(*dev, x, t, ctx), ye = predict_one_rank(*emu, x, t, ctx);
    const double e_emu = rel_l2(y, ye), e_ref = rel_l2(y, ref), e_e4m3 = rel_l2(y, predict_one_rank(*e4m3, x, t, ctx));
    std::printf("[int8 gemm gpu tiny] output%s: vs emulation %.3e, vs fp32 fixture %.3e (emulation %.3e), vs e4m3 "
                "GEMMs %.3e\n", s.c_str(), e_emu, e_ref, rel_l2(ye, ref), e_e4m3);
    EXPECT_LE(e_emu, 3e-2);
    EXPECT_LE(e_ref, 6e-2);
    EXPECT_GE(e_e4m3, 1e-4);
  }
  const Case c;
  WanDeviceOptions o{DType::kBF16}, unfused{DType::kBF16};
  unfused.fused_residual_gemm = false;
  unfused.fused_gelu = false;
  auto m = c.model(o, &dev_o);
  EXPECT_EQ(m->mutable_device_model()->mutable_weights().blocks[1].ffn2.w8.dtype(), DType::kI8);
  const Tensor y = predict_one_rank(*m, c.x, c.t, c.ctx);
  for (float v : host_f32(y)) ASSERT_TRUE(std::isfinite(v));
  const Tensor yb = predict_one_rank(*c.model(o, nullptr), c.x, c.t, c.ctx);
  const Tensor yu = predict_one_rank(*c.model(unfused, &dev_o), c.x, c.t, c.ctx);
  const double e_bf16 = rel_l2(y, yb), e_unfused = rel_l2(y, yu);
  std::printf("[int8 gemm gpu 2x128] vs bf16 %.3e, fused vs unfused residual ops %.3e\n", e_bf16, e_unfused);
  EXPECT_GE(e_bf16, 1e-3);
  EXPECT_LE(e_bf16, 1e-1);
  EXPECT_LE(e_unfused, e_bf16);
}

TEST(Fp8Gpu, Bf16WeightsFreedOrKept) {
  VGEN_REQUIRE_FP8();
  const Case c;
  const WanDeviceOptions o{DType::kBF16};
  const WanFp8Options freed{true, true, false}, kept{true, true, true};
  auto mb = c.model(o, nullptr), mf = c.model(o, &freed), mk = c.model(o, &kept);
  EXPECT_LT(mf->device_model()->weight_bytes(), mb->device_model()->weight_bytes());
  EXPECT_GT(mk->device_model()->weight_bytes(), mb->device_model()->weight_bytes());
  const WanBlockWeights& bf = mf->mutable_device_model()->mutable_weights().blocks[0];
  EXPECT_FALSE(bf.attn1.q.w.defined());
  EXPECT_TRUE(bf.attn1.q.w8.defined());
  EXPECT_TRUE(bf.attn2.k.w.defined());  // the text K/V projections stay bf16
  const Tensor yb = predict_one_rank(*mb, c.x, c.t, c.ctx);
  EXPECT_EQ(rel_l2(predict_one_rank(*mf, c.x, c.t, c.ctx), predict_one_rank(*mk, c.x, c.t, c.ctx)), 0.0);
  {
    const StepPolicy bf16_step{/*fp8=*/false};  // a bf16 step: the kept weights, exactly the bf16 model
    EXPECT_EQ(rel_l2(predict_one_rank(*mk, c.x, c.t, c.ctx, bf16_step), yb), 0.0);
    EXPECT_THROW(predict_one_rank(*mf, c.x, c.t, c.ctx, bf16_step), Error);  // no bf16 weights left to run it
  }
}

TEST(Fp8Gpu, RefusalNamesTheGpu) {
  VGEN_REQUIRE_GPU();
  const Recipe r = parse_recipe("device: cuda\nprecision: fp8\n", "r.yaml", {});
  auto world = make_self_communicator();
  std::string gpu;
  if (cuda_fp8_available(&gpu)) {
    EXPECT_NO_THROW(refuse_fp8_without_device(r, *world));
  }
  setenv("VGEN_INJECT_NO_FP8", "1", 1);
  try {
    refuse_fp8_without_device(r, *world);
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(ExitCode::kRecipe));
    EXPECT_NE(e.message().find(gpu), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("compute capability"), std::string::npos) << e.message();
  }
  unsetenv("VGEN_INJECT_NO_FP8");
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(Fp8Gpu)
#endif
