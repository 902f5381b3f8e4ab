// FP8 attention (attention_fp8.cuh): the quantisation pass, then either the Hopper kernel (D = 128:
// TMA tile loads of INT8 (or e4m3) Q, K and e4m3 Vᵀ into 128-byte-swizzled shared memory, S = Q·Kᵀ
// as m64n128k32 s8 (or e4m3) wgmma, O += P·V as e4m3 wgmma with P from registers, warp-specialised
// like attention_wgmma.cu: one producer warp, two consumer warpgroups taking turns at the tensor
// cores) or, for any other head dim (tests, tiny models), the CUDA-core kernel of
// attention_fp8_generic.cu. Numerics: attention_fp8_ref.h.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "kernels/attention/attention_fp8.cuh"
#include "kernels/attention/attention_fp8_layout.cuh"
#include "kernels/attention/mma_bf16.cuh"
#include "kernels/common/sm90a_check.cuh"
#include "kernels/common/tensor_map.cuh"
#include "kernels/common/wgmma_sm90.cuh"
#include "kernels/quant/e4m3_pack.cuh"
#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {

namespace {

using fp8attn::Layout;

constexpr int kBM = 128, kBN = 128, kD = 128;
constexpr int kThreads = 384;
constexpr uint32_t kTileBytes = kBN * kD;  // 16 KiB: a Q, K or Vᵀ tile of e4m3
// Shared memory: Q, then kStages K tiles and kStages Vᵀ tiles, the barriers (bar_q, then full K,
// full V, empty K, empty V for each stage) and 1 KiB to align the base for the 128-byte swizzle.
// Four stages, not two: 0.5% less DiT time at 720p
// (results/attention/1xh200/2026-12-02_1xh200_fp8_attention_stages.jsonl).
constexpr int kStages = 4;
constexpr uint32_t kOffK = kTileBytes, kOffV = kOffK + kStages * kTileBytes, kOffBar = kOffV + kStages * kTileBytes;
constexpr uint32_t kSmemBytes = kOffBar + 256 + 1024;
static_assert(8 + 32 * kStages <= 256, "barrier area");
// INT8 scores: the s32 sum i plus kInt8ScoreBits, read as a float, is kInt8ScoreBase + i exactly
// (attention_fp8_ref.h): no conversion instruction, nothing on the MUFU that the exponentials need.

struct Params {
  __nv_bfloat16* out;
  float* lse;
  int64_t o_stride;
  int Sq, H, nk, n_tiles, nqb, nkb;
  float scale_log2;
  const float *sq, *sk, *sv, *qkm;
};

// Each key tile's P·V goes to a fresh wgmma accumulator and is added to O in fp32 on the CUDA cores,
// O = (O + pv)·corr: the tensor core's in-place accumulation keeps fewer bits over hundreds of tiles,
// and was slower. The row sums l run as 4 chains of 8 adds, not one of 32 (faster). The variants
// measured and not kept: docs/notes/fp8_notes.md "The attention kernel: what was tried".
// kInt8: Q·Kᵀ in s8 with exact s32 sums. The accumulators start at the bits of 2²³ + 2²² (a MOV
// each before the issue, off the softmax's path: faster than adding the offset after the wgmma,
// results/attention/1xh200/2026-12-02_1xh200_fp8_int8_qk.jsonl), so each score reads as the float
// 2²³ + 2²² + i; the offset is folded into the tile's row constant of the softmax's FFMA exactly
// (sl2 cut to 22 bits, the row maximum raised to the constant's grid; see softmax), so the FFMA
// rounds i·sl2 − m once, as the e4m3 form does. A rounded constant shifted a row's whole tile by up
// to ~0.75·sl2 in the exponent and the LSE by up to ~0.5·sl2 (test Int8LseExactWithOutliers, where
// blocks' |q|max·|k|max reach 1600).
template <bool kInt8>
__global__ void __launch_bounds__(kThreads, 1)
    attn_fp8_wgmma_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                          const __grid_constant__ CUtensorMap tv, const Params p) {
#ifdef VGEN_SM90A_DEVICE
  using namespace sm90;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (mma::smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bar = base + kOffBar;
  const uint32_t bar_q = bar, bar_full_k = bar + 8, bar_full_v = bar_full_k + 8 * kStages,
                 bar_empty_k = bar_full_v + 8 * kStages, bar_empty_v = bar_empty_k + 8 * kStages;
  const int qb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int bh = b * p.H + h;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(bar_full_k + 8 * s, 1);
      mbar_init(bar_full_v + 8 * s, 1);
      mbar_init(bar_empty_k + 8 * s, 8);
      mbar_init(bar_empty_v + 8 * s, 8);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    setmaxnreg_dec<24>();
    if (threadIdx.x == 0) {
      const int kv_row0 = bh * p.nkb * kBN;
      mbar_expect_tx(bar_q, kTileBytes);
      tma_load_2d(base, &tq, bar_q, 0, bh * p.nqb * kBM + qb * kBM);
      for (int j = 0; j < p.n_tiles; ++j) {
        const uint32_t s = uint32_t(j) % kStages, ph = (uint32_t(j) / kStages) & 1;
        mbar_wait(bar_empty_k + 8 * s, ph ^ 1);
        mbar_expect_tx(bar_full_k + 8 * s, kTileBytes);
        tma_load_2d(base + kOffK + s * kTileBytes, &tk, bar_full_k + 8 * s, 0, kv_row0 + j * kBN);
        mbar_wait(bar_empty_v + 8 * s, ph ^ 1);
        mbar_expect_tx(bar_full_v + 8 * s, kTileBytes);
        tma_load_2d(base + kOffV + s * kTileBytes, &tv, bar_full_v + 8 * s, j * kBN, bh * kD);
      }
    }
    return;
  }

  setmaxnreg_inc<240>();
  const int cw = wg - 1, warp = (threadIdx.x / 32) & 3, lane = threadIdx.x & 31;
  const int t = lane & 3;
  const float sq_l2 = p.sq[bh * p.nqb + qb] * p.scale_log2;
  const float* sk = p.sk + int64_t(bh) * p.nkb;

  float o[64], s[64];
  uint32_t si[64];  // kInt8: the s32 scores (kept out of s so that both forms stay plain registers)
  float pv[64];  // one tile's P·V
  uint32_t pa[16];  // P in e4m3: the A fragments of 4 k32 steps
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.0f;
  // m: running row max in the log2 domain minus log2 448, so exp2(x − m) is p·448 directly; l sums
  // p·448 (divided out in the epilogue).
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  const uint32_t q_tile = base + uint32_t(cw) * 64 * 128;  // this warpgroup's 64 rows
  // INT8: the accumulators start at the offset's bits; before the wgmma.fence that orders these
  // register writes against the wgmma reading them (PTX requires the fence between the two).
  auto init_scores = [&]() {
    if constexpr (kInt8) {
#pragma unroll
      for (int i = 0; i < 64; ++i) si[i] = kInt8ScoreBits;
      reg_fence(si);
    }
  };
  auto issue_qk = [&](uint32_t k_tile) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      if constexpr (kInt8)
        wgmma_ss_s8(si, desc_sw128(q_tile + kk * 32, 16, 1024), desc_sw128(k_tile + kk * 32, 16, 1024));
      else
        wgmma_ss_e4m3(s, desc_sw128(q_tile + kk * 32, 16, 1024), desc_sw128(k_tile + kk * 32, 16, 1024), kk > 0);
    }
    wgmma_commit();
  };
  // The scores after their wgmma: in place (e4m3) or 2²³ + 2²² + i read as floats (INT8).
  auto fence_scores = [&]() {
    if constexpr (kInt8) {
      reg_fence(si);
#pragma unroll
      for (int i = 0; i < 64; ++i) s[i] = __uint_as_float(si[i]);
    } else {
      reg_fence(s);
    }
  };
  auto issue_pv = [&](uint32_t v_tile) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
      wgmma_rs_e4m3(pv, a, desc_sw128(v_tile + kk * 32, 16, 1024), kk > 0);
    }
    wgmma_commit();
  };
  auto turn_begin = [&]() { turn_sync(cw); };
  auto turn_end = [&](bool last) {
    if (!(last && cw == 1)) turn_arrive_other(cw);
  };
  auto release = [&](uint32_t bar_empty) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar_empty);
  };
  auto softmax = [&](int j, float (&corr)[2]) {
    // INT8: sl2 cut to 22 significant bits, so that kInt8ScoreBase·sl2 (3·2²²·sl2) is exact.
    const float sl2 = kInt8 ? __uint_as_float(__float_as_uint(sq_l2 * sk[j]) & ~3u) : sq_l2 * sk[j];
    if ((j + 1) * kBN > p.nk) {
#pragma unroll
      for (int nt = 0; nt < 16; ++nt)
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (j * kBN + nt * 8 + 2 * t + (c & 1) >= p.nk) s[nt * 4 + c] = -INFINITY;
    }
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int i = 0; i < 64; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], s[i]);
    float off[2];  // what the FFMA subtracts: m, plus the INT8 offset's share
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float qm = mma::quad_max(mx[r]);
      float mn = fmaxf(m[r], fmaf(kInt8 ? qm - kInt8ScoreBase : qm, sl2, -kFp8Log2Of448));  // qm − 2²³−2²² exact
      if constexpr (kInt8) {
        // off = kInt8ScoreBase·sl2 + mn with no rounding: the sum rounded up, and mn raised to what it
        // represents (off − base: exact while base ≥ |mn|, i.e. wherever the constant's rounding
        // was large; otherwise within ½ ulp of mn). The maximum is a bound, so a larger mn keeps
        // p·448 ≤ 448, and m + log2 l (the LSE) does not depend on it.
        const float base = kInt8ScoreBase * sl2;
        off[r] = __fadd_ru(base, mn);
        mn = off[r] - base;
      } else {
        off[r] = mn;
      }
      corr[r] = ex2_ftz(m[r] - mn);
      m[r] = mn;
      l[r] *= corr[r];
    }
    float lp[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};  // 4 chains per row, not 1 of 32
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      const int r = (i >> 1) & 1;
      s[i] = ex2_ftz(fmaf(s[i], sl2, -off[r]));
      lp[r][(i >> 2) & 3] += s[i];
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) l[r] += (lp[r][0] + lp[r][1]) + (lp[r][2] + lp[r][3]);
  };
  // Thread t holds keys 2t, 2t+1 (tile nt) and 8+2t, 9+2t (tile nt+1) of each 16: the A operand's
  // k = 4t..4t+3 of that 16 (Vᵀ's columns are permuted to match, fp8_vt_column).
  auto pack_p = [&]() {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int n0 = (4 * kk + 2 * hf) * 4, n1 = n0 + 4;
        pa[4 * kk + 2 * hf] = pack_e4m3x4(s[n0], s[n0 + 1], s[n1], s[n1 + 1]);
        pa[4 * kk + 2 * hf + 1] = pack_e4m3x4(s[n0 + 2], s[n0 + 3], s[n1 + 2], s[n1 + 3]);
      }
  };

  // Key tile j sits in stage j mod kStages; each stage's full barriers complete once per kStages tiles.
  auto stage = [](uint32_t j) { return j % kStages; };
  auto phase = [](uint32_t j) { return (j / kStages) & 1; };

  if (cw == 1) turn_arrive_other(cw);
  mbar_wait(bar_q, 0);
  mbar_wait(bar_full_k, 0);
  turn_begin();
  init_scores();
  wgmma_fence();
  issue_qk(base + kOffK);
  turn_end(false);
  // The next tile's K and this tile's Vᵀ are waited for while the Q·Kᵀ runs, not between the packing
  // of P and the next issue: the 720p fp8 forward 1.4% faster
  // (results/attention/1xh200/2026-12-03_1xh200_fp8_attention_variants.json).
  if (p.n_tiles > 1) mbar_wait(bar_full_k + 8 * stage(1), phase(1));
  mbar_wait(bar_full_v, 0);
  wgmma_wait<0>();
  fence_scores();
  release(bar_empty_k);
  {
    float corr[2];
    softmax(0, corr);
    pack_p();
  }
  for (int j = 1; j < p.n_tiles; ++j) {
    const uint32_t st = stage(j), ph = phase(j), sp = stage(j - 1);
    reg_fence(o);
    reg_fence(pa);
    turn_begin();
    init_scores();
    wgmma_fence();
    issue_qk(base + kOffK + st * kTileBytes);
    issue_pv(base + kOffV + sp * kTileBytes);
    turn_end(false);
    {
      const uint32_t jn = uint32_t(j) + 1;
      if (int(jn) < p.n_tiles) mbar_wait(bar_full_k + 8 * stage(jn), phase(jn));
      mbar_wait(bar_full_v + 8 * st, ph);
    }
    wgmma_wait<1>();
    fence_scores();
    release(bar_empty_k + 8 * st);
    float corr[2];
    softmax(j, corr);
    // ptxas places this wait at the top of the softmax's block (it schedules the o + pv adds into the
    // row maximum), so the softmax overlaps the other warpgroup's GEMMs, not this one's P·V. Keeping
    // the wait after the softmax (a rotated loop) was 6% slower
    // (results/attention/1xh200/2026-12-03_1xh200_fp8_attention_schedule.json).
    wgmma_wait<0>();
    reg_fence(o);
    reg_fence(o);
    reg_fence(pa);
    reg_fence(pv);
    release(bar_empty_v + 8 * sp);
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] = (o[i] + pv[i]) * corr[(i >> 1) & 1];
    pack_p();
  }
  {
    const int j = p.n_tiles - 1;
    const uint32_t sp = stage(j);
    reg_fence(o);
    reg_fence(pa);
    turn_begin();
    wgmma_fence();
    issue_pv(base + kOffV + sp * kTileBytes);
    turn_end(true);
    wgmma_wait<0>();
    reg_fence(o);
    release(bar_empty_v + 8 * sp);
    reg_fence(pv);
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] += pv[i];
  }

  // Epilogue: o · sv / l in bf16; lse = ln 2 · (m + log2 l) (m and l both carry the 448) + scale·q·km.
  const int row0 = qb * kBM + cw * 64 + warp * 16 + (lane >> 2);
  const float* sv = p.sv + int64_t(bh) * kD + 2 * t;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float lsum = mma::quad_sum(l[r]);
    const float inv = 1.0f / lsum;
    const int row = row0 + 8 * r;
    if (row < p.Sq) {
      __nv_bfloat16* dst = p.out + (int64_t(b) * p.Sq + row) * p.o_stride + int64_t(h) * kD + 2 * t;
#pragma unroll
      for (int nt = 0; nt < 16; ++nt) {
        const float2 sc = *reinterpret_cast<const float2*>(sv + nt * 8);
        *reinterpret_cast<uint32_t*>(dst + nt * 8) =
            mma::pack_bf16(o[nt * 4 + 2 * r] * sc.x * inv, o[nt * 4 + 2 * r + 1] * sc.y * inv);
      }
      if (p.lse && t == 0)
        p.lse[(int64_t(b) * p.H + h) * p.Sq + row] = (m[r] + log2f(lsum)) * mma::kLn2 + p.qkm[int64_t(bh) * p.Sq + row];
    }
  }
