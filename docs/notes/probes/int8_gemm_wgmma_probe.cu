// Build and run on the GPU machine:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -Xptxas -v -o /tmp/i8w docs/notes/probes/int8_gemm_wgmma_probe.cu -lcublasLt && /tmp/i8w
// With the library op (kernels/gemm/gemm_int8.cu) timed beside the probe's plain kernel:
//   nvcc -std=c++20 --expt-relaxed-constexpr -O3 -gencode arch=compute_90a,code=sm_90a -I. -DVGEN_PROBE_LIB -o /tmp/i8l docs/notes/probes/int8_gemm_wgmma_probe.cu kernels/gemm/gemm_int8.cu kernels/common/sm90a_check.cu -lcublasLt && /tmp/i8l lib
//   (this `lib` mode compiles but has not run on a GPU yet: the library op's speed after its generalisation to
//   any N is unmeasured)
// Probe: can a hand-written Hopper INT8 W8A8 GEMM, out[m, n] = bf16(acc·sa[m]·sb[n] + bias[n]) (then GELU-tanh, or
// + the prior out for a residual) with both scales and the bias in its epilogue, run as fast as the cuBLASLt e4m3
// GEMM that vgen uses (descriptors of gemm_sweep.cu: TN e4m3, outer-vector f32 scales, bf16 bias / GELU-bias
// epilogue, bf16 out, residual through C with beta 1, its first heuristic)? cuBLASLt has no INT8 form with both
// scales and a bf16 output (results/gemm/1xh200/2026-12-02_1xh200_int8_gemm_probes.json). At the 720p block shapes of
// Wan2.1-14B (M = 75,600 tokens, not a multiple of 128). Checked against a naive exact-int32 reference: in full at
// two small odd shapes (one on 5 CTAs, so that each CTA loops over tiles), sampled (incl. the M tail and the last
// columns) at the big ones. Median of 10 timed runs after 3. One JSON line per check and per shape; exit 1 on a
// CUDA error, 2 on a mismatch.
// Kernel: persistent (one CTA per SM), CTA tile 128 × 256, K slabs of 128 bytes, 4 TMA stages of 48 KiB (128-byte
// swizzle), one producer warp, two consumer warpgroups of 64 × 256 each (m64n256k32 s8 wgmma, 128 s32
// accumulators), the epilogue from registers with direct 4-byte stores while the producer prefetches the next tile.
// Two variants, both checked and timed: "plain" (1-CTA clusters) and "cluster2_multicast_b" (2-CTA clusters on
// neighbouring M tiles, each B slab loaded once per pair by TMA multicast: less L2 → SM traffic, which at
// 128 × 256 tiles and ~1.3 POPS is ~7 TB/s without it). argv[1] = plain | cluster | both (default).
// Recorded in results/gemm/1xh200/2026-12-02_1xh200_int8_gemm_wgmma_probe.json: all checks exact; the plain kernel of this file
// against e4m3 at qkv / o+resid / ffn1 gelu / ffn2+resid 1.004 / 1.192 / 1.058 / 0.954× (an earlier form, the
// residual prefetched per line: 0.99 / 1.25 / 1.04 / 1.03×); cluster2 0.63× plain.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/attention/mma_bf16.cuh"
#include "kernels/common/tensor_map.cuh"
#include "kernels/common/wgmma_sm90.cuh"
#ifdef VGEN_PROBE_LIB
#include "kernels/gemm/gemm_int8.cuh"
#endif

