// Flash attention forward on tensor cores (FlashAttention-2 scheme with mma.sync m16n8k16 bf16).
// A block of 4 warps owns 64 queries of one (batch, head); each warp owns 16 query rows and keeps
// their Q fragments, the fp32 output accumulator and the running max / sum in registers. K/V tiles
// of 64 keys stream through double-buffered shared memory (cp.async when rows are 16-byte aligned).
// Scores are scaled into the log2 domain so the softmax uses exp2; P is rounded to bf16 for the
// second product, the row sums use the fp32 values.
#include <cuda_bf16.h>

#include <cmath>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/mma_bf16.cuh"

namespace vgen::kern {

namespace {

using namespace mma;

constexpr int kBM = 64;  // queries per block
constexpr int kBN = 64;  // keys per tile
constexpr int kThreads = 128;

struct FlashParams {
  const __nv_bfloat16* q;
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  void* out;
  float* lse;
  int64_t q_rs, k_rs, v_rs, o_rs;  // token strides (elements)
  int Sq, Skv, H, D, nk;           // nk = valid keys (> 0)
  float scale_log2;
};

// Copies rows [0, rows_valid) x cols [0, D) of a global tile (token stride rs) into shared memory
// laid out [ROWS][DP + 8]; everything else in the tile becomes zero.
template <int DP, int ROWS, bool kVec>
__device__ __forceinline__ void load_tile(__nv_bfloat16* sm, const __nv_bfloat16* g, int64_t rs, int rows_valid,
                                          int D) {
  constexpr int LDS = DP + 8;
  if constexpr (kVec) {
    constexpr int CPR = DP / 8;  // 16-byte chunks per row
    for (int c = threadIdx.x; c < ROWS * CPR; c += kThreads) {
      const int r = c / CPR, col = (c % CPR) * 8;
      const bool ok = r < rows_valid && col < D;
      const __nv_bfloat16* src = ok ? g + r * rs + col : g;
      cp_async16(smem_u32(sm + r * LDS + col), src, ok ? 16 : 0);  // src size 0 zero-fills
    }
  } else {
    for (int c = threadIdx.x; c < ROWS * DP; c += kThreads) {
      const int r = c / DP, col = c % DP;
      sm[r * LDS + col] = (r < rows_valid && col < D) ? g[r * rs + col] : __float2bfloat16(0.0f);
    }
  }
}

template <int DP, bool kVec, bool kOutF32>
__global__ void __launch_bounds__(kThreads) flash_fwd_kernel(const FlashParams p) {
  constexpr int LDS = DP + 8;  // +16 bytes per row: ldmatrix rows hit distinct banks
  constexpr int KT = DP / 16;  // k-steps of Q·Kᵀ
  constexpr int NT = kBN / 8;  // score tiles (8 keys each) per warp
  constexpr int DT = DP / 8;   // output tiles (8 dims each)
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* sK = sQ + kBM * LDS;      // 2 buffers
  __nv_bfloat16* sV = sK + 2 * kBN * LDS;  // 2 buffers

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int m0 = blockIdx.x * kBM, h = blockIdx.y, b = blockIdx.z;
  const __nv_bfloat16* gq = p.q + (int64_t(b) * p.Sq + m0) * p.q_rs + int64_t(h) * p.D;
  const __nv_bfloat16* gk = p.k + int64_t(b) * p.Skv * p.k_rs + int64_t(h) * p.D;
  const __nv_bfloat16* gv = p.v + int64_t(b) * p.Skv * p.v_rs + int64_t(h) * p.D;
  const int n_tiles = (p.nk + kBN - 1) / kBN;

  load_tile<DP, kBM, kVec>(sQ, gq, p.q_rs, min(kBM, p.Sq - m0), p.D);
  load_tile<DP, kBN, kVec>(sK, gk, p.k_rs, min(kBN, p.nk), p.D);
  load_tile<DP, kBN, kVec>(sV, gv, p.v_rs, min(kBN, p.nk), p.D);
  cp_async_commit();

  uint32_t qf[KT][4];
  float o[DT][4];
  zero_acc(o);
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};

