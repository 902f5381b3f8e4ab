// Flash attention (bf16, tensor cores), fp32 attention and the LSE merge on the device against
// attention_ref / attention_merge_ref: odd lengths, heads and head dims, num_valid < Skv with NaN in
// the excluded keys, no valid key, strided (fused QKV) inputs, a split-KV merge, and the remainder of a
// key split folded into the main range (attention_tail_merge_bf16 against attention_tail_merge_ref).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <limits>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_ref.h"
#include "ops/device_ops.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

struct Cfg {
  int64_t B, Sq, Skv, H, D, nvalid;
  float amp;  // input amplitude: larger values give peaked softmax rows
};
const Cfg kCfgs[] = {
    {1, 1, 1, 1, 128, 1, 1.0f},     {2, 37, 53, 3, 64, 41, 1.0f},     {1, 130, 130, 2, 128, 130, 2.0f},
    {2, 65, 200, 2, 12, 150, 1.0f}, {1, 100, 77, 5, 40, 77, 1.0f},    {1, 64, 64, 1, 33, 20, 1.0f},
    {3, 17, 129, 2, 96, 64, 3.0f},  {1, 200, 1000, 4, 128, 999, 1.0f}, {1, 31, 7, 2, 128, 3, 4.0f},
    {1, 70, 129, 1, 8, 128, 1.0f},  {2, 5, 300, 3, 16, 257, 2.0f},
};


struct Data {
  std::vector<float> q, k, v;
};

// Keys >= nvalid hold NaN: the kernels must never read them.
Data make_data(const Cfg& c, bool bf16, uint32_t seed) {
  Data d;
  d.q = random_vec(size_t(c.B * c.Sq * c.H * c.D), seed, -c.amp, c.amp);
  d.k = random_vec(size_t(c.B * c.Skv * c.H * c.D), seed + 1, -c.amp, c.amp);
  d.v = random_vec(size_t(c.B * c.Skv * c.H * c.D), seed + 2, -1.0f, 1.0f);
  if (bf16) {
    d.q = rounded_bf16(d.q);
    d.k = rounded_bf16(d.k);
    d.v = rounded_bf16(d.v);
  }
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t j = std::max<int64_t>(c.nvalid, 0); j < c.Skv; ++j)
      for (int64_t i = 0; i < c.H * c.D; ++i) {
        d.k[size_t((b * c.Skv + j) * c.H * c.D + i)] = kNaN;
        d.v[size_t((b * c.Skv + j) * c.H * c.D + i)] = kNaN;
      }
  return d;
}

// Error bounds per (b, h, query) from the arithmetic of a correct kernel:
//  es   = D·2⁻²⁴·scale·max_j Σ_d|q_d k_jd|  bounds the fp32 score error (any summation order),
//  a bf16 P changes each weight by ≤ 2⁻⁹ (allowed 2⁻⁸), fp32 sums over n keys add ≤ n·2⁻²⁴,
//  a bf16 output adds half an ulp (2⁻⁸ relative).
struct Bounds {
  std::vector<double> es, vmax;  // [B, H, Sq]
};
Bounds bounds(const Cfg& c, const Data& d, float scale) {
  Bounds r;
  const int64_t nk = std::clamp<int64_t>(c.nvalid, 0, c.Skv);
  r.es.assign(size_t(c.B * c.H * c.Sq), 0.0);
  r.vmax.assign(size_t(c.B * c.H * c.Sq), 0.0);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h) {
      double vm = 0;
      for (int64_t j = 0; j < nk; ++j)
        for (int64_t x = 0; x < c.D; ++x) vm = std::max(vm, double(std::fabs(d.v[size_t(((b * c.Skv + j) * c.H + h) * c.D + x)])));
      for (int64_t i = 0; i < c.Sq; ++i) {
        double es = 0;
        for (int64_t j = 0; j < nk; ++j) {
          double s = 0;
          for (int64_t x = 0; x < c.D; ++x)
            s += std::fabs(double(d.q[size_t(((b * c.Sq + i) * c.H + h) * c.D + x)]) *
                           d.k[size_t(((b * c.Skv + j) * c.H + h) * c.D + x)]);
          es = std::max(es, s);
        }
        const size_t at = size_t((b * c.H + h) * c.Sq + i);
        r.es[at] = double(c.D) * std::ldexp(1.0, -24) * scale * es;
        r.vmax[at] = vm;
      }
    }
  return r;
}

