// INT8 W8A8 GEMM on Hopper (gemm_int8.cuh): the "plain" kernel of
// docs/notes/probes/int8_gemm_wgmma_probe.cu (1-CTA clusters: its 2-CTA multicast form was slower,
// results/gemm/1xh200/2026-12-02_1xh200_int8_gemm_wgmma_probe.json), grown from N % 256 == 0,
// K % 128 == 0 to any N and any K % 16 == 0; for N % 256 == 0 its unguarded epilogue is kept
// (store_tile_full), the guarded one serves other N.
// Per CTA (persistent, one per SM): a 128 × 256 output tile at a time, K in slabs of 128 bytes
// through a ring of 4 stages of 48 KiB (128-byte swizzle) filled by TMA; one producer warp, two
// consumer warpgroups of 64 × 256 (m64n256k32 s8 wgmma, 128 s32 accumulators each) whose epilogue
// runs from registers while the producer loads the next tile's first slabs.
#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "kernels/attention/mma_bf16.cuh"
#include "kernels/common/sm90a_check.cuh"
#include "kernels/common/tensor_map.cuh"
#include "kernels/common/wgmma_sm90.cuh"
#include "kernels/gemm/gemm_int8.cuh"

namespace vgen::kern {

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 128, kStages = 4, kThreads = 384;
// Tiles run in groups of kGroupM M tiles, M fastest: the ~132 tiles in flight share ~8 B panels and
// 16 A panels, so a B of 70 MB (13824 × 5120) is read from DRAM once per group, not once per M tile.
// (maybe_unused here and below: device code for other architectures has no kernel bodies.)
[[maybe_unused]] constexpr int kGroupM = 16;
constexpr uint32_t kABytes = kBM * kBK, kBBytes = kBN * kBK, kStageBytes = kABytes + kBBytes;  // 16 + 32 KiB
constexpr uint32_t kOffBar = kStages * kStageBytes;
constexpr uint32_t kSmemBytes = kOffBar + 2 * 8 * kStages + 1024;  // + full/empty barriers + 1 KiB swizzle alignment
constexpr int64_t kMaxK = int64_t(1) << 17;  // |Σ| ≤ K·128² < 2^31: the s32 sums stay exact
constexpr int64_t kMaxRows = (int64_t(1) << 31) - 2 * kBN;  // int TMA coordinates and tile rows
static_assert(kBK == 128 && kBN == 2 * 128, "TMA boxes of 128 × 128 bytes; B in two halves");
static_assert(kSmemBytes <= 227 * 1024, "fits the opt-in shared memory of sm_90");

enum Epi : int { kPlain = 0, kGelu = 1, kResidual = 2 };

struct Params {
  const float *sa, *sb;
  const __nv_bfloat16* bias;  // or null
  const __nv_bfloat16* residual;  // kResidual only; may be out
  __nv_bfloat16* out;
  int M, N, m_tiles, n_tiles, k_blocks;
  bool pairs;  // column pairs in one access: N even, sb 8-byte and bias 4-byte aligned
  bool full;  // pairs and N % kBN == 0: every tile full in N, no column guards (store_tile_full)
  bool prefetch;  // residual rows may be prefetched in 16-byte units: N % 8 == 0, residual 16-byte aligned
};

// Tile t → (M tile, N tile): groups of `group` M tiles, M fastest.
[[maybe_unused]] __host__ __device__ inline void tile_coords(int t, int m_tiles, int n_tiles, int group, int& mt, int& nt) {
  const int per_group = group * n_tiles, g = t / per_group, r = t - g * per_group;
  const int gm = min(group, m_tiles - g * group);
  mt = g * group + r % gm;
  nt = r / gm;
}

// The f32 epilogue of the contract, every step an explicit _rn intrinsic so that no FMA contraction
// separates it from linear_int8_value_ref.
[[maybe_unused]] __device__ __forceinline__ float gelu_tanh_rn(float v) {
  const float v3 = __fmul_rn(__fmul_rn(v, v), v);
  const float t = tanhf(__fmul_rn(0.7978845608028654f, __fadd_rn(v, __fmul_rn(0.044715f, v3))));
  return __fmul_rn(__fmul_rn(0.5f, v), __fadd_rn(1.0f, t));
}
template <int E>
__device__ __forceinline__ float epilogue_value(int32_t acc, float sa, float sb, bool has_bias, float bias,
                                               float c_in) {
  float v = __fmul_rn(__fmul_rn(__int2float_rn(acc), sa), sb);
  if (has_bias) v = __fadd_rn(v, bias);
  if constexpr (E == kGelu) v = gelu_tanh_rn(v);
  if constexpr (E == kResidual) v = __fadd_rn(v, c_in);
  return v;
}

// Columns c, c + 1 (c even) of a row: one access when kPairs, else each element guarded (odd N).
template <bool kPairs>
__device__ __forceinline__ float2 load_f32_pair(const float* row, int c, int N) {
  if constexpr (kPairs) return c < N ? __ldg(reinterpret_cast<const float2*>(row + c)) : make_float2(0.0f, 0.0f);
  return make_float2(c < N ? __ldg(row + c) : 0.0f, c + 1 < N ? __ldg(row + c + 1) : 0.0f);
}
// kNc: through the read-only path (not for a residual, which may be the output being written).
template <bool kPairs, bool kNc>
__device__ __forceinline__ float2 load_bf16_pair(const __nv_bfloat16* row, int c, int N) {
  if constexpr (kPairs) {
    if (c >= N) return make_float2(0.0f, 0.0f);
    const __nv_bfloat162* q = reinterpret_cast<const __nv_bfloat162*>(row + c);
    return __bfloat1622float2(kNc ? __ldg(q) : *q);
  }
  auto one = [&](int i) { return i < N ? __bfloat162float(kNc ? __ldg(row + i) : row[i]) : 0.0f; };
  return make_float2(one(c), one(c + 1));
}
template <bool kPairs>
__device__ __forceinline__ void store_bf16_pair(__nv_bfloat16* row, int c, int N, float lo, float hi) {
  if constexpr (kPairs) {
    if (c < N) *reinterpret_cast<uint32_t*>(row + c) = mma::pack_bf16(lo, hi);
    return;
  }
  if (c < N) row[c] = __float2bfloat16_rn(lo);
  if (c + 1 < N) row[c + 1] = __float2bfloat16_rn(hi);
}

// This thread's two rows of a tile (row0 and row0 + 8, each stored only below M, with its activation
// scale) and its first column.
struct TileRows {
  int row0, col0;
  bool ok0, ok1;
  float sa0, sa1;
};
[[maybe_unused]] __device__ __forceinline__ TileRows tile_rows(const Params& p, int mt, int nt, int cw, int warp, int lane) {
  TileRows r;
  r.row0 = mt * kBM + cw * 64 + warp * 16 + (lane >> 2), r.col0 = nt * kBN + 2 * (lane & 3);
  r.ok0 = r.row0 < p.M, r.ok1 = r.row0 + 8 < p.M;
  r.sa0 = r.ok0 ? p.sa[r.row0] : 0.0f, r.sa1 = r.ok1 ? p.sa[r.row0 + 8] : 0.0f;
  return r;
}

// The epilogue of one tile from the accumulators of warpgroup cw. Accumulator i of this thread: row
// w·16 + lane/4 + 8·((i >> 1) & 1), col (i/4)·8 + 2·(lane % 4) + (i & 1) of the warpgroup's
// 64 × 256 (attention_fp8.cu's layout). Rows past M are not stored. In 4 chunks of 64 columns,
// each chunk's loads before its stores: a residual load after a store to y may alias it, so one
// column pair at a time would wait out 64 load latencies per tile.
template <int E, bool kPairs>
__device__ __forceinline__ void store_tile(const uint32_t (&acc)[128], const Params& p, int mt, int nt, int cw,
                                           int warp, int lane) {
  const bool has_bias = p.bias != nullptr;
  const auto [row0, col0, ok0, ok1, sa0, sa1] = tile_rows(p, mt, nt, cw, warp, lane);
  __nv_bfloat16* out0 = p.out + int64_t(row0) * p.N;
  __nv_bfloat16* out1 = out0 + int64_t(8) * p.N;
  const __nv_bfloat16* res0 = E == kResidual ? p.residual + int64_t(row0) * p.N : nullptr;
  const __nv_bfloat16* res1 = E == kResidual ? res0 + int64_t(8) * p.N : nullptr;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    float2 sb[8], bb[8], c0[8], c1[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int c = col0 + (q * 8 + j) * 8;
      sb[j] = load_f32_pair<kPairs>(p.sb, c, p.N);
      bb[j] = has_bias ? load_bf16_pair<kPairs, true>(p.bias, c, p.N) : make_float2(0.0f, 0.0f);
      c0[j] = c1[j] = make_float2(0.0f, 0.0f);
      if constexpr (E == kResidual) {
        if (ok0) c0[j] = load_bf16_pair<kPairs, false>(res0, c, p.N);
        if (ok1) c1[j] = load_bf16_pair<kPairs, false>(res1, c, p.N);
      }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int c = col0 + (q * 8 + j) * 8, i = 4 * (q * 8 + j);
      if (ok0)
        store_bf16_pair<kPairs>(out0, c, p.N,
                                epilogue_value<E>(int32_t(acc[i]), sa0, sb[j].x, has_bias, bb[j].x, c0[j].x),
                                epilogue_value<E>(int32_t(acc[i + 1]), sa0, sb[j].y, has_bias, bb[j].y, c0[j].y));
      if (ok1)
        store_bf16_pair<kPairs>(out1, c, p.N,
                                epilogue_value<E>(int32_t(acc[i + 2]), sa1, sb[j].x, has_bias, bb[j].x, c1[j].x),
                                epilogue_value<E>(int32_t(acc[i + 3]), sa1, sb[j].y, has_bias, bb[j].y, c1[j].y));
    }
  }
}