  for (int t = 0; t < n_tiles; ++t) {
    const int buf = t & 1;
    if (t + 1 < n_tiles) {  // prefetch the next tile into the other buffer (freed by the last barrier)
      const int kv_next = (t + 1) * kBN;
      const int rows = min(kBN, p.nk - kv_next);
      load_tile<DP, kBN, kVec>(sK + (buf ^ 1) * kBN * LDS, gk + int64_t(kv_next) * p.k_rs, p.k_rs, rows, p.D);
      load_tile<DP, kBN, kVec>(sV + (buf ^ 1) * kBN * LDS, gv + int64_t(kv_next) * p.v_rs, p.v_rs, rows, p.D);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    if (t == 0) {
#pragma unroll
      for (int ks = 0; ks < KT; ++ks) {
        const int row = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = ks * 16 + (lane >> 4) * 8;
        ldmatrix_x4(smem_u32(sQ + row * LDS + col), qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3]);
      }
    }
    const __nv_bfloat16* cK = sK + buf * kBN * LDS;
    const __nv_bfloat16* cV = sV + buf * kBN * LDS;

    // S = Q·Kᵀ for this warp's 16 rows x 64 keys.
    float s[NT][4];
    zero_acc(s);
#pragma unroll
    for (int ks = 0; ks < KT; ++ks) {
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        uint32_t b0, b1, b2, b3;
        const int key = np * 16 + (lane & 7) + (lane >> 4) * 8;
        const int col = ks * 16 + ((lane >> 3) & 1) * 8;
        ldmatrix_x4(smem_u32(cK + key * LDS + col), b0, b1, b2, b3);
        mma_bf16(s[2 * np], qf[ks], b0, b1);
        mma_bf16(s[2 * np + 1], qf[ks], b2, b3);
      }
    }

    // Scale to log2 units, mask keys past the valid count, online softmax.
    const int kv0 = t * kBN;
    float mx[2] = {-INFINITY, -INFINITY};
    scale_mask_max(s, lane, kv0, p.nk, p.scale_log2, mx);
    float m_use[2], alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = quad_max(mx[r]);
      const float m_new = fmaxf(m_run[r], mx[r]);
      m_use[r] = m_new == -INFINITY ? 0.0f : m_new;  // a fully masked row keeps p = 0
      alpha[r] = exp2f(m_run[r] - m_use[r]);
      m_run[r] = m_new;
    }
    float rsum[2] = {0.0f, 0.0f};
    exp2_rows(s, m_use, rsum);
#pragma unroll
    for (int r = 0; r < 2; ++r) l_run[r] = l_run[r] * alpha[r] + rsum[r];
#pragma unroll
    for (int i = 0; i < DT; ++i)
#pragma unroll
      for (int c = 0; c < 4; ++c) o[i][c] *= alpha[c >> 1];

    // O += P·V: the score accumulators of two adjacent key tiles form one A fragment.
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
      uint32_t a[4];
      p_frag(s, kk, a);
#pragma unroll
      for (int dp = 0; dp < DP / 16; ++dp) {
        uint32_t b0, b1, b2, b3;
        const int key = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = dp * 16 + (lane >> 4) * 8;
        ldmatrix_x4_trans(smem_u32(cV + key * LDS + col), b0, b1, b2, b3);
        mma_bf16(o[2 * dp], a, b0, b1);
        mma_bf16(o[2 * dp + 1], a, b2, b3);
      }
    }
    __syncthreads();  // this buffer is refilled by the prefetch of iteration t + 1
  }

  // Row sums over the quad of lanes sharing a row, normalise, store.
#pragma unroll
  for (int r = 0; r < 2; ++r) l_run[r] = quad_sum(l_run[r]);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = m0 + warp * 16 + (lane >> 2) + r * 8;
    if (row >= p.Sq) continue;
    const float inv = l_run[r] > 0.0f ? 1.0f / l_run[r] : 0.0f;
    const int64_t base = (int64_t(b) * p.Sq + row) * p.o_rs + int64_t(h) * p.D;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt) {
      const int col = dt * 8 + (lane & 3) * 2;
      const float v0 = o[dt][2 * r] * inv, v1 = o[dt][2 * r + 1] * inv;
      if constexpr (kOutF32) {
        float* out = static_cast<float*>(p.out) + base;
        if constexpr (kVec) {
          if (col < p.D) *reinterpret_cast<float2*>(out + col) = make_float2(v0, v1);
        } else {
          if (col < p.D) out[col] = v0;
          if (col + 1 < p.D) out[col + 1] = v1;
        }
      } else {
        __nv_bfloat16* out = static_cast<__nv_bfloat16*>(p.out) + base;
        if constexpr (kVec) {
          if (col < p.D) *reinterpret_cast<__nv_bfloat162*>(out + col) = __floats2bfloat162_rn(v0, v1);
        } else {
          if (col < p.D) out[col] = __float2bfloat16_rn(v0);
          if (col + 1 < p.D) out[col + 1] = __float2bfloat16_rn(v1);
        }
      }
    }
    if (p.lse && (lane & 3) == 0)
      p.lse[(int64_t(b) * p.H + h) * p.Sq + row] =
          l_run[r] > 0.0f ? (m_run[r] + log2f(l_run[r])) * kLn2 : -INFINITY;
  }
}

