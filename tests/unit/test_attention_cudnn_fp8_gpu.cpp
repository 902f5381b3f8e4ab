// cuDNN's FP8 SDPA (kernels/attention/attention_cudnn_fp8.cuh) against its CPU reference
// (attention_cudnn_fp8_ref.h): the quantisation bit for bit (K's mean, e4m3 bytes, scales), outputs
// and LSE on odd key counts, excluded keys (NaN, never read), head dims 64 / 128 and padded 12 / 96, no valid
// key; the dispatch of cuda_attention_fp8 (the path table: the own kernel on a Hopper by default,
// cuDNN's when attention_config.backend is cudnn); the tiny golden DiT and a 2 × 128-head DiT in fp8
// forced through cuDNN FP8 against the CPU emulation of that path and against the own kernel.
// Skips without a CUDA device or cuDNN; on a GPU before compute capability 9.0 checks the refusal.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "dit_test_util.h"
#include "io/safetensors.h"
#include "kernels/attention/attention_cudnn.cuh"
#include "kernels/attention/attention_cudnn_fp8.cuh"
#include "kernels/attention/attention_cudnn_fp8_ref.h"
#include "kernels/attention/attention_ref.h"
#include "kernels/quant/fp8_e4m3_ref.h"
#include "model/wan/dit/transformer.h"
#include "ops/fp8.h"
#include "ops/path_table.h"

using namespace vgen;
using namespace vgen::testing;
using vgen::test::golden_dir;
using vgen::test::predict_one_rank;

namespace {

int device_cc() {
  int dev = 0, major = 0, minor = 0;
  VGEN_CUDA_CHECK(cudaGetDevice(&dev));
  VGEN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  VGEN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return major * 10 + minor;
}

// cuDNN's FP8 SDPA runs here; before 9.0 its refusal is checked instead (and the test returns).
bool cudnn_fp8_runs_here() {
  std::string why;
  if (!kern::attention_cudnn_built() || !kern::attention_cudnn_available(&why)) return false;
  if (device_cc() >= kCudnnFp8AttentionMinCc) {
    EXPECT_TRUE(kern::attention_cudnn_fp8_available(&why)) << why;  // the start-up probe
    return true;
  }
  EXPECT_FALSE(kern::attention_cudnn_fp8_available(&why));
  EXPECT_NE(why.find("compute capability"), std::string::npos) << why;
  kern::AttnArgs a;
  int dummy = 0;
  a.q = a.k = a.v = &dummy, a.out = &dummy;
  a.B = a.Sq = a.Skv = a.H = 1, a.D = 64, a.num_valid_kv = 1, a.scale = 0.1f;
  Tensor ws = Tensor::empty({int64_t(kern::attention_cudnn_fp8_workspace_bytes(a))}, DType::kU8, Device::kCUDA);
  EXPECT_EQ(kern::attention_fwd_cudnn_fp8(a, ws.raw(), size_t(ws.numel()), compute_stream()), cudaErrorNotSupported);
  return false;
}

#define VGEN_REQUIRE_CUDNN_FP8()                                                      \
  do {                                                                                \
    VGEN_REQUIRE_GPU();                                                               \
    if (!kern::attention_cudnn_built()) GTEST_SKIP() << "built without cuDNN";        \
    if (!cudnn_fp8_runs_here()) return; /* the refusal was checked instead */         \
  } while (0)

struct Cfg {
  int64_t B, Sq, Skv, H, D, nvalid;
};
const Cfg kCfgs[] = {
    {1, 1, 1, 1, 64, 1},       {2, 37, 37, 3, 64, 30},   {1, 130, 130, 4, 128, 130}, {1, 200, 333, 2, 128, 331},
    {2, 77, 129, 3, 64, 129},  {1, 64, 100, 2, 12, 97},  {1, 50, 70, 2, 96, 70},    {1, 513, 1000, 2, 128, 997},
};

struct Data {
  std::vector<float> q, k, v;
};

// bf16-exact inputs, excluded key rows NaN (a read of one poisons the row). V scaled by 3 so its
// amax differs from Q's and K's.
Data make_data(const Cfg& c, uint32_t seed) {
  Data d;
  d.q = rounded_bf16(random_vec(size_t(c.B * c.Sq * c.H * c.D), seed, -2.0f, 2.0f));
  d.k = rounded_bf16(random_vec(size_t(c.B * c.Skv * c.H * c.D), seed + 1, -2.0f, 2.0f));
  d.v = rounded_bf16(random_vec(size_t(c.B * c.Skv * c.H * c.D), seed + 2, -3.0f, 3.0f));
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t j = c.nvalid; j < c.Skv; ++j)
      for (int64_t i = 0; i < c.H * c.D; ++i) {
        d.k[size_t((b * c.Skv + j) * c.H * c.D + i)] = kNaN;
        d.v[size_t((b * c.Skv + j) * c.H * c.D + i)] = kNaN;
      }
  return d;
}

