// Flash attention for Hopper (sm_90a) at head dim 128: TMA tile loads into 128-byte-swizzled
// shared memory, wgmma on a warpgroup per 64 query rows, warp-specialised (one producer warp
// streams K/V tiles through a two-stage ring of mbarriers while two consumer warpgroups compute).
// Each consumer overlaps the next tile's S = Q·Kᵀ with the current tile's O += P·V, so the softmax
// of one tile runs while the tensor cores work on the other. Contract: attention.cuh.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/mma_bf16.cuh"
#include "kernels/common/sm90a_check.cuh"
#include "kernels/common/tensor_map.cuh"
#include "kernels/common/wgmma_sm90.cuh"

namespace vgen::kern {

namespace {

constexpr int kBM = 128;  // query rows per block: two consumer warpgroups of 64
constexpr int kBN = 128;  // keys per tile
constexpr int kD = 128;   // head dim (two 64-wide swizzle blocks)
constexpr int kThreads = 384;
constexpr uint32_t kTileBytes = kBN * kD * 2;  // 32 KiB: a Q, K or V tile
[[maybe_unused]] constexpr uint32_t kHalfBytes = kTileBytes / 2;  // one 64-column block of a tile
// Shared memory: Q | K0 K1 | V0 V1 | barriers; tiles 1024-byte aligned (the swizzle's period).
// (maybe_unused: device code for other architectures compiles the kernels without their bodies.)
[[maybe_unused]] constexpr uint32_t kOffK = kTileBytes, kOffV = 3 * kTileBytes, kOffBar = 5 * kTileBytes;
constexpr uint32_t kSmemBytes = kOffBar + 128 + 1024;  // + barriers + alignment slack

struct Params {
  __nv_bfloat16* out;
  float* lse;
  int64_t o_stride;  // elements between tokens of out
  int Sq, H, nk, n_tiles;
  float scale_log2;
};

__global__ void __launch_bounds__(kThreads, 1)
    attn_wgmma_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                      const __grid_constant__ CUtensorMap tv, const Params p) {
#ifdef VGEN_SM90A_DEVICE
  using namespace sm90;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (mma::smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bar = base + kOffBar;  // barQ, fullK[2], fullV[2], emptyK[2], emptyV[2]
  const uint32_t bar_q = bar, bar_full_k = bar + 8, bar_full_v = bar + 24, bar_empty_k = bar + 40,
                 bar_empty_v = bar + 56;
  const int m0 = blockIdx.x * kBM, h = blockIdx.y, b = blockIdx.z;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < 2; ++s) {
      mbar_init(bar_full_k + 8 * s, 1);
      mbar_init(bar_full_v + 8 * s, 1);
      mbar_init(bar_empty_k + 8 * s, 8);  // lane 0 of each consumer warp
      mbar_init(bar_empty_v + 8 * s, 8);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    setmaxnreg_dec<24>();
    if (threadIdx.x == 0) {
      mbar_expect_tx(bar_q, kTileBytes);
      tma_load_4d(base, &tq, bar_q, 0, h, m0, b);
      tma_load_4d(base + kHalfBytes, &tq, bar_q, 64, h, m0, b);
      for (int j = 0; j < p.n_tiles; ++j) {
        const uint32_t s = j & 1, ph = (j >> 1) & 1;
        mbar_wait(bar_empty_k + 8 * s, ph ^ 1);
        mbar_expect_tx(bar_full_k + 8 * s, kTileBytes);
        const uint32_t k_dst = base + kOffK + s * kTileBytes;
        tma_load_4d(k_dst, &tk, bar_full_k + 8 * s, 0, h, j * kBN, b);
        tma_load_4d(k_dst + kHalfBytes, &tk, bar_full_k + 8 * s, 64, h, j * kBN, b);
        mbar_wait(bar_empty_v + 8 * s, ph ^ 1);
        mbar_expect_tx(bar_full_v + 8 * s, kTileBytes);
        const uint32_t v_dst = base + kOffV + s * kTileBytes;
        tma_load_4d(v_dst, &tv, bar_full_v + 8 * s, 0, h, j * kBN, b);
        tma_load_4d(v_dst + kHalfBytes, &tv, bar_full_v + 8 * s, 64, h, j * kBN, b);
      }
    }
    return;
  }

  // Consumer warpgroup cw: query rows m0 + 64·cw …; warp w of it: 16 rows, lane (g, t) rows g, g + 8.
  setmaxnreg_inc<240>();
  const int cw = wg - 1, warp = (threadIdx.x / 32) & 3, lane = threadIdx.x & 31;
  const int t = lane & 3;
  const float sl2 = p.scale_log2;

  float o[64], s[64];
  uint32_t pa[32];  // P in bf16: the A fragments of 8 k16 steps
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  // Q's A fragments of the 8 k16 steps, in registers for the whole row block: Q·Kᵀ then reads only
  // K from shared memory (less shared-memory traffic, measured ~2% faster under the power cap).
  uint32_t qa[32];
  auto issue_qk = [&](uint32_t k_tile) {
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      const uint32_t off = uint32_t(kk >> 2) * kHalfBytes + uint32_t(kk & 3) * 32;  // k16 step in its half
      const uint32_t a[4] = {qa[4 * kk], qa[4 * kk + 1], qa[4 * kk + 2], qa[4 * kk + 3]};
      wgmma_rs<false>(s, a, desc_sw128(k_tile + off, 16, 1024), kk > 0);
    }
    wgmma_commit();
  };
  auto issue_pv = [&](uint32_t v_tile) {
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
      wgmma_rs<true>(o, a, desc_sw128(v_tile + uint32_t(kk) * 2048, kHalfBytes, 1024), 1);
    }
    wgmma_commit();
  };
  // Ping-pong: the two consumer warpgroups take turns at issuing their GEMMs (named barriers 1, 2),
  // so that one's softmax runs while the tensor cores work on the other's products.
  auto turn_begin = [&]() { turn_sync(cw); };
  auto turn_end = [&](bool last) {
    if (!(last && cw == 1)) turn_arrive_other(cw);  // each arrive meets one sync of the other
  };
  auto release = [&](uint32_t bar_empty) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar_empty);
  };
  // Softmax of tile j on s (in place to exp2 values); returns the rescale factors of o.
  auto softmax = [&](int j, float (&corr)[2]) {
    if ((j + 1) * kBN > p.nk) {  // the last tile may hold keys past nk (zero-filled): mask them
#pragma unroll
      for (int nt = 0; nt < 16; ++nt)
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (j * kBN + nt * 8 + 2 * t + (c & 1) >= p.nk) s[nt * 4 + c] = -INFINITY;
    }
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int i = 0; i < 64; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], s[i]);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float mn = fmaxf(m[r], mma::quad_max(mx[r]) * sl2);
      corr[r] = ex2_ftz(m[r] - mn);
      m[r] = mn;
      l[r] *= corr[r];
    }
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      const int r = (i >> 1) & 1;
      s[i] = ex2_ftz(fmaf(s[i], sl2, -m[r]));
      l[r] += s[i];
    }
  };
  auto pack_p = [&]() {
#pragma unroll
    for (int i = 0; i < 32; ++i) pa[i] = mma::pack_bf16(s[2 * i], s[2 * i + 1]);
  };

  if (cw == 1) turn_arrive_other(cw);  // warpgroup 0 goes first
  mbar_wait(bar_q, 0);
  {
    // ldmatrix x4 per k16 step from the swizzled tile: 16-byte chunk c of row r sits at c ^ (r & 7).
    const int r = cw * 64 + warp * 16 + (lane & 15);
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      const int chunk = (kk & 3) * 2 + (lane >> 4);
      const uint32_t addr = base + uint32_t(kk >> 2) * kHalfBytes + uint32_t(r) * 128 + uint32_t((chunk ^ (r & 7)) * 16);
      mma::ldmatrix_x4(addr, qa[4 * kk], qa[4 * kk + 1], qa[4 * kk + 2], qa[4 * kk + 3]);
    }
  }
  mbar_wait(bar_full_k, 0);
  turn_begin();
  wgmma_fence();
  issue_qk(base + kOffK);
  turn_end(false);
  wgmma_wait<0>();
  reg_fence(s);
  release(bar_empty_k);
  {
    float corr[2];
    softmax(0, corr);
    pack_p();
  }
  for (int j = 1; j < p.n_tiles; ++j) {
    const uint32_t st = j & 1, ph = (j >> 1) & 1, sp = (j - 1) & 1, php = ((j - 1) >> 1) & 1;
    mbar_wait(bar_full_k + 8 * st, ph);
    reg_fence(o);
    reg_fence(pa);
    mbar_wait(bar_full_v + 8 * sp, php);
    turn_begin();
    wgmma_fence();
    issue_qk(base + kOffK + st * kTileBytes);
    issue_pv(base + kOffV + sp * kTileBytes);
    turn_end(false);
    wgmma_wait<1>();
    reg_fence(s);
    release(bar_empty_k + 8 * st);
    float corr[2];
    softmax(j, corr);
    wgmma_wait<0>();
    reg_fence(o);
    reg_fence(pa);
    release(bar_empty_v + 8 * sp);
    if (corr[0] != 1.0f || corr[1] != 1.0f) {  // the row maxima rarely move late on
#pragma unroll
      for (int i = 0; i < 64; ++i) o[i] *= corr[(i >> 1) & 1];
    }
    pack_p();
  }
  {
    const int j = p.n_tiles - 1;
    const uint32_t sp = j & 1, php = (j >> 1) & 1;
    mbar_wait(bar_full_v + 8 * sp, php);
    reg_fence(o);
    reg_fence(pa);
    turn_begin();
    wgmma_fence();
    issue_pv(base + kOffV + sp * kTileBytes);
    turn_end(true);
    wgmma_wait<0>();
    reg_fence(o);
    release(bar_empty_v + 8 * sp);
  }

  // Epilogue: o / l in bf16, lse = ln 2 · (m + log2 l).
  const int row0 = m0 + cw * 64 + warp * 16 + (lane >> 2);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float lsum = mma::quad_sum(l[r]);
    const float inv = 1.0f / lsum;
    const int row = row0 + 8 * r;
    if (row < p.Sq) {
      __nv_bfloat16* dst = p.out + (int64_t(b) * p.Sq + row) * p.o_stride + int64_t(h) * kD + 2 * t;
#pragma unroll
      for (int nt = 0; nt < 16; ++nt)
        *reinterpret_cast<uint32_t*>(dst + nt * 8) = mma::pack_bf16(o[nt * 4 + 2 * r] * inv, o[nt * 4 + 2 * r + 1] * inv);
      if (p.lse && t == 0) p.lse[(int64_t(b) * p.H + h) * p.Sq + row] = (m[r] + log2f(lsum)) * mma::kLn2;
    }
  }
