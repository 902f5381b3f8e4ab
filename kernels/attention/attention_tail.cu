// The remainder of a key split folded into the main range's result in one pass (attention.cuh:
// attention_tail_merge_bf16). cuDNN's SDPA runs ~7% slower per FLOP on key counts that are not a
// multiple of 128, so long attentions run the aligned keys on cuDNN and the last < 128 here.
//
// A block of 8 warps owns one (batch, head) and 1,024 queries; the range's K and V (at most 128
// keys, padded to 16 with zero rows) sit in shared memory for the whole block. Each warp walks its
// 16-query tiles on its own: the main range's bf16 output, and the next Q tile once this tile's
// scores are done, come in by cp.async while the warp computes, S = Q·Kᵀ and P·V run on mma.sync m16n8k16, the
// softmax starts from the main range's LSE, and the merged tile is written back into shared memory
// and stored by whole rows with 16-byte stores (4-byte accesses in the fragment layout spread each
// warp access over 8 rows). The pass is bound by reading q and out and writing out once.
#include <cuda_bf16.h>

#include <cmath>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/mma_bf16.cuh"

namespace vgen::kern {

namespace {

using namespace mma;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kTilesPerWarp = 8;                           // 16-query tiles per warp
constexpr int kRowsPerBlock = kWarps * kTilesPerWarp * 16;  // queries per block

struct TailParams {
  const __nv_bfloat16* q;
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  __nv_bfloat16* out;
  const float* lse_in;
  float* lse_out;
  int64_t q_rs, k_rs, v_rs, o_rs;  // token strides (elements)
  int Sq, Skv, H, D, nk;           // nk: keys of the range, 1..KG*16
  float scale_log2;
};

// K and V, then per warp one tile of Q and one of out. One Q buffer (the next tile's copy starts
// after this tile's scores) leaves room for two blocks per SM at 80 keys: the 720p fold took
// 0.72-0.82 ms against 0.90-1.03 ms with two buffers, which overlap the copy with the scores but fit
// one block per SM (results/dit/1xh200/2026-12-01_h200_issue7_runs51-55.json, c392ad7).
constexpr int smem_bytes(int DP, int KG) { return (2 * KG * 16 + kWarps * 2 * 16) * (DP + 8) * 2; }

// Two blocks per SM where their shared memory fits (228 KiB, 1 KiB reserved per block); then the
// registers are capped to fit too, otherwise the kernel may use more and not spill.
template <int DP, int KG>
constexpr int kMinBlocks = 2 * (smem_bytes(DP, KG) + 1024) <= 228 * 1024 ? 2 : 1;

// DP: head dim padded to 64 or 128; KG: the range's keys in groups of 16.
template <int DP, int KG>
__global__ void __launch_bounds__(kThreads, kMinBlocks<DP, KG>) tail_merge_kernel(const TailParams p) {
  constexpr int LDS = DP + 8;   // +16 bytes per row: ldmatrix rows hit distinct banks
  constexpr int KN = KG * 16;   // keys, padded
  constexpr int CPR = DP / 8;   // 16-byte chunks per row
  constexpr int KT = DP / 16;   // k-steps of Q·Kᵀ
  constexpr int NT = KN / 8;    // score tiles of 8 keys
  constexpr int HALF = DP / 2;  // P·V runs over half the columns at a time (register budget)
  constexpr int DT = HALF / 8;  // output tiles of 8 columns per half
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sK = reinterpret_cast<__nv_bfloat16*>(smem_raw);  // [KN][LDS]
  __nv_bfloat16* sV = sK + KN * LDS;                                // [KN][LDS]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __nv_bfloat16* sQ = sV + KN * LDS + warp * 2 * 16 * LDS;  // this warp's Q tile [16][LDS]
  __nv_bfloat16* sO = sQ + 16 * LDS;                         // and its out tile [16][LDS]
  const int h = blockIdx.y, b = blockIdx.z;

  const __nv_bfloat16* gk = p.k + int64_t(b) * p.Skv * p.k_rs + int64_t(h) * p.D;
  const __nv_bfloat16* gv = p.v + int64_t(b) * p.Skv * p.v_rs + int64_t(h) * p.D;
  for (int c = threadIdx.x; c < KN * CPR; c += kThreads) {
    const int r = c / CPR, col = (c % CPR) * 8;
    const bool ok = r < p.nk && col < p.D;  // zero fill: pad keys and columns are never NaN
    cp_async16(smem_u32(sK + r * LDS + col), ok ? gk + int64_t(r) * p.k_rs + col : gk, ok ? 16 : 0);
    cp_async16(smem_u32(sV + r * LDS + col), ok ? gv + int64_t(r) * p.v_rs + col : gv, ok ? 16 : 0);
  }
  cp_async_commit();

  const int row_base = blockIdx.x * kRowsPerBlock;
  auto tile_row = [&](int t) { return row_base + (t * kWarps + warp) * 16; };
  // One cp.async group: rows [m0, m0 + 16) of head h of g (token stride rs) into dst [16][LDS].
  auto load_rows = [&](const __nv_bfloat16* g, int64_t rs, int m0, __nv_bfloat16* dst) {
    for (int c = lane; c < 16 * CPR; c += 32) {
      const int r = c / CPR, col = (c % CPR) * 8;
      const bool ok = m0 + r < p.Sq && col < p.D;
      const __nv_bfloat16* src = ok ? g + (int64_t(b) * p.Sq + m0 + r) * rs + int64_t(h) * p.D + col : g;
      cp_async16(smem_u32(dst + r * LDS + col), src, ok ? 16 : 0);
    }
    cp_async_commit();
  };
  auto load_q = [&](int t) { load_rows(p.q, p.q_rs, tile_row(t), sQ); };
  if (tile_row(0) < p.Sq) load_q(0);
  cp_async_wait<0>();
  __syncthreads();  // K and V are shared by the warps; nothing below synchronises the block

  const int64_t lse_base = (int64_t(b) * p.H + h) * p.Sq;
  for (int t = 0; t < kTilesPerWarp; ++t) {
    const int m0 = tile_row(t);
    if (m0 >= p.Sq) break;  // uniform per warp; later tiles lie further on
    // Groups in flight: Q(t) (unless done), then out(t); Q(t + 1) starts after the scores below.
    load_rows(p.out, p.o_rs, m0, sO);
    const bool next = t + 1 < kTilesPerWarp && tile_row(t + 1) < p.Sq;
    cp_async_wait<1>();
    __syncwarp();
    const __nv_bfloat16* cQ = sQ;

    // S = Q·Kᵀ: 16 queries x KN keys.
    float s[NT][4];
    zero_acc(s);
#pragma unroll
    for (int ks = 0; ks < KT; ++ks) {
      uint32_t qf[4];
      ldmatrix_x4(smem_u32(cQ + ((lane & 7) + ((lane >> 3) & 1) * 8) * LDS + ks * 16 + (lane >> 4) * 8), qf[0],
                  qf[1], qf[2], qf[3]);
#pragma unroll
      for (int np = 0; np < KG; ++np) {
        uint32_t b0, b1, b2, b3;
        const int key = np * 16 + (lane & 7) + (lane >> 4) * 8;
        ldmatrix_x4(smem_u32(sK + key * LDS + ks * 16 + ((lane >> 3) & 1) * 8), b0, b1, b2, b3);
        mma_bf16(s[2 * np], qf, b0, b1);
        mma_bf16(s[2 * np + 1], qf, b2, b3);
      }
    }

    if (next) {  // the Q buffer is read: the next tile's copy may start
      __syncwarp();
      load_q(t + 1);
    }

    // Softmax in the log2 domain, started from the main range: its weight is exp2(lse_in - m).
    int row[2];
    float lin[2], mx[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row[r] = m0 + (lane >> 2) + r * 8;
      lin[r] = row[r] < p.Sq ? p.lse_in[lse_base + row[r]] * kLog2e : -INFINITY;
      mx[r] = lin[r];
    }
    scale_mask_max(s, lane, 0, p.nk, p.scale_log2, mx);
    float mu[2], rsum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = quad_max(mx[r]);
      mu[r] = mx[r] == -INFINITY ? 0.0f : mx[r];
    }
    exp2_rows(s, mu, rsum);
    float w_in[2], inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      rsum[r] = quad_sum(rsum[r]);
      w_in[r] = exp2f(lin[r] - mu[r]);  // 0 when the main range had no key
      const float tot = w_in[r] + rsum[r];
      inv[r] = tot > 0.0f ? 1.0f / tot : 0.0f;
      if (p.lse_out && (lane & 3) == 0 && row[r] < p.Sq)
        p.lse_out[lse_base + row[r]] = tot > 0.0f ? (mu[r] + log2f(tot)) * kLn2 : -INFINITY;
    }
    // P in bf16 as A fragments: the score tiles of 16 keys, as in the flash kernel.
    uint32_t pa[KG][4];
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) p_frag(s, kk, pa[kk]);