kern::AttnArgs args_of(const Cfg& c, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse) {
  kern::AttnArgs a;
  a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.out = out.raw(), a.lse = lse ? lse->f32() : nullptr;
  a.B = c.B, a.Sq = c.Sq, a.Skv = c.Skv, a.H = c.H, a.D = c.D, a.num_valid_kv = c.nvalid;
  a.scale = 1.0f / std::sqrt(float(c.D));
  return a;
}

// Step 1 alone: K's mean, the e4m3 bytes (unpadded head dims) and the descales exactly as the
// reference (K quantised after the mean is taken out).
void check_quantisation(const Cfg& c, const Data& d, const kern::AttnArgs& a) {
  const size_t bytes = kern::attention_cudnn_fp8_workspace_bytes(a);
  Tensor ws = Tensor::empty({int64_t(bytes)}, DType::kU8, Device::kCUDA);
  ASSERT_EQ(kern::attention_cudnn_fp8_quantize(a, ws.raw(), bytes, compute_stream()), cudaSuccess);
  sync_stream();
  std::vector<uint8_t> host(bytes);
  VGEN_CUDA_CHECK(cudaMemcpy(host.data(), ws.raw(), bytes, cudaMemcpyDeviceToHost));
  const kern::CudnnFp8Buffers buf = kern::attention_cudnn_fp8_buffers(a, host.data());
  const int64_t HD = c.H * c.D;
  std::vector<float> km(size_t(c.B * HD)), ks(size_t(c.B * c.nvalid * HD));
  kern::cudnn_fp8_key_mean_ref(d.k.data(), c.B, c.Skv, c.nvalid, c.H, c.D, km.data());
  for (size_t i = 0; i < km.size(); ++i) ASSERT_EQ(bits(buf.km[i]), bits(km[i])) << "K's mean " << i;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t i = 0; i < c.nvalid * HD; ++i)
      ks[size_t(b * c.nvalid * HD + i)] = d.k[size_t(b * c.Skv * HD + i)] - km[size_t(b * HD + i % HD)];
  struct Op {
    const std::vector<float>& x;
    int64_t S, n;
    const uint8_t* x8;
    int which;
  };
  for (const Op& op : {Op{d.q, c.Sq, c.Sq, buf.q8, 0}, Op{ks, c.nvalid, c.nvalid, buf.k8, 1},
                       Op{d.v, c.Skv, c.nvalid, buf.v8, 2}}) {
    std::vector<uint8_t> ref(size_t(c.B * op.n * HD));
    const float amax = kern::cudnn_fp8_quantize_ref(op.x.data(), c.B, op.S, op.n, HD, ref.data());
    EXPECT_EQ(bits(buf.scalars[kern::kAmaxQ + op.which]), bits(amax)) << "amax of operand " << op.which;
    EXPECT_EQ(bits(buf.scalars[kern::kDescaleQ + op.which]), bits(kern::fp8_dequant_mul(amax)));
    if (kern::attention_cudnn_fp8_head_dim(c.D) != c.D) continue;  // padded rows: the outputs judge them
    int bad = 0;
    for (size_t i = 0; i < ref.size(); ++i)
      if (op.x8[i] != ref[i] && ++bad <= 5) ADD_FAILURE() << "operand " << op.which << " byte " << i;
    EXPECT_EQ(bad, 0);
  }
}