enum class Kind { kBf16OutBf16, kBf16OutF32, kF32, kWgmma };

void check_case(const Cfg& c, Kind kind, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "B=" << c.B << " Sq=" << c.Sq << " Skv=" << c.Skv << " H=" << c.H
                                    << " D=" << c.D << " nvalid=" << c.nvalid << " kind=" << int(kind));
  const bool bf16_in = kind != Kind::kF32;
  const float scale = 1.0f / std::sqrt(float(c.D));
  Data d = make_data(c, bf16_in, seed);
  const DType in_dt = bf16_in ? DType::kBF16 : DType::kF32;
  const DType out_dt = kind == Kind::kBf16OutBf16 || kind == Kind::kWgmma ? DType::kBF16 : DType::kF32;
  Tensor q = device_tensor(d.q, {c.B, c.Sq, c.H, c.D}, in_dt);
  Tensor k = device_tensor(d.k, {c.B, c.Skv, c.H, c.D}, in_dt);
  Tensor v = device_tensor(d.v, {c.B, c.Skv, c.H, c.D}, in_dt);
  Tensor out = Tensor::empty({c.B, c.Sq, c.H, c.D}, out_dt, Device::kCUDA);
  Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
  if (kind == Kind::kWgmma) {
    kern::AttnArgs a;
    a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.out = out.raw(), a.lse = lse.f32();
    a.B = c.B, a.Sq = c.Sq, a.Skv = c.Skv, a.H = c.H, a.D = c.D, a.num_valid_kv = c.nvalid, a.scale = scale;
    ASSERT_EQ(kern::attention_fwd_wgmma_bf16(a, compute_stream()), cudaSuccess);
  } else {
    cuda_attention(q, k, v, out, &lse, c.nvalid, scale);
  }
  std::vector<float> o = host_f32(out), l = host_f32(lse);

  std::vector<float> ro(o.size()), rl(l.size());
  kern::attention_ref(d.q.data(), d.k.data(), d.v.data(), ro.data(), rl.data(), c.B, c.Sq, c.Skv, c.H, c.D, c.nvalid,
                      scale);
  const Bounds bd = bounds(c, d, scale);
  const int64_t nk = std::clamp<int64_t>(c.nvalid, 0, c.Skv);
  const double sum_err = double(nk + 4) * std::ldexp(1.0, -24);
  int64_t bad = 0;
  double max_ref = 0;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t i = 0; i < c.Sq; ++i)
      for (int64_t h = 0; h < c.H; ++h) {
        const size_t at = size_t((b * c.H + h) * c.Sq + i);
        const double es = bd.es[at], vm = bd.vmax[at];
        for (int64_t x = 0; x < c.D; ++x) {
          const size_t oi = size_t(((b * c.Sq + i) * c.H + h) * c.D + x);
          const double ref = ro[oi];
          double tol = (2.0 * es + 2.0 * sum_err) * vm + 1e-7;
          if (bf16_in) tol += std::ldexp(1.0, -8) * vm;
          if (out_dt == DType::kBF16) tol += std::ldexp(1.0, -8) * (std::fabs(ref) + tol);
          max_ref = std::max(max_ref, std::fabs(ref));
          if (!(std::fabs(o[oi] - ref) <= tol) && ++bad <= 5)
            ADD_FAILURE() << "out[" << b << "," << i << "," << h << "," << x << "] = " << o[oi] << ", expected " << ref
                          << " ± " << tol;
        }
        const double lref = rl[at];
        if (nk == 0) {
          if (!(l[at] == -std::numeric_limits<float>::infinity()) && ++bad <= 5)
            ADD_FAILURE() << "lse " << l[at] << " with no valid key";
        } else {
          const double ltol = es + 2.0 * sum_err + 4e-6 * (1.0 + std::fabs(lref));
          if (!(std::fabs(l[at] - lref) <= ltol) && ++bad <= 5)
            ADD_FAILURE() << "lse[" << b << "," << h << "," << i << "] = " << l[at] << ", expected " << lref << " ± "
                          << ltol;
        }
      }
  EXPECT_EQ(bad, 0);
  if (nk > 0) {
    EXPECT_GT(max_ref, 0.0);
  }
}

}  // namespace