namespace {

using namespace vgen::kern;

#define CK(x) check_status(int(x), #x, __LINE__)
void check_status(int s, const char* what, int line) {
  if (s == 0) return;
  const char* msg = s > 0 && s < 1000 ? cudaGetErrorString(cudaError_t(s)) : "";
  std::printf("{\"error\": \"status %d %s\", \"at\": \"line %d: %s\"}\n", s, msg, line, what);
  std::fflush(stdout);
  std::exit(1);
}

enum Epi : int { kBias = 0, kGelu = 1, kResidual = 2 };
const char* epi_name(int e) { return e == kGelu ? "gelu_tanh_bias" : e == kResidual ? "bias_residual" : "bias"; }

constexpr int kBM = 128, kBN = 256, kBK = 128, kStages = 4, kThreads = 384;
// Tiles run in groups of kGroupM M tiles, M fastest: the ~132 tiles in flight share ~8 B panels and 16 A panels,
// so a B of 70 MB (13824 × 5120) is read from DRAM once per group, not once per M tile.
constexpr int kGroupM = 16;
constexpr uint32_t kABytes = kBM * kBK, kBBytes = kBN * kBK, kStageBytes = kABytes + kBBytes;  // 16 + 32 KiB
constexpr uint32_t kOffBar = kStages * kStageBytes;
constexpr uint32_t kSmemBytes = kOffBar + 2 * 8 * kStages + 1024;  // + full/empty barriers + 1 KiB swizzle alignment

struct Params {
  const float *sa, *sb;
  const __nv_bfloat16* bias;
  __nv_bfloat16* out;
  int M, N, K, m_tiles, n_tiles, k_blocks;
};

// Unit t (a tile, or a cluster's pair of M tiles) → (M unit, N tile): groups of `group` M units, M fastest.
__host__ __device__ inline void tile_coords(int t, int m_units, int n_tiles, int group, int& mu, int& nt) {
  const int per_group = group * n_tiles, g = t / per_group, r = t - g * per_group;
  const int gm = min(group, m_units - g * group);
  mu = g * group + r % gm;
  nt = r / gm;
}

// The f32 epilogue, shared by the kernel and the reference so that both round identically: every step an explicit
// _rn intrinsic (no FMA contraction that could differ between the two call sites).
__device__ __forceinline__ float gelu_tanh(float y) {
  const float y3 = __fmul_rn(__fmul_rn(y, y), y);
  const float t = tanhf(__fmul_rn(0.7978845608028654f, __fadd_rn(y, __fmul_rn(0.044715f, y3))));
  return __fmul_rn(__fmul_rn(0.5f, y), __fadd_rn(1.0f, t));
}
template <int E>
__device__ __forceinline__ float epilogue_value(int32_t acc, float sa, float sb, float bias, float c_in) {
  float y = __fadd_rn(__fmul_rn(__fmul_rn(__int2float_rn(acc), sa), sb), bias);
  if constexpr (E == kGelu) y = gelu_tanh(y);
  if constexpr (E == kResidual) y = __fadd_rn(y, c_in);
  return y;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define VGEN_I8W_DEVICE 1
#endif


// Cluster helpers of the kCM = 2 form (two CTAs on neighbouring M tiles share each B slab through TMA multicast).
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {  // not .aligned: the producer warp's lanes arrive diverged
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// Arrives on the barrier at the same shared-memory offset in CTA `cta` of the cluster.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\nmbarrier.arrive.release.cluster.shared::cluster.b64 _, "
      "[ra];\n}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
// tma_load_2d into the same offset of every CTA in `mask`, each one's barrier at `bar`'s offset taking the bytes.
__device__ __forceinline__ void tma_load_2d_mc(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                               uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, "
      "%3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}

// kCM: CTAs per cluster along M. 1: each CTA loads its A tile and both 128-row halves of its B tile. 2: the pair
// of CTAs works on M tiles 2·mp and 2·mp + 1 of one N tile; CTA r loads B half r once, multicast into both, which
// halves B's L2 → SM traffic (48 → 32 KiB per CTA and slab). A stage's empty barrier then waits for the consumers
// of both CTAs (16 arrivals), since either CTA's producer writes into both.
template <int E, int kCM>
__global__ void __launch_bounds__(kThreads, 1)
    int8_gemm_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, const Params p) {
#ifdef VGEN_I8W_DEVICE
  using namespace sm90;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (mma::smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bar_full = base + kOffBar, bar_empty = bar_full + 8 * kStages;
  const int wg = threadIdx.x / 128;
  const uint32_t rank = kCM == 2 ? cluster_rank() : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(bar_full + 8 * s, 1);
      mbar_init(bar_empty + 8 * s, 8 * kCM);  // lane 0 of each consumer warp of each CTA of the cluster
    }
    mbar_init_fence();
  }
  // The peer's barriers must exist before this CTA's first multicast or remote arrive reaches them.
  if constexpr (kCM == 2)
    cluster_sync();
  else
    __syncthreads();
  // Clusters (or CTAs) walk M-tile pairs (or tiles); both CTAs of a cluster see the same sequence.
  const int m_units = (p.m_tiles + kCM - 1) / kCM, units = m_units * p.n_tiles;
  const int first = blockIdx.x / kCM, stride = gridDim.x / kCM;

  // Producer and consumers walk the same (tile, k slab) sequence; `it` counts slabs across tiles, so the stage ring
  // and its parities continue from one tile to the next and the producer runs up to 4 slabs into the next tile while
  // the consumers are in the epilogue.
  if (wg == 0) {
    // 40/232, not attention_fp8.cu's 24/240: the tile loop's index math needs more than 24 (CUTLASS's split too).
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      uint32_t it = 0;
      for (int u = first; u < units; u += stride) {
        int mu, nt;
        tile_coords(u, m_units, p.n_tiles, kGroupM / kCM, mu, nt);
        // The odd last M tile's partner lies wholly past M: it loads the last real tile's rows instead (and stores
        // nothing, its rows being >= M), so no box starts outside the tensor.
        const int a_row = min(mu * kCM + int(rank), p.m_tiles - 1) * kBM;
        for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
          const uint32_t s = it % kStages, ph = (it / kStages) & 1;
          mbar_wait_bounded(bar_empty + 8 * s, ph ^ 1);
          mbar_expect_tx(bar_full + 8 * s, kStageBytes);  // full boxes count, zero-filled rows past M included
          const uint32_t dst = base + s * kStageBytes;
          tma_load_2d(dst, &ta, bar_full + 8 * s, kb * kBK, a_row);
          if constexpr (kCM == 2) {
            tma_load_2d_mc(dst + kABytes + rank * (kBBytes / 2), &tb, bar_full + 8 * s, kb * kBK,
                           nt * kBN + int(rank) * (kBN / 2), uint16_t(3));
          } else {
            tma_load_2d(dst + kABytes, &tb, bar_full + 8 * s, kb * kBK, nt * kBN);
            tma_load_2d(dst + kABytes + kBBytes / 2, &tb, bar_full + 8 * s, kb * kBK, nt * kBN + kBN / 2);
          }
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1, warp = (threadIdx.x / 32) & 3, lane = threadIdx.x & 31;
    auto release = [&](uint32_t s) {
      __syncwarp();
      if (lane == 0) {
        if constexpr (kCM == 2) {
          mbar_arrive_cluster(bar_empty + 8 * s, 0);
          mbar_arrive_cluster(bar_empty + 8 * s, 1);
        } else {
          mbar_arrive(bar_empty + 8 * s);
        }
      }
    };
    uint32_t acc[128];
    uint32_t it = 0;
    for (int u = first; u < units; u += stride) {
      int mu, nt;
      tile_coords(u, m_units, p.n_tiles, kGroupM / kCM, mu, nt);
      const int mt = mu * kCM + int(rank);
      if constexpr (E == kResidual) {
        // The epilogue reads the prior out, and all CTAs reach their epilogues together (equal tiles keep the waves
        // in step), so its 8 MB a wave would come from DRAM in one burst: pull this tile's 128 row segments of 512
        // bytes into L2 now, by the bulk-copy engine (one lane of each row's quad), a mainloop ahead.
        const int r = mt * kBM + cw * 64 + warp * 16 + (lane >> 2) + 8 * (lane & 1);
        if ((lane & 2) == 0 && r < p.M)
          asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p.out + int64_t(r) * p.N + nt * kBN),
                       "r"(kBN * 2)
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
        // One slab's group stays in flight; the one before it has finished reading its stage, which goes back.
        wgmma_wait<1>();
        if (kb > 0) release((it - 1) % kStages);
      }
      wgmma_wait<0>();
      reg_fence(acc);
      release((it - 1) % kStages);

      // Epilogue. Accumulator i of this thread: row w·16 + lane/4 + 8·((i >> 1) & 1), col (i/4)·8 + 2·(lane % 4) +
      // (i & 1) of the warpgroup's 64 × 256 (attention_fp8.cu's layout). Rows past M (zero-filled by TMA) not stored.
      // In 4 chunks of 64 columns, each chunk's loads issued before its stores: a load after a store to `out` may
      // alias it, so one column pair at a time would wait out 64 load latencies per tile.
      const int row0 = mt * kBM + cw * 64 + warp * 16 + (lane >> 2), col0 = nt * kBN + 2 * (lane & 3);
      const bool ok0 = row0 < p.M, ok1 = row0 + 8 < p.M;
      const float sa0 = ok0 ? p.sa[row0] : 0.0f, sa1 = ok1 ? p.sa[row0 + 8] : 0.0f;
      __nv_bfloat16* out0 = p.out + int64_t(row0) * p.N + col0;
      __nv_bfloat16* out1 = out0 + int64_t(8) * p.N;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float2 sb[8], bb[8], c0[8], c1[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int jc = (q * 8 + j) * 8;
          sb[j] = __ldg(reinterpret_cast<const float2*>(p.sb + col0 + jc));
          bb[j] = __bfloat1622float2(__ldg(reinterpret_cast<const __nv_bfloat162*>(p.bias + col0 + jc)));
          c0[j] = c1[j] = make_float2(0.0f, 0.0f);
          if constexpr (E == kResidual) {
            if (ok0) c0[j] = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(out0 + jc));
            if (ok1) c1[j] = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(out1 + jc));
          }
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int jc = (q * 8 + j) * 8, i = 4 * (q * 8 + j);
          if (ok0)
            *reinterpret_cast<uint32_t*>(out0 + jc) =
                mma::pack_bf16(epilogue_value<E>(int32_t(acc[i]), sa0, sb[j].x, bb[j].x, c0[j].x),
                               epilogue_value<E>(int32_t(acc[i + 1]), sa0, sb[j].y, bb[j].y, c0[j].y));
          if (ok1)
            *reinterpret_cast<uint32_t*>(out1 + jc) =
                mma::pack_bf16(epilogue_value<E>(int32_t(acc[i + 2]), sa1, sb[j].x, bb[j].x, c1[j].x),
                               epilogue_value<E>(int32_t(acc[i + 3]), sa1, sb[j].y, bb[j].y, c1[j].y));
        }
      }
    }
  }
  // No CTA of a cluster may exit while its peer can still arrive on its barriers or multicast into it.
  if constexpr (kCM == 2) cluster_sync();