    if (next)
      cp_async_wait<1>();
    else
      cp_async_wait<0>();
    __syncwarp();  // out(t) is in sO
#pragma unroll
    for (int d0 = 0; d0 < DP; d0 += HALF) {
      float o[DT][4];
      zero_acc(o);
#pragma unroll
      for (int kk = 0; kk < KG; ++kk)
#pragma unroll
        for (int dp = 0; dp < HALF / 16; ++dp) {
          uint32_t b0, b1, b2, b3;
          const int key = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
          ldmatrix_x4_trans(smem_u32(sV + key * LDS + d0 + dp * 16 + (lane >> 4) * 8), b0, b1, b2, b3);
          mma_bf16(o[2 * dp], pa[kk], b0, b1);
          mma_bf16(o[2 * dp + 1], pa[kk], b2, b3);
        }
      // Merge over the main range's values in sO, in place (each element read and written by
      // the same lane); a main range without keys (w_in 0) may hold anything there.
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) {
          __nv_bfloat162* at =
              reinterpret_cast<__nv_bfloat162*>(sO + ((lane >> 2) + r * 8) * LDS + d0 + dt * 8 + (lane & 3) * 2);
          float2 m = make_float2(0.0f, 0.0f);
          if (w_in[r] > 0.0f) {
            m = __bfloat1622float2(*at);
            m.x *= w_in[r], m.y *= w_in[r];
          }
          *at = __floats2bfloat162_rn((m.x + o[dt][2 * r]) * inv[r], (m.y + o[dt][2 * r + 1]) * inv[r]);
        }
    }
    __syncwarp();
    for (int c = lane; c < 16 * CPR; c += 32) {  // whole rows out: 16-byte stores
      const int r = c / CPR, col = (c % CPR) * 8;
      if (m0 + r < p.Sq && col < p.D)
        *reinterpret_cast<uint4*>(p.out + (int64_t(b) * p.Sq + m0 + r) * p.o_rs + int64_t(h) * p.D + col) =
            *reinterpret_cast<const uint4*>(sO + r * LDS + col);
    }
    __syncwarp();  // the next iteration's copies overwrite sO and the Q buffer read above
  }
}