TEST(AttentionGpu, Bf16FlashMatchesRef) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 11;
  for (const Cfg& c : kCfgs) {
    check_case(c, Kind::kBf16OutBf16, seed += 5);
    check_case(c, Kind::kBf16OutF32, seed += 5);
  }
}

// The Hopper kernel (D = 128 only): one and many key tiles, partial query and key tiles, keys past
// nvalid holding NaN, several batch entries and heads, peaked rows.
TEST(AttentionGpu, WgmmaMatchesRef) {
  VGEN_REQUIRE_GPU();
  if (!kern::attention_wgmma_available()) GTEST_SKIP() << "the wgmma attention kernel needs an sm_90 GPU";
  const Cfg cfgs[] = {
      {1, 1, 1, 1, 128, 1, 1.0f},     {1, 128, 128, 1, 128, 128, 2.0f}, {1, 130, 130, 2, 128, 130, 2.0f},
      {2, 200, 1000, 3, 128, 999, 1.0f}, {1, 31, 7, 2, 128, 3, 4.0f},   {2, 257, 384, 2, 128, 300, 3.0f},
      {1, 300, 513, 1, 128, 513, 1.0f}, {3, 64, 129, 2, 128, 129, 2.0f},
  };
  uint32_t seed = 900;
  for (const Cfg& c : cfgs) check_case(c, Kind::kWgmma, seed += 5);
}

TEST(AttentionGpu, Fp32MatchesRef) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 500;
  for (const Cfg& c : kCfgs) check_case(c, Kind::kF32, seed += 5);
}

TEST(AttentionGpu, NoValidKey) {
  VGEN_REQUIRE_GPU();
  for (Kind kind : {Kind::kBf16OutBf16, Kind::kBf16OutF32, Kind::kF32}) {
    check_case({1, 50, 300, 1, 128, 0, 1.0f}, kind, 77);
    check_case({2, 9, 4, 3, 12, -3, 1.0f}, kind, 78);
  }
}

// q, k, v interleaved per token in one [B, S, 3, H, D] bf16 buffer on the device (token stride
// 3·H·D, as the DiT's fused QKV projection writes them), the arguments pointing into it (out and lse
// left to the caller) and attention_ref's result on the same values.
struct FusedQkv {
  Tensor dev;
  kern::AttnArgs args;
  std::vector<float> ref_out, ref_lse;  // [B, S, H, D], [B, H, S]
};
FusedQkv fused_qkv(int64_t B, int64_t S, int64_t H, int64_t D, int64_t nvalid, float scale, uint32_t seed,
                   float amp) {
  FusedQkv f;
  const auto qkv = rounded_bf16(random_vec(size_t(B * S * 3 * H * D), seed, -amp, amp));
  f.dev = device_tensor(qkv, {B, S, 3, H, D}, DType::kBF16);
  const char* base = static_cast<const char*>(f.dev.raw());
  kern::AttnArgs& a = f.args;
  a.q = base, a.k = base + H * D * 2, a.v = base + 2 * H * D * 2;
  a.B = B, a.Sq = S, a.Skv = S, a.H = H, a.D = D, a.num_valid_kv = nvalid, a.scale = scale;
  a.q_stride = a.k_stride = a.v_stride = 3 * H * D;
  std::vector<float> q(size_t(B * S * H * D)), k(q.size()), v(q.size());
  for (int64_t t = 0; t < B * S; ++t)
    for (int64_t i = 0; i < H * D; ++i) {
      q[size_t(t * H * D + i)] = qkv[size_t((t * 3 + 0) * H * D + i)];
      k[size_t(t * H * D + i)] = qkv[size_t((t * 3 + 1) * H * D + i)];
      v[size_t(t * H * D + i)] = qkv[size_t((t * 3 + 2) * H * D + i)];
    }
  f.ref_out.resize(q.size());
  f.ref_lse.resize(size_t(B * H * S));
  kern::attention_ref(q.data(), k.data(), v.data(), f.ref_out.data(), f.ref_lse.data(), B, S, S, H, D, nvalid, scale);
  return f;
}