#endif
}

// ---- host side: data, reference, timing ----

__device__ __forceinline__ uint32_t hash32(uint64_t i, uint32_t seed) {
  uint32_t h = uint32_t(i) * 2654435761u ^ uint32_t(i >> 32) * 0x85ebca6bu ^ seed * 0x9e3779b9u;
  h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
  return h;
}
__global__ void fill_i8(int8_t* p, size_t n, uint32_t seed) {  // uniform in [-127, 127]
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = int8_t(int(hash32(i, seed) % 255u) - 127);
}
__global__ void fill_e4m3(uint8_t* p, size_t n, uint32_t seed) {  // mask 0x77: small exponents, no NaN
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = uint8_t(hash32(i, seed)) & 0x77;
}
__global__ void fill_f32(float* p, size_t n, uint32_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = lo + (hi - lo) * float(hash32(i, seed) >> 8) * (1.0f / 16777216.0f);
}
__global__ void fill_bf16(__nv_bfloat16* p, size_t n, uint32_t seed, float amp) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn(amp * (float(hash32(i, seed) >> 8) * (2.0f / 16777216.0f) - 1.0f));
}
__global__ void gather(const __nv_bfloat16* out, int N, const int* sm, const int* sn, int count, __nv_bfloat16* dst) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = out[int64_t(sm[i]) * N + sn[i]];
}
// One thread per sampled output: exact int32 dot, the kernel's epilogue_value; c_in holds the samples' prior out.
template <int E>
__global__ void reference(const int8_t* A, const int8_t* B, const float* sa, const float* sb, const __nv_bfloat16* bias,
                          const __nv_bfloat16* c_in, int N, int K, const int* sm, const int* sn, int count,
                          __nv_bfloat16* ref) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int m = sm[i], n = sn[i];
  const int8_t *a = A + int64_t(m) * K, *b = B + int64_t(n) * K;
  int32_t acc = 0;
  for (int k = 0; k < K; ++k) acc += int32_t(a[k]) * int32_t(b[k]);
  ref[i] = __float2bfloat16_rn(
      epilogue_value<E>(acc, sa[m], sb[n], __bfloat162float(bias[n]), E == kResidual ? __bfloat162float(c_in[i]) : 0.0f));
}