// store_tile where every tile is full in N (Params::full), the probe's epilogue: no column guards
// and the bias known present or absent (kBias), so each access is at a constant offset from the
// thread's first column and a chunk's loads issue back to back (the guarded store_tile was slower on
// the residual and GELU shapes, results/gemm/1xh200/2026-12-02_1xh200_int8_gemm_lib.json). Same values
// as store_tile.
template <int E, bool kBias>
__device__ __forceinline__ void store_tile_full(const uint32_t (&acc)[128], const Params& p, int mt, int nt, int cw,
                                                int warp, int lane) {
  const auto [row0, col0, ok0, ok1, sa0, sa1] = tile_rows(p, mt, nt, cw, warp, lane);
  const float* sb_row = p.sb + col0;
  const __nv_bfloat16* bias_row = kBias ? p.bias + col0 : nullptr;
  __nv_bfloat16* out0 = p.out + int64_t(row0) * p.N + col0;
  __nv_bfloat16* out1 = out0 + int64_t(8) * p.N;
  const __nv_bfloat16* res0 = E == kResidual ? p.residual + int64_t(row0) * p.N + col0 : nullptr;
  const __nv_bfloat16* res1 = E == kResidual ? res0 + int64_t(8) * p.N : nullptr;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    float2 sb[8], bb[8], c0[8], c1[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int jc = (q * 8 + j) * 8;
      sb[j] = __ldg(reinterpret_cast<const float2*>(sb_row + jc));
      bb[j] = make_float2(0.0f, 0.0f);
      if constexpr (kBias) bb[j] = __bfloat1622float2(__ldg(reinterpret_cast<const __nv_bfloat162*>(bias_row + jc)));
      c0[j] = c1[j] = make_float2(0.0f, 0.0f);
      if constexpr (E == kResidual) {  // plain loads: the residual may be the output
        if (ok0) c0[j] = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(res0 + jc));
        if (ok1) c1[j] = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(res1 + jc));
      }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int jc = (q * 8 + j) * 8, i = 4 * (q * 8 + j);
      if (ok0)
        *reinterpret_cast<uint32_t*>(out0 + jc) =
            mma::pack_bf16(epilogue_value<E>(int32_t(acc[i]), sa0, sb[j].x, kBias, bb[j].x, c0[j].x),
                           epilogue_value<E>(int32_t(acc[i + 1]), sa0, sb[j].y, kBias, bb[j].y, c0[j].y));
      if (ok1)
        *reinterpret_cast<uint32_t*>(out1 + jc) =
            mma::pack_bf16(epilogue_value<E>(int32_t(acc[i + 2]), sa1, sb[j].x, kBias, bb[j].x, c1[j].x),
                           epilogue_value<E>(int32_t(acc[i + 3]), sa1, sb[j].y, kBias, bb[j].y, c1[j].y));
    }
  }
}