TEST(AttentionGpu, StridedFusedQkv) {
  VGEN_REQUIRE_GPU();
  const int64_t B = 2, S = 77, H = 3, D = 64, nvalid = 70;
  FusedQkv f = fused_qkv(B, S, H, D, nvalid, 0.125f, 21, 1.0f);
  Tensor out = Tensor::empty({B, S, H, D}, DType::kF32, Device::kCUDA);
  Tensor lse = Tensor::empty({B, H, S}, DType::kF32, Device::kCUDA);
  kern::AttnArgs a = f.args;
  a.out = out.raw(), a.lse = lse.f32();
  ASSERT_EQ(kern::attention_fwd_bf16(a, kern::AttnOut::kF32, compute_stream()), cudaSuccess);
  std::vector<float> o = host_f32(out), l = host_f32(lse);
  // |q·k| ≤ 64 here, so the score error bound is tiny; P rounding dominates (2⁻⁸·max|v| ≤ 2⁻⁸).
  for (size_t i = 0; i < o.size(); ++i) ASSERT_NEAR(o[i], f.ref_out[i], std::ldexp(1.0, -8) + 1e-5) << "at " << i;
  for (size_t i = 0; i < l.size(); ++i) ASSERT_NEAR(l[i], f.ref_lse[i], 1e-4) << "lse at " << i;
}

// The Hopper kernel on the fused QKV buffer and an out with its own token stride.
TEST(AttentionGpu, WgmmaStridedFusedQkv) {
  VGEN_REQUIRE_GPU();
  const int64_t B = 2, S = 300, H = 3, D = 128, nvalid = 290, OS = H * D + 64;
  FusedQkv f = fused_qkv(B, S, H, D, nvalid, 1.0f / std::sqrt(float(D)), 23, 2.0f);
  Tensor out = Tensor::empty({B, S, OS}, DType::kBF16, Device::kCUDA);
  Tensor lse = Tensor::empty({B, H, S}, DType::kF32, Device::kCUDA);
  kern::AttnArgs a = f.args;
  a.out = out.raw(), a.lse = lse.f32();
  a.o_stride = OS;
  if (!kern::attention_wgmma_available()) GTEST_SKIP() << "the wgmma attention kernel needs an sm_90 GPU";
  ASSERT_TRUE(kern::attention_wgmma_supports(a)) << "strided fused QKV with an out stride";
  ASSERT_EQ(kern::attention_fwd_wgmma_bf16(a, compute_stream()), cudaSuccess);
  std::vector<float> o = host_f32(out), l = host_f32(lse);
  // bf16 P (2⁻⁸·max|v|) and the bf16 output (2⁻⁸·|o|) dominate; the fp32 scores of bf16 inputs with
  // |q·k|·scale ≤ 46 here add ≤ 128·2⁻²⁴·46.
  for (int64_t t = 0; t < B * S; ++t)
    for (int64_t i = 0; i < H * D; ++i) {
      const double ref = f.ref_out[size_t(t * H * D + i)];
      ASSERT_NEAR(o[size_t(t * OS + i)], ref, std::ldexp(1.0, -8) * (2.0 + std::fabs(ref)) + 1e-4)
          << "token " << t << " at " << i;
    }
  for (size_t i = 0; i < l.size(); ++i) ASSERT_NEAR(l[i], f.ref_lse[i], 1e-3) << "lse at " << i;
  // Without an LSE (cross-attention): the same output, bit for bit.
  Tensor out2 = Tensor::zeros({B, S, OS}, DType::kBF16, Device::kCUDA);
  a.out = out2.raw(), a.lse = nullptr;
  ASSERT_EQ(kern::attention_fwd_wgmma_bf16(a, compute_stream()), cudaSuccess);
  const std::vector<float> o2 = host_f32(out2);
  for (int64_t t = 0; t < B * S; ++t) {
    for (int64_t i = 0; i < H * D; ++i)
      ASSERT_EQ(o2[size_t(t * OS + i)], o[size_t(t * OS + i)]) << "token " << t << " at " << i;
    for (int64_t i = H * D; i < OS; ++i) ASSERT_EQ(o2[size_t(t * OS + i)], 0.0f) << "gap of token " << t << " written";
  }
  // The row max is taken on raw scores: a scale that is not positive is left to the other kernels.
  for (float bad : {-0.1f, 0.0f, std::numeric_limits<float>::infinity()}) {
    a.scale = bad;
    EXPECT_FALSE(kern::attention_wgmma_supports(a)) << "scale " << bad;
    EXPECT_EQ(kern::attention_fwd_wgmma_bf16(a, compute_stream()), cudaErrorNotSupported) << "scale " << bad;
  }
}