struct Buffers {
  int8_t *a = nullptr, *b = nullptr;
  uint8_t *a8 = nullptr, *b8 = nullptr;  // e4m3 copies for cuBLASLt
  float *sa = nullptr, *sb = nullptr;
  __nv_bfloat16 *bias = nullptr, *out = nullptr;
  size_t out_elems = 0;
};

bool make_map(CUtensorMap* map, const void* ptr, int64_t rows, int64_t cols, uint32_t box_rows) {
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(cols)};
  const cuuint32_t box[2] = {uint32_t(kBK), box_rows}, estr[2] = {1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(ptr), dims, strides, box, estr,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

int g_max_clusters = 0;  // co-resident 2-CTA clusters of the kCM = 2 kernel (cudaOccupancyMaxActiveClusters)

template <int E, int kCM>
cudaLaunchConfig_t launch_config(int ctas, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(ctas)), cfg.blockDim = dim3(kThreads), cfg.dynamicSmemBytes = kSmemBytes;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = kCM, attr->val.clusterDim.y = 1, attr->val.clusterDim.z = 1;
  cfg.attrs = attr, cfg.numAttrs = 1;
  return cfg;
}
template <int E, int kCM>
void launch_kernel(const CUtensorMap& ta, const CUtensorMap& tb, const Params& p, int max_ctas) {
  const int units = (p.m_tiles + kCM - 1) / kCM * p.n_tiles;
  int clusters = std::min(std::max(max_ctas / kCM, 1), units);
  if (kCM == 2) clusters = std::min(clusters, g_max_clusters);
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = launch_config<E, kCM>(clusters * kCM, &attr);
  CK(cudaLaunchKernelEx(&cfg, int8_gemm_kernel<E, kCM>, ta, tb, p));
}
template <int kCM>
void launch_epi(const CUtensorMap& ta, const CUtensorMap& tb, const Params& p, int epi, int max_ctas) {
  if (epi == kGelu)
    launch_kernel<kGelu, kCM>(ta, tb, p, max_ctas);
  else if (epi == kResidual)
    launch_kernel<kResidual, kCM>(ta, tb, p, max_ctas);
  else
    launch_kernel<kBias, kCM>(ta, tb, p, max_ctas);
}
template <int kCM>
void set_smem_limits() {
  CK(cudaFuncSetAttribute(int8_gemm_kernel<kBias, kCM>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)));
  CK(cudaFuncSetAttribute(int8_gemm_kernel<kGelu, kCM>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)));
  CK(cudaFuncSetAttribute(int8_gemm_kernel<kResidual, kCM>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          int(kSmemBytes)));
}

