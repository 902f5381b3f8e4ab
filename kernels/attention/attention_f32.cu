// fp32 attention on CUDA cores for precision fp32 (validation against the CPU path).
// One warp per query row, 8 rows per block sharing 32-key K/V tiles in shared memory. In a tile,
// lane j scores key j, the warp agrees on the running max, and each lane accumulates output
// dims lane, lane+32, ... with the probabilities broadcast by shuffle. expf/logf are the accurate
// versions; the online rescaling is the same as in the flash kernel.
#include <cmath>

#include "kernels/attention/attention.cuh"

namespace vgen::kern {

namespace {

constexpr int kRows = 8;   // warps (query rows) per block
constexpr int kTile = 32;  // keys per shared-memory tile
constexpr int kDimsPerLane = int(kAttnMaxHeadDim) / 32;

struct F32Params {
  const float* q;
  const float* k;
  const float* v;
  float* out;
  float* lse;
  int64_t q_rs, k_rs, v_rs, o_rs;
  int Sq, Skv, H, D, nk;
  float scale;
};

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void __launch_bounds__(kRows * 32) attention_f32_kernel(const F32Params p) {
  extern __shared__ float smem[];
  const int D = p.D, LD = D + 1;  // +1: lanes reading different K rows hit different banks
  float* sQ = smem;               // [kRows][D]
  float* sK = sQ + kRows * D;     // [kTile][D + 1]
  float* sV = sK + kTile * LD;    // [kTile][D + 1]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = blockIdx.x * kRows + warp, h = blockIdx.y, b = blockIdx.z;
  const bool active = row < p.Sq;
  const float* gk = p.k + int64_t(b) * p.Skv * p.k_rs + int64_t(h) * D;
  const float* gv = p.v + int64_t(b) * p.Skv * p.v_rs + int64_t(h) * D;
  if (active) {
    const float* gq = p.q + (int64_t(b) * p.Sq + row) * p.q_rs + int64_t(h) * D;
    for (int d = lane; d < D; d += 32) sQ[warp * D + d] = gq[d];
  }

  float o[kDimsPerLane];
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) o[i] = 0.0f;
  float m = -INFINITY, l = 0.0f;

  for (int kv0 = 0; kv0 < p.nk; kv0 += kTile) {
    __syncthreads();  // previous tile consumed; the q rows are visible on the first pass
    const int rows = min(kTile, p.nk - kv0);
    for (int idx = threadIdx.x; idx < kTile * D; idx += kRows * 32) {
      const int r = idx / D, d = idx % D;
      const bool ok = r < rows;
      sK[r * LD + d] = ok ? gk[int64_t(kv0 + r) * p.k_rs + d] : 0.0f;
      sV[r * LD + d] = ok ? gv[int64_t(kv0 + r) * p.v_rs + d] : 0.0f;
    }
    __syncthreads();
    if (!active) continue;

    float sc = -INFINITY;
    if (lane < rows) {
      float dot = 0.0f;
      for (int d = 0; d < D; ++d) dot = fmaf(sQ[warp * D + d], sK[lane * LD + d], dot);
      sc = dot * p.scale;
    }
    const float m_new = fmaxf(m, warp_max(sc));  // finite: key kv0 is valid
    const float pj = lane < rows ? expf(sc - m_new) : 0.0f;
    const float alpha = expf(m - m_new);  // 0 on the first tile (m = -inf)
    l = l * alpha + warp_sum(pj);
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) o[i] *= alpha;
    for (int j = 0; j < rows; ++j) {
      const float pb = __shfl_sync(0xffffffffu, pj, j);
#pragma unroll
      for (int i = 0; i < kDimsPerLane; ++i) {
        const int d = lane + 32 * i;
        if (d < D) o[i] = fmaf(pb, sV[j * LD + d], o[i]);
      }
    }
    m = m_new;
  }

  if (!active) return;
  float* go = p.out + (int64_t(b) * p.Sq + row) * p.o_rs + int64_t(h) * D;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + 32 * i;
    if (d < D) go[d] = o[i] * inv;
  }
  if (p.lse && lane == 0) p.lse[(int64_t(b) * p.H + h) * p.Sq + row] = l > 0.0f ? m + logf(l) : -INFINITY;
}

}  // namespace

cudaError_t attention_fwd_f32(const AttnArgs& a, cudaStream_t stream) {
  if (a.B < 0 || a.Sq < 0 || a.Skv < 0 || a.H < 0 || a.D <= 0 || a.D > kAttnMaxHeadDim) return cudaErrorInvalidValue;
  if (a.B == 0 || a.Sq == 0 || a.H == 0) return cudaSuccess;
  if (!a.q || !a.out || (a.Skv > 0 && (!a.k || !a.v))) return cudaErrorInvalidValue;
  if (a.H > 65535 || a.B > 65535 || a.Sq > (int64_t(1) << 30) || a.Skv > (int64_t(1) << 30))
    return cudaErrorInvalidValue;
  const int64_t dense = a.H * a.D;
  F32Params p;
  p.q = static_cast<const float*>(a.q);
  p.k = static_cast<const float*>(a.k);
  p.v = static_cast<const float*>(a.v);
  p.out = static_cast<float*>(a.out);
  p.lse = a.lse;
  const AttnStrides st = attn_strides(a);
  p.q_rs = st.q, p.k_rs = st.k, p.v_rs = st.v, p.o_rs = st.o;
  if (p.q_rs < dense || p.k_rs < dense || p.v_rs < dense || p.o_rs < dense) return cudaErrorInvalidValue;
  p.Sq = int(a.Sq), p.Skv = int(a.Skv), p.H = int(a.H), p.D = int(a.D);
  p.nk = int(a.num_valid_kv < 0 ? 0 : (a.num_valid_kv > a.Skv ? a.Skv : a.num_valid_kv));
  p.scale = a.scale;
  const size_t smem = size_t(kRows * a.D + 2 * kTile * (a.D + 1)) * sizeof(float);  // <= 37 KB for D = 128
  dim3 grid(unsigned((a.Sq + kRows - 1) / kRows), unsigned(a.H), unsigned(a.B));
  attention_f32_kernel<<<grid, kRows * 32, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace vgen::kern