TEST(AttentionGpu, MergeMatchesRef) {
  VGEN_REQUIRE_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  for (bool o2_bf16 : {false, true}) {
    const int64_t B = 2, S = 45, H = 3, D = 70;
    auto o1 = random_vec(size_t(B * S * H * D), 31);
    auto o2 = random_vec(o1.size(), 32);
    if (o2_bf16) o2 = rounded_bf16(o2);
    auto l1 = random_vec(size_t(B * H * S), 33, -5.0f, 5.0f);
    auto l2 = random_vec(l1.size(), 34, -5.0f, 5.0f);
    for (size_t i = 0; i < l1.size(); i += 7) l1[i] = -inf;  // some rows empty on one side or both
    for (size_t i = 0; i < l2.size(); i += 5) l2[i] = -inf;
    Tensor d1 = device_tensor(o1, {B, S, H, D}, DType::kF32);
    Tensor d2 = device_tensor(o2, {B, S, H, D}, o2_bf16 ? DType::kBF16 : DType::kF32);
    Tensor dl1 = device_tensor(l1, {B, H, S}, DType::kF32);
    Tensor dl2 = device_tensor(l2, {B, H, S}, DType::kF32);
    cuda_attention_merge(d1, dl1, d2, dl2);
    kern::attention_merge_ref(o1.data(), l1.data(), o2.data(), l2.data(), B, S, H, D);
    std::vector<float> go = host_f32(d1), gl = host_f32(dl1);
    for (size_t i = 0; i < o1.size(); ++i) ASSERT_NEAR(go[i], o1[i], 2e-6 * (1.0 + std::fabs(o1[i]))) << "o at " << i;
    for (size_t i = 0; i < l1.size(); ++i) {
      if (l1[i] == -inf)
        ASSERT_EQ(gl[i], -inf) << "lse at " << i;
      else
        ASSERT_NEAR(gl[i], l1[i], 2e-6 * (1.0 + std::fabs(l1[i]))) << "lse at " << i;
    }
  }
}