// Launches the INT8 GEMM (cm CTAs per cluster) on at most max_ctas persistent CTAs; cm 0: the library op
// kern::linear_int8 (kernels/gemm/gemm_int8.cuh, built in with -DVGEN_PROBE_LIB), on all SMs.
void launch_int8(const Buffers& bu, int M, int N, int K, int epi, int cm, int max_ctas) {
#ifdef VGEN_PROBE_LIB
  if (cm == 0) {
    Int8LinearArgs a;
    a.x8 = bu.a, a.x_scale = bu.sa, a.w8 = bu.b, a.w_scale = bu.sb, a.bias = bu.bias, a.y = bu.out;
    a.residual = epi == kResidual ? bu.out : nullptr;
    a.M = M, a.N = N, a.K = K, a.act = epi == kGelu ? GemmAct::kGeluTanh : GemmAct::kNone;
    CK(linear_int8(a, nullptr));
    return;
  }
#endif
  if (M < 1 || N % kBN != 0 || K % kBK != 0 || N < kBN || K < kBK) {
    std::printf("{\"error\": \"shape %dx%dx%d: needs N %% 256 == 0, K %% 128 == 0\"}\n", M, N, K);
    std::exit(1);
  }
  CUtensorMap ta, tb;  // B in 128-row boxes: the two halves of a tile (multicast by one CTA each when cm = 2)
  if (!tensor_map_encoder() || !make_map(&ta, bu.a, M, K, kBM) || !make_map(&tb, bu.b, N, K, kBN / 2)) {
    std::printf("{\"error\": \"tensor map encode failed\"}\n");
    std::exit(1);
  }
  const Params p{bu.sa, bu.sb, bu.bias, bu.out, M, N, K, (M + kBM - 1) / kBM, N / kBN, K / kBK};
  if (cm == 2)
    launch_epi<2>(ta, tb, p, epi, max_ctas);
  else
    launch_epi<1>(ta, tb, p, epi, max_ctas);
}

struct Check {
  int samples = 0, mismatch = 0, oob_writes = 0;
  double max_abs = 0;
};