#endif
}

// [B, S, H, 128] bf16 with token stride `stride` elements, S rows visible (rows past them read as
// zeros), batch stride s_alloc·stride; boxes of 64 columns × 1 head × 128 tokens.
bool make_map(CUtensorMap* map, const void* ptr, int64_t B, int64_t S, int64_t s_alloc, int64_t H, int64_t stride) {
  const cuuint64_t dims[4] = {cuuint64_t(kD), cuuint64_t(H), cuuint64_t(S), cuuint64_t(B)};
  const cuuint64_t strides[3] = {cuuint64_t(kD) * 2, cuuint64_t(stride) * 2, cuuint64_t(s_alloc * stride) * 2};
  const cuuint32_t box[4] = {64, 1, 128, 1}, estr[4] = {1, 1, 1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void*>(ptr), dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// Whether the current device runs the kernel (sm90a_check.cuh), its shared memory raised.
bool device_ok() {
  static Sm90aKernels kernels(kSmemBytes, {reinterpret_cast<const void*>(attn_wgmma_kernel)});
  return kernels.available();
}

std::atomic<uint64_t> g_calls{0};

}  // namespace

uint64_t attention_wgmma_calls() { return g_calls.load(); }

bool attention_wgmma_available() { return device_ok(); }

bool attention_wgmma_supports(const AttnArgs& a) {
  if (!device_ok()) return false;
  const AttnStrides st = attn_strides(a);
  const int64_t nk = std::min(a.num_valid_kv, a.Skv);
  // int token indices in the kernel stay below 2^31 with a tile to spare; the row max is taken on
  // raw scores, which needs scale > 0.
  constexpr int64_t kMaxTokens = (int64_t(1) << 31) - 2 * kBM;
  return a.D == kD && a.B >= 1 && a.Sq >= 1 && nk >= 1 && a.H >= 1 && a.H <= 65535 && a.B <= 65535 &&
         a.Sq <= kMaxTokens && a.Skv <= kMaxTokens && a.scale > 0.0f && std::isfinite(a.scale) &&
         st.q % 8 == 0 && st.k % 8 == 0 && st.v % 8 == 0 && st.o % 2 == 0 && aligned16(a.q) && aligned16(a.k) &&
         aligned16(a.v) && (reinterpret_cast<uintptr_t>(a.out) & 3) == 0;
}

cudaError_t attention_fwd_wgmma_bf16(const AttnArgs& a, cudaStream_t stream) {
  if (!attention_wgmma_supports(a)) return cudaErrorNotSupported;
  const AttnStrides st = attn_strides(a);
  const int64_t nk = std::min(a.num_valid_kv, a.Skv);
  CUtensorMap tq, tk, tv;
  if (!make_map(&tq, a.q, a.B, a.Sq, a.Sq, a.H, st.q) || !make_map(&tk, a.k, a.B, nk, a.Skv, a.H, st.k) ||
      !make_map(&tv, a.v, a.B, nk, a.Skv, a.H, st.v))
    return cudaErrorNotSupported;  // the driver refused a tensor map: another kernel serves the call
  Params p;
  p.out = static_cast<__nv_bfloat16*>(a.out);
  p.lse = a.lse;
  p.o_stride = st.o;
  p.Sq = int(a.Sq), p.H = int(a.H), p.nk = int(nk), p.n_tiles = int((nk + kBN - 1) / kBN);
  p.scale_log2 = a.scale * mma::kLog2e;
  const dim3 grid(unsigned((a.Sq + kBM - 1) / kBM), unsigned(a.H), unsigned(a.B));
  attn_wgmma_kernel<<<grid, kThreads, kSmemBytes, stream>>>(tq, tk, tv, p);
  const cudaError_t le = cudaGetLastError();
  if (le == cudaSuccess) ++g_calls;
  return le;
}

}  // namespace vgen::kern