// The N-way merge of bf16 parts (key-chunked cuDNN attention) against attention_merge_parts_ref on
// the same bf16 values: one rounding of the fp32 result (half an ulp), lse in fp32; rows empty in
// some parts or in all of them; D = 72 takes the 16-byte kernel, D = 36 the warp-per-row one; out a
// separate buffer or the first part (in place).
TEST(AttentionGpu, MergePartsBf16MatchesRef) {
  VGEN_REQUIRE_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t B = 2, S = 37, H = 3;
  for (int64_t D : {72, 36})
  for (bool in_place : {false, true})
  for (int n : {1, 2, 5, kern::kAttnMaxMergeParts}) {
    SCOPED_TRACE(::testing::Message() << "D " << D << " in_place " << in_place);
    std::vector<std::vector<float>> o, l;
    std::vector<Tensor> dparts, dlses;
    std::vector<const void*> pp;
    std::vector<const float*> lp;
    for (int p = 0; p < n; ++p) {
      o.push_back(rounded_bf16(random_vec(size_t(B * S * H * D), 40 + uint32_t(p))));
      l.push_back(random_vec(size_t(B * H * S), 80 + uint32_t(p), -5.0f, 5.0f));
      for (size_t i = size_t(p); i < l.back().size(); i += 3) l.back()[i] = -inf;  // empty in this part
      for (size_t i = 0; i < l.back().size(); i += 11) l.back()[i] = -inf;         // empty in every part
      dparts.push_back(device_tensor(o.back(), {B, S, H, D}, DType::kBF16));
      dlses.push_back(device_tensor(l.back(), {B, H, S}, DType::kF32));
      pp.push_back(dparts.back().raw());
      lp.push_back(dlses.back().f32());
    }
    std::vector<const float*> rp, rl;
    for (int p = 0; p < n; ++p) rp.push_back(o[size_t(p)].data()), rl.push_back(l[size_t(p)].data());
    std::vector<float> want(size_t(B * S * H * D)), want_lse(size_t(B * H * S));
    kern::attention_merge_parts_ref(rp.data(), rl.data(), n, want.data(), want_lse.data(), B, S, H, D);
    Tensor out = in_place ? dparts[0] : poisoned({B, S, H, D}, DType::kBF16);
    Tensor lse = poisoned({B, H, S}, DType::kF32);
    ASSERT_EQ(kern::attention_merge_parts_bf16(pp.data(), lp.data(), n, out.raw(), lse.f32(), B, S, H, D,
                                               compute_stream()),
              cudaSuccess);
    const std::vector<float> go = host_f32(out), gl = host_f32(lse);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(go[i], want[i], kUlp * std::fabs(want[i]) + 1e-6) << "n " << n << " out at " << i;
    for (size_t i = 0; i < want_lse.size(); ++i) {
      if (want_lse[i] == -inf)
        ASSERT_EQ(gl[i], -inf) << "n " << n << " lse at " << i;
      else
        ASSERT_NEAR(gl[i], want_lse[i], 2e-6 * (1.0 + std::fabs(want_lse[i]))) << "n " << n << " lse at " << i;
    }
  }
}