// Runs the GEMM once and compares the listed outputs with the reference (bf16 values more than 1 ulp apart, NaN
// included: the non-residual outputs start as NaN so that an unwritten one fails). Also counts writes into the
// 128 rows after M.
Check check(const Buffers& bu, int M, int N, int K, int epi, int cm, int max_ctas, const std::vector<int>& hm,
            const std::vector<int>& hn) {
  Check c;
  c.samples = int(hm.size());
  const size_t mn = size_t(M) * N, guard = size_t(kBM) * N;
  if (mn + guard > bu.out_elems) check_status(-1, "output buffer too small", __LINE__);
  int *sm, *sn;
  __nv_bfloat16 *cin, *ref, *got;
  CK(cudaMalloc(&sm, hm.size() * 4)), CK(cudaMalloc(&sn, hm.size() * 4));
  CK(cudaMalloc(&cin, hm.size() * 2)), CK(cudaMalloc(&ref, hm.size() * 2)), CK(cudaMalloc(&got, hm.size() * 2));
  CK(cudaMemcpy(sm, hm.data(), hm.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sn, hn.data(), hn.size() * 4, cudaMemcpyHostToDevice));
  if (epi == kResidual)
    fill_bf16<<<2048, 256>>>(bu.out, mn, 7, 2.0f);
  else
    CK(cudaMemset(bu.out, 0xFF, mn * 2));
  CK(cudaMemset(bu.out + mn, 0xFF, guard * 2));
  const int blocks = (c.samples + 255) / 256;
  gather<<<blocks, 256>>>(bu.out, N, sm, sn, c.samples, cin);
  CK(cudaGetLastError());
  launch_int8(bu, M, N, K, epi, cm, max_ctas);
  CK(cudaDeviceSynchronize());
  gather<<<blocks, 256>>>(bu.out, N, sm, sn, c.samples, got);
  if (epi == kGelu)
    reference<kGelu><<<blocks, 256>>>(bu.a, bu.b, bu.sa, bu.sb, bu.bias, cin, N, K, sm, sn, c.samples, ref);
  else if (epi == kResidual)
    reference<kResidual><<<blocks, 256>>>(bu.a, bu.b, bu.sa, bu.sb, bu.bias, cin, N, K, sm, sn, c.samples, ref);
  else
    reference<kBias><<<blocks, 256>>>(bu.a, bu.b, bu.sa, bu.sb, bu.bias, cin, N, K, sm, sn, c.samples, ref);
  CK(cudaDeviceSynchronize());
  std::vector<uint16_t> r(hm.size()), g(hm.size()), oob(guard);
  CK(cudaMemcpy(r.data(), ref, r.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(g.data(), got, g.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(oob.data(), bu.out + mn, guard * 2, cudaMemcpyDeviceToHost));
  auto to_f = [](uint16_t v) {
    const uint32_t u = uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  auto ordered = [](uint16_t v) { return (v & 0x8000) ? -int(v & 0x7FFF) : int(v); };  // bf16 bits on a line
  for (size_t i = 0; i < r.size(); ++i) {
    const float fr = to_f(r[i]), fg = to_f(g[i]);
    if (std::isnan(fr) || std::isnan(fg) || std::abs(ordered(r[i]) - ordered(g[i])) > 1) ++c.mismatch;
    const double d = std::isnan(fg) ? INFINITY : std::fabs(double(fr) - double(fg));
    c.max_abs = std::max(c.max_abs, d);
  }
  for (uint16_t v : oob) c.oob_writes += v != 0xFFFF;
  cudaFree(sm), cudaFree(sn), cudaFree(cin), cudaFree(ref), cudaFree(got);
  return c;
}

double median_ms(std::vector<float> t) {
  std::sort(t.begin(), t.end());
  return t.empty() ? -1.0 : 0.5 * (t[(t.size() - 1) / 2] + t[t.size() / 2]);
}

template <class F>
double time_runs(F&& run) {  // 3 warm-ups, median of 10 timed runs
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)), CK(cudaEventCreate(&e1));
  std::vector<float> t;
  for (int r = 0; r < 13; ++r) {
    CK(cudaEventRecord(e0));
    if (!run()) return -1.0;
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= 3) t.push_back(ms);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  return median_ms(t);
}

// The e4m3 GEMM of gemm_sweep.cu (first heuristic): D [M, N] = W (K × N, op T) · X (K × M), outer-vector scales.
double time_e4m3(cublasLtHandle_t lt, const Buffers& bu, int M, int N, int K, int epi, void* ws, size_t ws_bytes) {
  cublasLtMatmulDesc_t desc;
  CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const int8_t fast = 0;
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
  const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof(mode)));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof(mode)));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &bu.sb, sizeof(void*)));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &bu.sa, sizeof(void*)));
  const cublasLtEpilogue_t e = epi == kGelu ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
  const int32_t bt = CUDA_R_16BF;
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
  CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bu.bias, sizeof(void*)));
  cublasLtMatrixLayout_t la, lb, ld;
  CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K));
  CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, M, K));
  CK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, N, M, N));
  cublasLtMatmulPreference_t pref;
  CK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t wsz = ws_bytes;
  const uint32_t red = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof(wsz)));
  CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &red, sizeof(red)));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  double ms = -1.0;
  if (cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &res, &found) == CUBLAS_STATUS_SUCCESS &&
      found > 0) {
    const float alpha = 1.0f, beta = epi == kResidual ? 1.0f : 0.0f;
    ms = time_runs([&] {
      return cublasLtMatmul(lt, desc, &alpha, bu.b8, la, bu.a8, lb, &beta, bu.out, ld, bu.out, ld, &res.algo, ws,
                            res.workspaceSize, 0) == CUBLAS_STATUS_SUCCESS;
    });
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  return ms;
}