template <int DP, int KG>
cudaError_t launch_tail(const TailParams& p, int B, cudaStream_t stream) {
  constexpr int smem = smem_bytes(DP, KG);
  auto kern = tail_merge_kernel<DP, KG>;
  if (smem > 48 * 1024) {  // opt in to more than the default 48 KB of dynamic shared memory
    const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(unsigned((p.Sq + kRowsPerBlock - 1) / kRowsPerBlock), unsigned(p.H), unsigned(B));
  kern<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <int DP>
cudaError_t dispatch_tail(const TailParams& p, int B, cudaStream_t stream) {
  switch ((p.nk + 15) / 16) {
    case 1: return launch_tail<DP, 1>(p, B, stream);
    case 2: return launch_tail<DP, 2>(p, B, stream);
    case 3: return launch_tail<DP, 3>(p, B, stream);
    case 4: return launch_tail<DP, 4>(p, B, stream);
    case 5: return launch_tail<DP, 5>(p, B, stream);
    case 6: return launch_tail<DP, 6>(p, B, stream);
    case 7: return launch_tail<DP, 7>(p, B, stream);
    default: return launch_tail<DP, 8>(p, B, stream);
  }
}

bool aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

// Whether the current device grants `bytes` of shared memory to one block (opt-in): up to 227 KiB
// on sm_90, less on other GPUs, where large key counts then take the caller's other path.
bool smem_fits(int bytes) {
  int dev = 0, optin = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
    (void)cudaGetLastError();  // leave no sticky status behind
    return false;
  }
  return bytes <= optin;
}

}  // namespace

static_assert(kAttnTailMaxKeys == 8 * 16, "dispatch_tail instantiates up to 8 groups of 16 keys");

bool attention_tail_merge_supports(const AttnArgs& a) {
  const int64_t dense = a.H * a.D;
  const AttnStrides st = attn_strides(a);
  const int64_t q_rs = st.q, k_rs = st.k, v_rs = st.v, o_rs = st.o;
  const int64_t nk = a.num_valid_kv > a.Skv ? a.Skv : a.num_valid_kv;
  return a.B >= 1 && a.Sq >= 1 && a.H >= 1 && a.D >= 8 && a.D <= 128 && a.D % 8 == 0 && nk >= 1 &&
         nk <= kAttnTailMaxKeys && a.B <= 65535 && a.H <= 65535 && a.Sq < (int64_t(1) << 30) &&
         a.Skv < (int64_t(1) << 30) && q_rs >= dense && k_rs >= dense && v_rs >= dense && o_rs >= dense &&
         q_rs % 8 == 0 && k_rs % 8 == 0 && v_rs % 8 == 0 && o_rs % 8 == 0 && a.q && a.k && a.v && a.out &&
         aligned16(a.q) && aligned16(a.k) && aligned16(a.v) && aligned16(a.out) &&
         smem_fits(smem_bytes(a.D <= 64 ? 64 : 128, int((nk + 15) / 16)));
}

cudaError_t attention_tail_merge_bf16(const AttnArgs& a, const float* lse_in, cudaStream_t stream) {
  if (!lse_in || !attention_tail_merge_supports(a)) return cudaErrorNotSupported;
  TailParams p;
  p.q = static_cast<const __nv_bfloat16*>(a.q);
  p.k = static_cast<const __nv_bfloat16*>(a.k);
  p.v = static_cast<const __nv_bfloat16*>(a.v);
  p.out = static_cast<__nv_bfloat16*>(a.out);
  p.lse_in = lse_in;
  p.lse_out = a.lse;
  const AttnStrides st = attn_strides(a);
  p.q_rs = st.q, p.k_rs = st.k, p.v_rs = st.v, p.o_rs = st.o;
  p.Sq = int(a.Sq), p.Skv = int(a.Skv), p.H = int(a.H), p.D = int(a.D);
  p.nk = int(a.num_valid_kv > a.Skv ? a.Skv : a.num_valid_kv);
  p.scale_log2 = a.scale * kLog2e;
  return a.D <= 64 ? dispatch_tail<64>(p, int(a.B), stream) : dispatch_tail<128>(p, int(a.B), stream);
}

}  // namespace vgen::kern