// No valid key: output rows are 0 and lse is -inf.
template <bool kOutF32>
__global__ void empty_rows_kernel(void* out, float* lse, int64_t B, int64_t Sq, int64_t H, int64_t D, int64_t o_rs) {
  const int64_t total = B * Sq * H * D;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, bsh = i / D, hh = bsh % H, bs = bsh / H;
    const int64_t off = bs * o_rs + hh * D + d;
    if constexpr (kOutF32)
      static_cast<float*>(out)[off] = 0.0f;
    else
      static_cast<__nv_bfloat16*>(out)[off] = __float2bfloat16(0.0f);
    if (lse && d == 0) {
      const int64_t s = bs % Sq, bb = bs / Sq;
      lse[(bb * H + hh) * Sq + s] = -INFINITY;
    }
  }
}

template <int DP, bool kVec, bool kOutF32>
cudaError_t launch_flash(const FlashParams& p, int B, cudaStream_t stream) {
  constexpr int smem = (kBM + 4 * kBN) * (DP + 8) * int(sizeof(__nv_bfloat16));
  auto kern = flash_fwd_kernel<DP, kVec, kOutF32>;
  if (smem > 48 * 1024) {  // opt in to more than the default 48 KB of dynamic shared memory
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
  }
  dim3 grid(unsigned((p.Sq + kBM - 1) / kBM), unsigned(p.H), unsigned(B));
  kern<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <int DP>
cudaError_t dispatch_flash(const FlashParams& p, int B, bool vec, bool out_f32, cudaStream_t stream) {
  if (vec) return out_f32 ? launch_flash<DP, true, true>(p, B, stream) : launch_flash<DP, true, false>(p, B, stream);
  return out_f32 ? launch_flash<DP, false, true>(p, B, stream) : launch_flash<DP, false, false>(p, B, stream);
}

bool aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

}  // namespace

cudaError_t attention_fwd_bf16(const AttnArgs& a, AttnOut out_type, cudaStream_t stream) {
  if (a.B < 0 || a.Sq < 0 || a.Skv < 0 || a.H < 0 || a.D <= 0 || a.D > kAttnMaxHeadDim) return cudaErrorInvalidValue;
  if (a.B == 0 || a.Sq == 0 || a.H == 0) return cudaSuccess;
  if (!a.q || !a.out || (a.Skv > 0 && (!a.k || !a.v))) return cudaErrorInvalidValue;
  if (a.H > 65535 || a.B > 65535 || a.Sq > (int64_t(1) << 30) || a.Skv > (int64_t(1) << 30))
    return cudaErrorInvalidValue;
  const int64_t dense = a.H * a.D;
  const AttnStrides st = attn_strides(a);
  const int64_t q_rs = st.q, k_rs = st.k, v_rs = st.v, o_rs = st.o;
  if (q_rs < dense || k_rs < dense || v_rs < dense || o_rs < dense) return cudaErrorInvalidValue;
  const bool out_f32 = out_type == AttnOut::kF32;
  const int64_t nk = a.num_valid_kv < 0 ? 0 : (a.num_valid_kv > a.Skv ? a.Skv : a.num_valid_kv);
  if (nk == 0) {
    const int64_t total = a.B * a.Sq * a.H * a.D;
    const unsigned blocks = unsigned(total / 256 + 1 > 65535 * 4 ? 65535 * 4 : total / 256 + 1);
    if (out_f32)
      empty_rows_kernel<true><<<blocks, 256, 0, stream>>>(a.out, a.lse, a.B, a.Sq, a.H, a.D, o_rs);
    else
      empty_rows_kernel<false><<<blocks, 256, 0, stream>>>(a.out, a.lse, a.B, a.Sq, a.H, a.D, o_rs);
    return cudaGetLastError();
  }
  FlashParams p;
  p.q = static_cast<const __nv_bfloat16*>(a.q);
  p.k = static_cast<const __nv_bfloat16*>(a.k);
  p.v = static_cast<const __nv_bfloat16*>(a.v);
  p.out = a.out;
  p.lse = a.lse;
  p.q_rs = q_rs, p.k_rs = k_rs, p.v_rs = v_rs, p.o_rs = o_rs;
  p.Sq = int(a.Sq), p.Skv = int(a.Skv), p.H = int(a.H), p.D = int(a.D), p.nk = int(nk);
  p.scale_log2 = a.scale * kLog2e;
  // 16-byte rows: cp.async loads and paired stores.
  const bool vec = a.D % 8 == 0 && q_rs % 8 == 0 && k_rs % 8 == 0 && v_rs % 8 == 0 && o_rs % 8 == 0 &&
                   aligned16(a.q) && aligned16(a.k) && aligned16(a.v) && aligned16(a.out);
  const int B = int(a.B);
  if (a.D <= 16) return dispatch_flash<16>(p, B, vec, out_f32, stream);
  if (a.D <= 32) return dispatch_flash<32>(p, B, vec, out_f32, stream);
  if (a.D <= 64) return dispatch_flash<64>(p, B, vec, out_f32, stream);
  return dispatch_flash<128>(p, B, vec, out_f32, stream);
}

}  // namespace vgen::kern