double rel_l2_of(const std::vector<float>& o, const std::vector<float>& r) {
  double num = 0, den = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    const double e = double(o[i]) - r[i];
    num += std::isnan(e) ? INFINITY : e * e;
    den += double(r[i]) * r[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

// Outputs against the reference of the same output type, emulated with key tiles of 64, 128 and
// 256 keys and the whole row (cuDNN does not document its tile: the rel-L2 of each is printed, the
// closest is judged): rel-L2 ≤ 5e-2 (e4m3 O) / 3e-2 (bf16 O) and per element |Δ| ≤ 2⁻²·|ref| +
// 2⁻⁵·amax(v), which hold where the emulated tile differs from cuDNN's (P rounded from another
// running maximum: up to one e4m3 step of each probability, ~3.5% rms of O; an e4m3 O adds one
// step of O where that moves it over a rounding boundary). A wrong scale, a leaked or missing key,
// or NaN are far outside. LSE: the same e4m3 scores on both sides, |Δ| ≤ 2⁻¹⁰·max(1, |lse|).
void compare(const Cfg& c, const Data& d, const std::vector<float>& o, const std::vector<float>* lse, bool e4m3_out) {
  const float scale = 1.0f / std::sqrt(float(c.D));
  std::vector<float> ro, rl(size_t(c.B * c.H * c.Sq));
  double best = INFINITY;
  int64_t best_tile = 0;
  std::printf("[cudnn fp8] B=%lld Sq=%lld nvalid=%lld D=%lld: out rel-L2 vs the reference with key tiles",
              (long long)c.B, (long long)c.Sq, (long long)c.nvalid, (long long)c.D);
  for (int64_t tile : {64, 128, 256, 0}) {
    std::vector<float> r(d.q.size());
    kern::attention_cudnn_fp8_ref(d.q.data(), d.k.data(), d.v.data(), r.data(), rl.data(), c.B, c.Sq, c.Skv, c.H,
                                  c.D, c.nvalid, scale, {e4m3_out, tile});
    const double e = rel_l2_of(o, r);
    std::printf(" %lld: %.3e", (long long)tile, e);
    if (e < best) best = e, best_tile = tile, ro = r;
  }
  std::printf(" (0: the whole row)\n");
  EXPECT_LE(best, e4m3_out ? 5e-2 : 3e-2) << "out rel-L2, best key tile " << best_tile;
  float amax_v = 0.0f;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t i = 0; i < c.nvalid * c.H * c.D; ++i)
      amax_v = std::max(amax_v, std::fabs(d.v[size_t(b * c.Skv * c.H * c.D + i)]));
  int bad = 0;
  for (size_t i = 0; i < o.size(); ++i)
    if (!(std::fabs(double(o[i]) - ro[i]) <= std::ldexp(std::fabs(ro[i]), -2) + std::ldexp(amax_v, -5)) && ++bad <= 5)
      ADD_FAILURE() << "out[" << i << "] = " << o[i] << ", expected " << ro[i] << " (key tile " << best_tile << ")";
  EXPECT_EQ(bad, 0);
  // The unquantised attention is near: fp8 did what attention does.
  std::vector<float> exact(d.q.size());
  kern::attention_ref(d.q.data(), d.k.data(), d.v.data(), exact.data(), nullptr, c.B, c.Sq, c.Skv, c.H, c.D, c.nvalid,
                      scale);
  EXPECT_LE(rel_l2_of(o, exact), 1e-1);  // ~6% here for the reference itself (diffuse random rows)
  if (!lse) return;
  bad = 0;
  for (size_t i = 0; i < rl.size(); ++i)
    if (!(std::fabs((*lse)[i] - rl[i]) <= std::ldexp(std::max(1.0f, std::fabs(rl[i])), -10)) && ++bad <= 5)
      ADD_FAILURE() << "lse[" << i << "] = " << (*lse)[i] << ", expected " << rl[i];
  EXPECT_EQ(bad, 0);
}

}  // namespace