#endif
}

// rows × cols bytes (row pitch `cols`), boxes of 128 × 128 bytes, 128-byte swizzle.
bool make_map(CUtensorMap* map, const void* ptr, int64_t rows, int64_t cols) {
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(cols)};
  const cuuint32_t box[2] = {128, 128}, estr[2] = {1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(ptr), dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Whether the current device runs the kernels (sm90a_check.cuh), their shared memory raised.
bool device_ok() {
  static Sm90aKernels kernels(kSmemBytes, {reinterpret_cast<const void*>(attn_fp8_wgmma_kernel<false>),
                                           reinterpret_cast<const void*>(attn_fp8_wgmma_kernel<true>)});
  return kernels.available();
}

std::atomic<uint64_t> g_calls{0};

}  // namespace

size_t attention_fp8_workspace_bytes(const AttnArgs& a) { return fp8attn::layout(a).total; }

bool attention_fp8_available() { return device_ok(); }

uint64_t attention_fp8_wgmma_calls() { return g_calls.load(); }

bool attention_fp8_wgmma_supports(const AttnArgs& a) {
  const AttnStrides st = attn_strides(a);
  const int64_t nk = std::min(a.num_valid_kv, a.Skv);
  constexpr int64_t kMaxRows = (int64_t(1) << 31) - 2 * kBM;  // int TMA coordinates
  return device_ok() && a.D == kD && nk >= 1 && a.B >= 1 && a.H >= 1 && a.H <= 65535 && a.B <= 65535 &&
         a.B * a.H * (a.Sq + kBM) <= kMaxRows && a.B * a.H * (nk + kBN) <= kMaxRows && st.o % 2 == 0 &&
         (reinterpret_cast<uintptr_t>(a.out) & 3) == 0;
}