// Producer and consumers walk the same (tile, k slab) sequence; `it` counts slabs across tiles, so
// the stage ring and its parities continue from one tile to the next and the producer runs up to 4
// slabs into the next tile while the consumers are in the epilogue.
template <int E>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_int8_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, const Params p) {
#ifdef VGEN_SM90A_DEVICE
  using namespace sm90;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (mma::smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bar_full = base + kOffBar, bar_empty = bar_full + 8 * kStages;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(bar_full + 8 * s, 1);
      mbar_init(bar_empty + 8 * s, 8);  // lane 0 of each consumer warp
    }
    mbar_init_fence();
  }
  __syncthreads();
  const int units = p.m_tiles * p.n_tiles;

  if (wg == 0) {
    // 40/232, not attention_fp8.cu's 24/240: the tile loop's index math needs more than 24.
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      uint32_t it = 0;
      for (int u = blockIdx.x; u < units; u += gridDim.x) {
        int mt, nt;
        tile_coords(u, p.m_tiles, p.n_tiles, kGroupM, mt, nt);
        // A B half wholly past N is not loaded (its stale bytes feed only columns never stored);
        // partial boxes are zero-filled past M, N and K and count in full.
        const bool b_hi = nt * kBN + kBN / 2 < p.N;
        const uint32_t bytes = kABytes + (b_hi ? kBBytes : kBBytes / 2);
        for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
          const uint32_t s = it % kStages, ph = (it / kStages) & 1;
          mbar_wait_bounded(bar_empty + 8 * s, ph ^ 1);
          mbar_expect_tx(bar_full + 8 * s, bytes);
          const uint32_t dst = base + s * kStageBytes;
          tma_load_2d(dst, &ta, bar_full + 8 * s, kb * kBK, mt * kBM);
          tma_load_2d(dst + kABytes, &tb, bar_full + 8 * s, kb * kBK, nt * kBN);
          if (b_hi) tma_load_2d(dst + kABytes + kBBytes / 2, &tb, bar_full + 8 * s, kb * kBK, nt * kBN + kBN / 2);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int cw = wg - 1, warp = (threadIdx.x / 32) & 3, lane = threadIdx.x & 31;
    auto release = [&](uint32_t s) {
      __syncwarp();
      if (lane == 0) mbar_arrive(bar_empty + 8 * s);
    };
    uint32_t acc[128];
    uint32_t it = 0;
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
      int mt, nt;
      tile_coords(u, p.m_tiles, p.n_tiles, kGroupM, mt, nt);
      if constexpr (E == kResidual) {
        // All CTAs reach their epilogues together (equal tiles keep the waves in step), so the
        // residual's 8 MB a wave would come from DRAM in one burst: pull this tile's row segments
        // into L2 now, by the bulk-copy engine (one lane of each row's quad), a mainloop ahead.
        const int r = mt * kBM + cw * 64 + warp * 16 + (lane >> 2) + 8 * (lane & 1);
        const int c = nt * kBN, bytes = min(kBN, p.N - c) * 2;
        if (p.prefetch && (lane & 2) == 0 && r < p.M)
          asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p.residual + int64_t(r) * p.N + c),
                       "r"(bytes)
                       : "memory");
      }
      for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
        const uint32_t s = it % kStages;
        mbar_wait_bounded(bar_full + 8 * s, (it / kStages) & 1);
        const uint32_t a_tile = base + s * kStageBytes + uint32_t(cw) * 64 * kBK,
                       b_tile = base + s * kStageBytes + kABytes;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
          wgmma_ss_s8_n256(acc, desc_sw128(a_tile + kk * 32, 16, 1024), desc_sw128(b_tile + kk * 32, 16, 1024),
                           (kb | kk) != 0);
        wgmma_commit();
        // One slab's group stays in flight; the one before it has finished reading its stage.
        wgmma_wait<1>();
        if (kb > 0) release((it - 1) % kStages);
      }
      wgmma_wait<0>();
      reg_fence(acc);
      release((it - 1) % kStages);

      if (p.full && p.bias)
        store_tile_full<E, true>(acc, p, mt, nt, cw, warp, lane);
      else if (p.full)
        store_tile_full<E, false>(acc, p, mt, nt, cw, warp, lane);
      else if (p.pairs)
        store_tile<E, true>(acc, p, mt, nt, cw, warp, lane);
      else
        store_tile<E, false>(acc, p, mt, nt, cw, warp, lane);
    }
  }