TEST(AttentionCudnnFp8Gpu, MatchesItsReference) {
  VGEN_REQUIRE_CUDNN_FP8();
  const bool e4m3_out = kern::attention_cudnn_fp8_out_type() == kern::CudnnFp8Out::kE4m3;
  std::printf("[cudnn fp8] compute capability %d, cuDNN %lld: %s output\n", device_cc(),
              (long long)kern::attention_cudnn_version(), e4m3_out ? "e4m3" : "bf16");
  uint32_t seed = 500;
  for (const Cfg& c : kCfgs) {
    SCOPED_TRACE(::testing::Message() << "B=" << c.B << " Sq=" << c.Sq << " Skv=" << c.Skv << " H=" << c.H
                                      << " D=" << c.D << " nvalid=" << c.nvalid);
    const Data d = make_data(c, seed += 7);
    Tensor q = device_tensor(d.q, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
    Tensor k = device_tensor(d.k, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
    Tensor v = device_tensor(d.v, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
    for (bool with_lse : {true, false}) {
      Tensor out = poisoned({c.B, c.Sq, c.H, c.D}, DType::kBF16);
      Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
      const kern::AttnArgs a = args_of(c, q, k, v, out, with_lse ? &lse : nullptr);
      if (with_lse) check_quantisation(c, d, a);
      const size_t bytes = kern::attention_cudnn_fp8_workspace_bytes(a);
      Tensor ws = Tensor::empty({int64_t(bytes)}, DType::kU8, Device::kCUDA);
      const cudaError_t e = kern::attention_fwd_cudnn_fp8(a, ws.raw(), bytes, compute_stream());
      if (c.Sq == 1 && device_cc() / 10 == 9) {
        // cuDNN 9.14 on an H100 sends s_q = 1 to its sm80 decode engines, which have no FP8: a clean
        // refusal (the dispatch names it, kUsage), never a launch.
        EXPECT_EQ(e, cudaErrorNotSupported) << kern::attention_cudnn_fp8_last_error();
        continue;
      }
      ASSERT_EQ(e, cudaSuccess) << kern::attention_cudnn_fp8_last_error();
      sync_stream();
      const std::vector<float> o = host_f32(out), l = host_f32(lse);
      compare(c, d, o, with_lse ? &l : nullptr, e4m3_out);
    }
  }
  EXPECT_GT(kern::attention_cudnn_fp8_stats().graphs_built, 0u);
}

TEST(AttentionCudnnFp8Gpu, NoValidKey) {
  VGEN_REQUIRE_CUDNN_FP8();
  const Cfg c{2, 5, 7, 2, 64, 0};
  const Data d = make_data(c, 9);
  Tensor q = device_tensor(d.q, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
  Tensor k = device_tensor(d.k, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
  Tensor v = device_tensor(d.v, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
  Tensor out = poisoned({c.B, c.Sq, c.H, c.D}, DType::kBF16);
  Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
  cuda_attention_cudnn_fp8(q, k, v, out, &lse, 0, 0.125f);
  for (float x : host_f32(out)) ASSERT_EQ(x, 0.0f);
  for (float x : host_f32(lse)) ASSERT_EQ(x, -std::numeric_limits<float>::infinity());
}

// cuda_attention_fp8 follows the path table: cuDNN's FP8 SDPA under backend cudnn (and wherever
// the own kernel does not run), the own kernel on a Hopper with its code otherwise.
TEST(AttentionCudnnFp8Gpu, DispatchFollowsThePathTable) {
  VGEN_REQUIRE_CUDNN_FP8();
  const Cfg c{1, 130, 200, 2, 128, 197};
  const Data d = make_data(c, 31);
  Tensor q = device_tensor(d.q, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
  Tensor k = device_tensor(d.k, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
  Tensor v = device_tensor(d.v, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
  const float scale = 1.0f / std::sqrt(float(c.D));
  for (AttentionBackend b : {AttentionBackend::kCudnn, AttentionBackend::kAuto}) {
    SCOPED_TRACE(attention_backend_name(b));
    const AttentionPath path = device_fp8_attention_path(b, Fp8Config{});
    EXPECT_EQ(path, b == AttentionBackend::kCudnn || !kern::attention_fp8_available() ? AttentionPath::kCudnnFp8
                                                                                        : AttentionPath::kFp8Hopper);
    const uint64_t calls = kern::attention_cudnn_fp8_stats().calls, own = kern::attention_fp8_wgmma_calls();
    Tensor out = poisoned({c.B, c.Sq, c.H, c.D}, DType::kF32);  // f32: through the bf16 copy
    Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
    cuda_attention_fp8(q, k, v, out, &lse, c.nvalid, scale, false, b);
    sync_stream();
    const bool cudnn = path == AttentionPath::kCudnnFp8;
    EXPECT_EQ(kern::attention_cudnn_fp8_stats().calls, calls + (cudnn ? 1 : 0));
    EXPECT_EQ(kern::attention_fp8_wgmma_calls(), own + (cudnn ? 0 : 1));
    if (cudnn) {
      const std::vector<float> o = host_f32(out), l = host_f32(lse);
      compare(c, d, o, &l, kern::attention_cudnn_fp8_out_type() == kern::CudnnFp8Out::kE4m3);
    }
  }
}

// The tiny golden DiT (head dim 12: padded to 64) in fp8 with e4m3 GEMMs, both forced through
// cuDNN FP8 (attention_config.backend cudnn): the device against the CPU emulation of that path
// (the bf16 between ops: the tolerance of test_fp8_gpu's TinyDitAgainstEmulation) and diffusers fp32.
TEST(AttentionCudnnFp8Gpu, TinyDitForcedThroughCudnnAgainstEmulation) {
  VGEN_REQUIRE_CUDNN_FP8();
  WeightStore cases = WeightStore::open(golden_dir() + "/cases/dit_forward.safetensors");
  const AttentionConfig forced{AttentionBackend::kCudnn, {}};
  auto emu = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  auto dev = WanTransformer::load(golden_dir() + "/wan21-tiny/transformer");
  emu->set_attention(forced);
  dev->set_attention(forced);
  emu->enable_fp8({true, true, true});
  dev->to_device(WanDeviceOptions{DType::kBF16});
  dev->enable_fp8({true, true, false});
  const uint64_t calls = kern::attention_cudnn_fp8_stats().calls;
  for (std::string s : {"", "_b2"}) {
    SCOPED_TRACE("output" + s);
    const Tensor x = cases.get_f32("hidden_states" + s), t = cases.get_f32("timestep" + s);
    const Tensor ctx = cases.get_f32("encoder_hidden_states" + s), ref = cases.get_f32("output" + s);
    const Tensor y = predict_one_rank(*dev, x, t, ctx), ye = predict_one_rank(*emu, x, t, ctx);
    const double e_emu = rel_l2(y, ye), e_ref = rel_l2(y, ref);
    std::printf("[cudnn fp8 tiny] output%s: vs emulation %.3e, vs fp32 fixture %.3e (emulation %.3e)\n", s.c_str(),
                e_emu, e_ref, rel_l2(ye, ref));
    EXPECT_LE(e_emu, 3e-2);
    EXPECT_LE(e_ref, 6e-2);
  }
  EXPECT_GT(kern::attention_cudnn_fp8_stats().calls, calls);  // the forced path ran
}

// 2 heads × 128, 192 tokens: forced through cuDNN FP8 against the own kernel (the Hopper default)
// and bf16; both fp8 attentions sit within fp8's distance of bf16.
TEST(AttentionCudnnFp8Gpu, Dit128ForcedThroughCudnn) {
  VGEN_REQUIRE_CUDNN_FP8();
  WanTransformerConfig cfg;
  cfg.num_attention_heads = 2;
  cfg.attention_head_dim = 128;
  cfg.ffn_dim = 512;
  cfg.num_layers = 2;
  cfg.text_dim = 64;
  cfg.validate("test config");
  const Tensor x = Tensor::from_vector(random_vec(size_t(2 * 16 * 3 * 16 * 16), 3), {2, 16, 3, 16, 16});
  const Tensor t = Tensor::from_vector({731.0f, 120.0f}, {2});
  const Tensor ctx = Tensor::from_vector(random_vec(size_t(2 * 9 * 64), 4), {2, 9, 64});
  auto model = [&](AttentionBackend b, bool fp8) {
    auto m = WanTransformer::random_on_device(cfg, WanDeviceOptions{DType::kBF16}, 77);
    m->set_attention({b, {}});
    if (fp8) m->enable_fp8({true, true, false});
    return m;
  };
  const Tensor yc = predict_one_rank(*model(AttentionBackend::kCudnn, true), x, t, ctx);
  const Tensor yb = predict_one_rank(*model(AttentionBackend::kAuto, false), x, t, ctx);
  for (float v : host_f32(yc)) ASSERT_TRUE(std::isfinite(v));
  const double e_bf16 = rel_l2(yc, yb);
  std::printf("[cudnn fp8 2x128] vs bf16 %.3e\n", e_bf16);
  EXPECT_GE(e_bf16, 1e-4);  // fp8 did run
  EXPECT_LE(e_bf16, 1e-1);
  if (kern::attention_fp8_available()) {
    const Tensor yo = predict_one_rank(*model(AttentionBackend::kAuto, true), x, t, ctx);
    const double e_own = rel_l2(yc, yo);
    std::printf("[cudnn fp8 2x128] vs the own FP8 kernel %.3e (own vs bf16 %.3e)\n", e_own, rel_l2(yo, yb));
    EXPECT_LE(e_own, 1e-1);
  }
}

#else
VGEN_GPU_TESTS_NEED_CUDA(AttentionCudnnFp8Gpu)
#endif