void print_check(const Check& c) {
  std::printf("{\"samples\": %d, \"mismatch_gt_1ulp\": %d, \"max_abs_diff\": %.6g, \"oob_writes\": %d}", c.samples,
              c.mismatch, c.max_abs, c.oob_writes);
}

}  // namespace

int main(int argc, char** argv) {
  // argv[1]: plain (1 CTA per cluster), cluster (2, B multicast) or both (default).
  const char* mode = argc > 1 ? argv[1] : "both";
  std::vector<int> variants;
  if (std::strcmp(mode, "lib") == 0) {
#ifdef VGEN_PROBE_LIB
    variants = {0, 1};  // the library op, then the probe's plain kernel, same call
#else
    std::printf("{\"error\": \"lib needs -DVGEN_PROBE_LIB and kernels/gemm/gemm_int8.cu on the nvcc line\"}\n");
    return 1;
#endif
  } else {
    if (std::strcmp(mode, "cluster") != 0) variants.push_back(1);
    if (std::strcmp(mode, "plain") != 0) variants.push_back(2);
  }
  int dev = 0, sms = 0;
  cudaDeviceProp prop{};
  CK(cudaGetDevice(&dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  sms = prop.multiProcessorCount;
  if (prop.major != 9 || size_t(prop.sharedMemPerBlockOptin) < kSmemBytes) {
    std::printf("{\"error\": \"needs sm_90 with %u bytes of shared memory per block\"}\n", kSmemBytes);
    return 1;
  }
  set_smem_limits<1>();
  set_smem_limits<2>();
  {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = launch_config<kBias, 2>(sms, &attr);
    CK(cudaOccupancyMaxActiveClusters(&g_max_clusters, int8_gemm_kernel<kBias, 2>, &cfg));
    if (g_max_clusters < 1) check_status(-1, "no 2-CTA cluster fits", __LINE__);
  }

  const int64_t kMaxM = 75600, kMaxN = 13824, kMaxMK = kMaxM * 13824, kMaxNK = int64_t(13824) * 5120;
  Buffers bu;
  bu.out_elems = size_t(kMaxM + kBM) * kMaxN;
  CK(cudaMalloc(&bu.a, kMaxMK)), CK(cudaMalloc(&bu.b, kMaxNK)), CK(cudaMalloc(&bu.a8, kMaxMK));
  CK(cudaMalloc(&bu.b8, kMaxNK)), CK(cudaMalloc(&bu.sa, kMaxM * 4)), CK(cudaMalloc(&bu.sb, kMaxN * 4));
  CK(cudaMalloc(&bu.bias, kMaxN * 2)), CK(cudaMalloc(&bu.out, bu.out_elems * 2));
  fill_i8<<<4096, 256>>>(bu.a, kMaxMK, 1), fill_i8<<<4096, 256>>>(bu.b, kMaxNK, 2);
  fill_e4m3<<<4096, 256>>>(bu.a8, kMaxMK, 3), fill_e4m3<<<4096, 256>>>(bu.b8, kMaxNK, 4);
  fill_f32<<<256, 256>>>(bu.sa, kMaxM, 5, 1e-3f, 2e-3f), fill_f32<<<64, 256>>>(bu.sb, kMaxN, 6, 1e-3f, 2e-3f);
  fill_bf16<<<64, 256>>>(bu.bias, kMaxN, 8, 0.5f);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  const size_t ws_bytes = size_t(64) << 20;
  void* ws;
  CK(cudaMalloc(&ws, ws_bytes));
  struct Small { int M, N, K, ctas; };
  struct Big { int N, K, epi; const char* name; };
  // Small odd shapes in full: all SMs (one tile each) and 5 CTAs (each loops over tiles; 5 slabs per tile, so
  // the stage ring's parity wraps mid-tile).
  const Small smalls[] = {{333, 512, 384, sms}, {1000, 768, 640, 5}};
  const Big bigs[] = {{5120, 5120, kBias, "qkv 5120x5120 bias"},
                      {5120, 5120, kResidual, "o 5120x5120 bias+resid"},
                      {13824, 5120, kGelu, "ffn1 13824x5120 gelu_bias"},
                      {5120, 13824, kResidual, "ffn2 5120x13824 bias+resid"}};
  double f8_ms[4] = {0, 0, 0, 0};
  const int M = int(kMaxM);
  bool all_ok = true;
  // Variant by variant, so that a failure of the second (a trap) leaves the first's lines printed.
  for (const int cm : variants) {
    char vname[64];
    std::snprintf(vname, sizeof vname, cm == 2 ? "cluster2_multicast_b (%d clusters)" : cm == 0 ? "lib" : "plain",
                  g_max_clusters);
    for (const Small& s : smalls)
      for (int epi = 0; epi < 3; ++epi) {
        std::vector<int> hm, hn;
        for (int m = 0; m < s.M; ++m)
          for (int n = 0; n < s.N; ++n) hm.push_back(m), hn.push_back(n);
        const Check c = check(bu, s.M, s.N, s.K, epi, cm, s.ctas, hm, hn);
        all_ok &= c.mismatch == 0 && c.oob_writes == 0;
        std::printf("{\"shape\": \"small full check\", \"variant\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, "
                    "\"max_ctas\": %d, \"epilogue\": \"%s\", \"check\": ",
                    vname, s.M, s.N, s.K, s.ctas, epi_name(epi));
        print_check(c);
        std::printf("}\n");
        std::fflush(stdout);
      }
    for (int b = 0; b < 4; ++b) {
      const Big& s = bigs[b];
      // 4096 samples: a quarter in the M tail (rows 75520..75599), an eighth in the last 256 columns, (0, 0) and
      // (M-1, N-1), the rest anywhere.
      std::vector<int> hm, hn;
      uint64_t x = 0x9e3779b97f4a7c15ull * uint64_t(s.N + s.K + s.epi);
      auto rnd = [&] { x ^= x << 13, x ^= x >> 7, x ^= x << 17; return uint32_t(x >> 16); };
      hm.push_back(0), hn.push_back(0), hm.push_back(M - 1), hn.push_back(s.N - 1);
      for (int i = 2; i < 4096; ++i) {
        hm.push_back(i % 4 == 0 ? M - 80 + int(rnd() % 80) : int(rnd() % uint32_t(M)));
        hn.push_back(i % 8 == 1 ? s.N - 256 + int(rnd() % 256) : int(rnd() % uint32_t(s.N)));
      }
      const Check c = check(bu, M, s.N, s.K, s.epi, cm, sms, hm, hn);
      all_ok &= c.mismatch == 0 && c.oob_writes == 0;
      const double i8_ms = time_runs([&] { launch_int8(bu, M, s.N, s.K, s.epi, cm, sms); return true; });
      if (f8_ms[b] == 0) f8_ms[b] = time_e4m3(lt, bu, M, s.N, s.K, s.epi, ws, ws_bytes);
      CK(cudaDeviceSynchronize());
      const double flop = 2.0 * M * s.N * s.K, f8 = f8_ms[b];
      std::printf("{\"shape\": \"%s\", \"variant\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, \"epilogue\": \"%s\", "
                  "\"int8_wgmma_ms\": %.4f, \"int8_wgmma_tops\": %.1f, \"e4m3_cublaslt_ms\": %.4f, "
                  "\"e4m3_cublaslt_tflops\": %.1f, \"ratio_int8_over_e4m3\": %.4f, \"check\": ",
                  s.name, vname, M, s.N, s.K, epi_name(s.epi), i8_ms, flop / (i8_ms * 1e-3) / 1e12, f8,
                  f8 > 0 ? flop / (f8 * 1e-3) / 1e12 : -1.0, f8 > 0 ? i8_ms / f8 : -1.0);
      print_check(c);
      std::printf("}\n");
      std::fflush(stdout);
    }
  }
  CK(cudaDeviceSynchronize());
  cublasLtDestroy(lt);
  return all_ok ? 0 : 2;
}