#endif
}

// rows × cols bytes (row pitch `cols`), boxes of 128 × 128 bytes, 128-byte swizzle; zero fill.
bool make_map(CUtensorMap* map, const void* ptr, int64_t rows, int64_t cols) {
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(cols)};
  const cuuint32_t box[2] = {uint32_t(kBK), 128}, estr[2] = {1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(ptr), dims, strides, box, estr,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The current device's SM count where it runs the three kernels (sm90a_check.cuh), their shared
// memory raised; 0: not supported.
int device_sms() {
  static Sm90aKernels kernels(kSmemBytes, {reinterpret_cast<const void*>(gemm_int8_kernel<kPlain>),
                                           reinterpret_cast<const void*>(gemm_int8_kernel<kGelu>),
                                           reinterpret_cast<const void*>(gemm_int8_kernel<kResidual>)});
  return kernels.device_sms();
}

bool aligned(const void* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

}  // namespace

bool linear_int8_available() { return device_sms() > 0; }

cudaError_t linear_int8(const Int8LinearArgs& a, cudaStream_t stream) {
  if (!a.x8 || !a.x_scale || !a.w8 || !a.w_scale || !a.y || a.M < 1 || a.N < 1 || a.K < 1 || a.M > kMaxRows ||
      a.N > kMaxRows || a.K >= kMaxK || a.K % 16 != 0 || !aligned(a.x8, 16) || !aligned(a.w8, 16) ||
      !aligned(a.y, 4) || !aligned(a.residual, 4) || (a.residual && a.act != GemmAct::kNone))
    return cudaErrorInvalidValue;
  const int64_t m_tiles = (a.M + kBM - 1) / kBM, n_tiles = (a.N + kBN - 1) / kBN;
  if (m_tiles * n_tiles > INT_MAX / 2) return cudaErrorInvalidValue;  // int tile indices, u + gridDim too
  const int sms = device_sms();
  if (sms == 0) return cudaErrorNotSupported;
  CUtensorMap ta, tb;
  if (!make_map(&ta, a.x8, a.M, a.K) || !make_map(&tb, a.w8, a.N, a.K)) return cudaErrorInvalidValue;
  Params p;
  p.sa = a.x_scale, p.sb = a.w_scale;
  p.bias = static_cast<const __nv_bfloat16*>(a.bias);
  p.residual = static_cast<const __nv_bfloat16*>(a.residual);
  p.out = static_cast<__nv_bfloat16*>(a.y);
  p.M = int(a.M), p.N = int(a.N), p.m_tiles = int(m_tiles), p.n_tiles = int(n_tiles);
  p.k_blocks = int((a.K + kBK - 1) / kBK);
  p.pairs = a.N % 2 == 0 && aligned(a.w_scale, 8) && aligned(a.bias, 4);
  p.full = p.pairs && a.N % kBN == 0;  // y and residual 4-byte aligned: checked above
  p.prefetch = a.N % 8 == 0 && aligned(a.residual, 16);
  const unsigned grid = unsigned(std::min<int64_t>(sms, m_tiles * n_tiles));
  if (a.residual)
    gemm_int8_kernel<kResidual><<<grid, kThreads, kSmemBytes, stream>>>(ta, tb, p);
  else if (a.act == GemmAct::kGeluTanh)
    gemm_int8_kernel<kGelu><<<grid, kThreads, kSmemBytes, stream>>>(ta, tb, p);
  else
    gemm_int8_kernel<kPlain><<<grid, kThreads, kSmemBytes, stream>>>(ta, tb, p);
  return cudaGetLastError();
}

}  // namespace vgen::kern
