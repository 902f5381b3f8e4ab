// GQA attention on the device (contract in gqa_attention.cuh). One block of kThreads threads per
// (query tile of kTQ rows, head, sample); keys in tiles of kTK with an online softmax: per tile the
// scores (masked to −inf past the visible keys), the running max and sum rescaled, then p·v added
// into fp32 accumulators; out = acc / sum. Shared memory holds the tiles as fp32 with rows padded to
// D + 1 (no bank conflicts when a warp reads one column of 32 key rows).
#include <cmath>

#include "kernels/common/elem_io.cuh"
#include "kernels/gqa/gqa_attention.cuh"

namespace vgen::kern {
namespace {

constexpr int kTQ = 16;        // query rows per block
constexpr int kTK = 32;        // keys per tile
constexpr int kThreads = 128;  // the block size the kernel is written for
constexpr int kAcc = int(kTQ * kGqaAttnMaxHeadDim / kThreads);  // output accumulators per thread
static_assert(kAcc * kThreads >= kTQ * kGqaAttnMaxHeadDim, "accumulators must cover the output tile");

size_t smem_bytes(int64_t D) {
  const int64_t Dp = D + 1;
  return size_t(kTQ * Dp + 2 * kTK * Dp + kTQ * kTK + 3 * kTQ) * sizeof(float);
}

struct Dims {
  int64_t Sq, Skv, H, KVH, valid, causal_offset;
  int D;
  bool causal;
  float scale;
};

// Keys query i may see: [0, limit).
__device__ __forceinline__ int64_t key_limit(const Dims& m, int64_t i) {
  if (!m.causal) return m.valid;
  const int64_t c = i + m.causal_offset + 1;
  return c < 0 ? 0 : (c < m.valid ? c : m.valid);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gqa_attention_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                         T* __restrict__ out, Dims m) {
  extern __shared__ float sm[];
  const int D = m.D, Dp = D + 1;
  float* qs = sm;                     // [kTQ][Dp]
  float* ks = qs + kTQ * Dp;          // [kTK][Dp]
  float* vs = ks + kTK * Dp;          // [kTK][Dp]
  float* ps = vs + kTK * Dp;          // [kTQ][kTK] scores, then probabilities
  float* row_max = ps + kTQ * kTK;    // [kTQ]
  float* row_sum = row_max + kTQ;     // [kTQ]
  float* row_scale = row_sum + kTQ;   // [kTQ] rescale of the accumulators for this tile

  const int tid = threadIdx.x;
  const int64_t h = blockIdx.y, b = blockIdx.z, kh = h / (m.H / m.KVH);
  const int64_t i0 = int64_t(blockIdx.x) * kTQ;
  const T* qb = q + b * m.Sq * m.H * D;
  const T* kb = k + b * m.Skv * m.KVH * D;
  const T* vb = v + b * m.Skv * m.KVH * D;

  for (int e = tid; e < kTQ * D; e += kThreads) {
    const int qi = e / D, d = e % D;
    const int64_t i = i0 + qi;
    qs[qi * Dp + d] = i < m.Sq ? dev::to_f(qb[(i * m.H + h) * D + d]) : 0.0f;
  }
  if (tid < kTQ) {
    row_max[tid] = -INFINITY;
    row_sum[tid] = 0.0f;
  }
  float acc[kAcc];
#pragma unroll
  for (int a = 0; a < kAcc; ++a) acc[a] = 0.0f;
  // The last row of the tile sees the most keys.
  const int64_t last = i0 + kTQ - 1 < m.Sq ? i0 + kTQ - 1 : m.Sq - 1;
  const int64_t n_keys = key_limit(m, last);
  __syncthreads();

  for (int64_t j0 = 0; j0 < n_keys; j0 += kTK) {
    for (int e = tid; e < kTK * D; e += kThreads) {
      const int kj = e / D, d = e % D;
      const int64_t j = j0 + kj;
      const bool ok = j < n_keys;
      ks[kj * Dp + d] = ok ? dev::to_f(kb[(j * m.KVH + kh) * D + d]) : 0.0f;
      vs[kj * Dp + d] = ok ? dev::to_f(vb[(j * m.KVH + kh) * D + d]) : 0.0f;
    }
    __syncthreads();
    for (int e = tid; e < kTQ * kTK; e += kThreads) {
      const int qi = e / kTK, kj = e % kTK;
      const int64_t i = i0 + qi, j = j0 + kj;
      float s = -INFINITY;
      if (i < m.Sq && j < key_limit(m, i)) {
        float dot = 0.0f;
        for (int d = 0; d < D; ++d) dot = fmaf(qs[qi * Dp + d], ks[kj * Dp + d], dot);
        s = dot * m.scale;
      }
      ps[qi * kTK + kj] = s;
    }
    __syncthreads();
    if (tid < kTQ) {  // one thread per query row: new max, the rescale of what was summed, the tile's exps
      float* p = ps + tid * kTK;
      float tile_max = -INFINITY;
      for (int kj = 0; kj < kTK; ++kj) tile_max = fmaxf(tile_max, p[kj]);
      const float m_old = row_max[tid], m_new = fmaxf(m_old, tile_max);
      float scale_old = 1.0f, l = row_sum[tid];
      if (m_new > -INFINITY) {
        scale_old = m_old > -INFINITY ? expf(m_old - m_new) : 0.0f;
        l *= scale_old;
        for (int kj = 0; kj < kTK; ++kj) {
          const float e = p[kj] > -INFINITY ? expf(p[kj] - m_new) : 0.0f;
          p[kj] = e;
          l += e;
        }
        row_max[tid] = m_new;
      } else {
        for (int kj = 0; kj < kTK; ++kj) p[kj] = 0.0f;
      }
      row_sum[tid] = l;
      row_scale[tid] = scale_old;
    }
    __syncthreads();
#pragma unroll
    for (int a = 0; a < kAcc; ++a) {
      const int e = tid + a * kThreads;
      if (e < kTQ * D) {
        const int qi = e / D, d = e % D;
        const float* p = ps + qi * kTK;
        float s = acc[a] * row_scale[qi];
        for (int kj = 0; kj < kTK; ++kj) s = fmaf(p[kj], vs[kj * Dp + d], s);
        acc[a] = s;
      }
    }
    __syncthreads();  // the tiles are overwritten by the next iteration
  }

  T* ob = out + b * m.Sq * m.H * D;
#pragma unroll
  for (int a = 0; a < kAcc; ++a) {
    const int e = tid + a * kThreads;
    if (e < kTQ * D) {
      const int qi = e / D, d = e % D;
      const int64_t i = i0 + qi;
      if (i < m.Sq) ob[(i * m.H + h) * D + d] = dev::from_f<T>(row_sum[qi] > 0.0f ? acc[a] / row_sum[qi] : 0.0f);
    }
  }
}

}  // namespace

cudaError_t gqa_attention(const void* q, const void* k, const void* v, void* out, FloatType type, int64_t B,
                          int64_t Sq, int64_t Skv, int64_t H, int64_t KVH, int64_t D, int64_t num_valid_kv, bool causal,
                          int64_t causal_offset, float scale, cudaStream_t stream) {
  if (B < 0 || Sq < 0 || Skv < 0 || KVH < 1 || H < KVH || H % KVH || D < 1 || D > kGqaAttnMaxHeadDim || H > 65535 ||
      B > 65535)
    return cudaErrorInvalidValue;
  if (B == 0 || Sq == 0) return cudaSuccess;
  if (!q || !out || (Skv > 0 && (!k || !v))) return cudaErrorInvalidValue;
  const int64_t tiles = (Sq + kTQ - 1) / kTQ;
  if (tiles > 2147483647) return cudaErrorInvalidValue;
  const Dims m{Sq, Skv, H, KVH, num_valid_kv < 0 ? 0 : (num_valid_kv > Skv ? Skv : num_valid_kv), causal_offset,
               int(D), causal, scale};
  const dim3 grid{unsigned(tiles), unsigned(H), unsigned(B)};
  const size_t smem = smem_bytes(D);
  VGEN_DISPATCH_FB(type, T, {
    auto kernel = gqa_attention_kernel<T>;
    if (smem > 48 * 1024) {
      cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (e != cudaSuccess) return e;
    }
    kernel<<<grid, kThreads, smem, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k),
                                             static_cast<const T*>(v), static_cast<T*>(out), m);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