// The remainder of a key split folded into the main range's bf16 result (attention_tail_merge_bf16)
// against attention_tail_merge_ref on the same bf16 values: 1 to 128 keys (every count of 16-key
// groups), head dims 8 to 128 (D <= 64 takes the 64-column kernel), several blocks of 1,024 queries
// and a partial one, rows whose main range was empty (lse −inf and NaN in out: ignored), NaN keys
// after the range (never read), the lse written apart, in place over lse_in, or not at all. Bounds
// as the flash kernel's: the fp32 scores, a bf16 P on the range's weights, one rounding of the output.
TEST(AttentionGpu, TailMergeMatchesRef) {
  VGEN_REQUIRE_GPU();
  struct TailCfg {
    int64_t B, Sq, M, T, H, D;  // M keys in the main range, T in the folded one
    float amp;
  };
  const TailCfg cfgs[] = {{1, 1, 3, 1, 1, 128, 1.0f},      {2, 37, 50, 5, 3, 64, 2.0f},  {1, 1100, 300, 80, 2, 128, 3.0f},
                          {1, 130, 20, 128, 2, 128, 1.0f},  {2, 77, 64, 17, 3, 40, 4.0f}, {1, 2100, 129, 120, 1, 128, 2.0f},
                          {1, 19, 7, 33, 2, 8, 1.0f},       {3, 45, 100, 96, 2, 96, 3.0f}, {1, 50, 40, 48, 2, 72, 2.0f},
                          {1, 60, 30, 112, 1, 128, 2.0f}};
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 900;
  for (const TailCfg& c : cfgs)
    for (int lse_mode : {0, 1, 2}) {  // lse_out apart, in place over lse_in, none
      SCOPED_TRACE(::testing::Message() << "B " << c.B << " Sq " << c.Sq << " M " << c.M << " T " << c.T << " H "
                                        << c.H << " D " << c.D << " lse_mode " << lse_mode);
      const int64_t Skv = c.M + c.T + 3, HD = c.H * c.D;
      const float scale = 1.0f / std::sqrt(float(c.D));
      auto q = rounded_bf16(random_vec(size_t(c.B * c.Sq * HD), seed += 3, -c.amp, c.amp));
      auto k = rounded_bf16(random_vec(size_t(c.B * Skv * HD), seed + 1, -c.amp, c.amp));
      auto v = rounded_bf16(random_vec(k.size(), seed + 2));
      for (int64_t b = 0; b < c.B; ++b)
        for (int64_t j = c.M + c.T; j < Skv; ++j)
          for (int64_t i = 0; i < HD; ++i) k[size_t((b * Skv + j) * HD + i)] = v[size_t((b * Skv + j) * HD + i)] = kNaN;
      // The main range's result as cuDNN leaves it: bf16 out, fp32 lse; every 5th row empty.
      std::vector<float> o(q.size()), l(size_t(c.B * c.H * c.Sq));
      kern::attention_ref(q.data(), k.data(), v.data(), o.data(), l.data(), c.B, c.Sq, Skv, c.H, c.D, c.M, scale);
      o = rounded_bf16(o);
      for (int64_t b = 0; b < c.B; ++b)
        for (int64_t h = 0; h < c.H; ++h)
          for (int64_t i = 0; i < c.Sq; ++i) {
            const size_t li = size_t((b * c.H + h) * c.Sq + i);
            if (li % 5 != 2) continue;
            l[li] = -inf;
            for (int64_t x = 0; x < c.D; ++x) o[size_t(((b * c.Sq + i) * c.H + h) * c.D + x)] = kNaN;
          }
      Tensor dq = device_tensor(q, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
      Tensor dk = device_tensor(k, {c.B, Skv, c.H, c.D}, DType::kBF16);
      Tensor dv = device_tensor(v, {c.B, Skv, c.H, c.D}, DType::kBF16);
      Tensor dout = device_tensor(o, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
      Tensor dlse_in = device_tensor(l, {c.B, c.H, c.Sq}, DType::kF32);
      Tensor dlse_out = poisoned({c.B, c.H, c.Sq}, DType::kF32);
      kern::AttnArgs a;
      a.q = dq.raw();
      a.k = static_cast<const char*>(dk.raw()) + c.M * HD * 2;
      a.v = static_cast<const char*>(dv.raw()) + c.M * HD * 2;
      a.out = dout.raw();
      a.lse = lse_mode == 0 ? dlse_out.f32() : lse_mode == 1 ? dlse_in.f32() : nullptr;
      a.B = c.B, a.Sq = c.Sq, a.Skv = Skv, a.H = c.H, a.D = c.D, a.num_valid_kv = c.T, a.scale = scale;
      ASSERT_TRUE(kern::attention_tail_merge_supports(a));
      ASSERT_EQ(kern::attention_tail_merge_bf16(a, dlse_in.f32(), compute_stream()), cudaSuccess);
      const std::vector<float> go = host_f32(dout);
      const std::vector<float> gl = host_f32(lse_mode == 0 ? dlse_out : dlse_in);

      std::vector<float> want = o, want_lse = l;
      kern::attention_tail_merge_ref(q.data(), k.data() + c.M * HD, v.data() + c.M * HD, want.data(), want_lse.data(),
                                     c.B, c.Sq, Skv, c.H, c.D, c.T, scale);
      // |q·k| <= D·amp², |v| <= 1.
      const double es = double(c.D) * std::ldexp(1.0, -24) * scale * double(c.D) * c.amp * c.amp;
      const double sum_err = double(c.T + 4) * std::ldexp(1.0, -24);
      int bad = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        double tol = 2.0 * es + 2.0 * sum_err + std::ldexp(1.0, -8) + 1e-6;
        tol += std::ldexp(1.0, -8) * (std::fabs(want[i]) + tol);
        if (!(std::fabs(go[i] - want[i]) <= tol) && ++bad <= 5)
          ADD_FAILURE() << "out at " << i << ": " << go[i] << ", expected " << want[i] << " ± " << tol;
      }
      if (lse_mode != 2)
        for (size_t i = 0; i < want_lse.size(); ++i) {
          const double ltol = es + 2.0 * sum_err + 4e-6 * (1.0 + std::fabs(want_lse[i]));
          if (!(std::fabs(gl[i] - want_lse[i]) <= ltol) && ++bad <= 5)
            ADD_FAILURE() << "lse at " << i << ": " << gl[i] << ", expected " << want_lse[i] << " ± " << ltol;
        }
      else
        EXPECT_EQ(gl, l) << "lse_in changed without an lse output";
      EXPECT_EQ(bad, 0);
    }
  // Outside the kernel's surface nothing is launched.
  kern::AttnArgs a;
  a.B = 1, a.Sq = 4, a.Skv = 200, a.H = 1, a.D = 64, a.num_valid_kv = 129;
  EXPECT_FALSE(kern::attention_tail_merge_supports(a));
  EXPECT_EQ(kern::attention_tail_merge_bf16(a, nullptr, compute_stream()), cudaErrorNotSupported);
}

TEST(AttentionGpu, SplitKvMergeEqualsFullAttention) {
  VGEN_REQUIRE_GPU();
  // Two key blocks (as one Ring step sees them), fp32 partial outputs, merged on the device.
  const int64_t B = 1, Sq = 96, H = 2, D = 128, S1 = 70, S2 = 61;
  const float scale = 1.0f / std::sqrt(float(D));
  auto q = rounded_bf16(random_vec(size_t(B * Sq * H * D), 41, -2.0f, 2.0f));
  auto k = rounded_bf16(random_vec(size_t(B * (S1 + S2) * H * D), 42, -2.0f, 2.0f));
  auto v = rounded_bf16(random_vec(k.size(), 43));
  Tensor dq = device_tensor(q, {B, Sq, H, D}, DType::kBF16);
  Tensor dk = device_tensor(k, {B, S1 + S2, H, D}, DType::kBF16);
  Tensor dv = device_tensor(v, {B, S1 + S2, H, D}, DType::kBF16);
  Tensor k1 = dk[0].narrow(0, S1).reshape({1, S1, H, D}), k2 = dk[0].narrow(S1, S2).reshape({1, S2, H, D});
  Tensor v1 = dv[0].narrow(0, S1).reshape({1, S1, H, D}), v2 = dv[0].narrow(S1, S2).reshape({1, S2, H, D});
  Tensor o1 = Tensor::empty({B, Sq, H, D}, DType::kF32, Device::kCUDA);
  Tensor o2 = Tensor::empty({B, Sq, H, D}, DType::kF32, Device::kCUDA);
  Tensor l1 = Tensor::empty({B, H, Sq}, DType::kF32, Device::kCUDA);
  Tensor l2 = Tensor::empty({B, H, Sq}, DType::kF32, Device::kCUDA);
  cuda_attention(dq, k1, v1, o1, &l1, S1, scale);
  cuda_attention(dq, k2, v2, o2, &l2, S2, scale);
  cuda_attention_merge(o1, l1, o2, l2);
  std::vector<float> ro(q.size()), rl(size_t(B * H * Sq));
  kern::attention_ref(q.data(), k.data(), v.data(), ro.data(), rl.data(), B, Sq, S1 + S2, H, D, S1 + S2, scale);
  std::vector<float> go = host_f32(o1), gl = host_f32(l1);
  // |s| ≤ 4·128·4/sqrt(128): es ≤ 128·2⁻²⁴·0.09·512 ≈ 4e-4 (×2 for p), plus bf16 P (2⁻⁸).
  for (size_t i = 0; i < go.size(); ++i) ASSERT_NEAR(go[i], ro[i], std::ldexp(1.0, -8) + 1e-3) << "o at " << i;
  for (size_t i = 0; i < gl.size(); ++i) ASSERT_NEAR(gl[i], rl[i], 1e-3) << "lse at " << i;
}

#else
VGEN_GPU_TESTS_NEED_CUDA(AttentionGpu)
#endif