cudaError_t attention_fp8_quantize(const AttnArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                                   Fp8Qk qk) {
  const fp8attn::Layout l = fp8attn::layout(a);
  if (!workspace || workspace_bytes < l.total || a.D < 1 || a.D > kAttnMaxHeadDim) return cudaErrorInvalidValue;
  return fp8attn::launch_quant(a, qk, l, static_cast<uint8_t*>(workspace), stream);
}

cudaError_t attention_fwd_fp8(const AttnArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                              Fp8Qk qk) {
  if (a.D < 1 || a.D > kAttnMaxHeadDim || a.B < 1 || a.H < 1 || a.Sq < 1 || a.Skv < 0 || !a.q || !a.k || !a.v ||
      !a.out || !(a.scale > 0.0f) || !std::isfinite(a.scale) || a.B > 65535 || a.H > 65535)
    return cudaErrorInvalidValue;
  if (!device_ok()) return cudaErrorNotSupported;
  const Layout l = fp8attn::layout(a);
  if (!workspace || workspace_bytes < l.total || (reinterpret_cast<uintptr_t>(workspace) & 255) != 0)
    return cudaErrorInvalidValue;
  uint8_t* ws = static_cast<uint8_t*>(workspace);
  cudaError_t e = fp8attn::launch_quant(a, qk, l, ws, stream);
  if (e != cudaSuccess) return e;
  const AttnStrides st = attn_strides(a);
  auto f = [&](size_t off) { return reinterpret_cast<const float*>(ws + off); };
  if (attention_fp8_wgmma_supports(a)) {
    CUtensorMap tq, tk, tv;
    const int64_t bh = a.B * a.H;
    if (make_map(&tq, ws + l.q8, bh * l.sq_pad, kD) && make_map(&tk, ws + l.k8, bh * l.sk_pad, kD) &&
        make_map(&tv, ws + l.vt8, bh * kD, l.sk_pad)) {
      Params p;
      p.out = static_cast<__nv_bfloat16*>(a.out);
      p.lse = a.lse;
      p.o_stride = st.o;
      p.Sq = int(a.Sq), p.H = int(a.H), p.nk = int(l.nk), p.n_tiles = int(l.nkb), p.nqb = int(l.nqb),
      p.nkb = int(l.nkb);
      p.scale_log2 = a.scale * mma::kLog2e;
      p.sq = f(l.sq), p.sk = f(l.sk), p.sv = f(l.sv), p.qkm = f(l.qkm);
      const dim3 grid(unsigned(l.nqb), unsigned(a.H), unsigned(a.B));
      if (qk == Fp8Qk::kInt8)
        attn_fp8_wgmma_kernel<true><<<grid, kThreads, kSmemBytes, stream>>>(tq, tk, tv, p);
      else
        attn_fp8_wgmma_kernel<false><<<grid, kThreads, kSmemBytes, stream>>>(tq, tk, tv, p);
      e = cudaGetLastError();
      if (e == cudaSuccess) ++g_calls;
      return e;
    }
  }
  return fp8attn::launch_generic(a, qk, l, ws, stream);
}

}  // namespace vgen::kern
