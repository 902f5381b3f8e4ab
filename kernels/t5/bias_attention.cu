// T5 attention on the device (contract in bias_attention.cuh). One block of kThreads threads per
// (query tile of kTQ rows, head). Two passes over the valid keys in tiles of kTK:
//   pass 0: scores → per-row running max and sum of exp (online rescaling),
//   pass 1: the same scores again → p = exp(s − max) / sum (rounded as the softmax output tensor)
//           → out += p·v in fp32 registers.
// Recomputing the scores costs one more q·k (attention is a small part of the encoder, the GEMMs
// dominate) but lets p be normalized before the p·v product, as the bf16 reference rounds it.
// Shared memory holds the tiles as fp32 with rows padded to D + 1 (no bank conflicts when a warp
// reads one column of 32 key rows). Tiles past Lq / the valid keys are masked by index checks.
#include <cmath>

#include "kernels/common/elem_io.cuh"
#include "kernels/t5/bias_attention.cuh"

namespace vgen::kern {
namespace {

constexpr int kTQ = 16;        // query rows per block
constexpr int kTK = 32;        // keys per tile
constexpr int kThreads = 128;  // the block size the kernel is written for
constexpr int kAcc = int(kTQ * kT5AttnMaxHeadDim / kThreads);  // output accumulators per thread
static_assert(kAcc * kThreads >= kTQ * kT5AttnMaxHeadDim, "accumulators must cover the output tile");

size_t smem_bytes(int64_t D) {
  const int64_t Dp = D + 1;
  return size_t(kTQ * Dp + 2 * kTK * Dp + kTQ * kTK + 2 * kTQ) * sizeof(float);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    t5_attention_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                        const float* __restrict__ bias, T* __restrict__ out, int64_t Lq, int64_t H, int D,
                        int64_t n_valid, int64_t R) {
  extern __shared__ float sm[];
  const int Dp = D + 1;
  float* qs = sm;                   // [kTQ][Dp]
  float* ks = qs + kTQ * Dp;        // [kTK][Dp]
  float* vs = ks + kTK * Dp;        // [kTK][Dp]
  float* ps = vs + kTK * Dp;        // [kTQ][kTK] scores, then probabilities
  float* row_max = ps + kTQ * kTK;  // [kTQ]
  float* row_sum = row_max + kTQ;   // [kTQ]

  const int tid = threadIdx.x;
  const int64_t h = blockIdx.y;
  const int64_t i0 = int64_t(blockIdx.x) * kTQ;
  const int64_t W = H * int64_t(D);  // row stride of q, k, v, out
  const int64_t col = h * int64_t(D);

  for (int e = tid; e < kTQ * D; e += kThreads) {
    const int qi = e / D, d = e % D;
    const int64_t i = i0 + qi;
    qs[qi * Dp + d] = i < Lq ? dev::to_f(q[i * W + col + d]) : 0.0f;
  }
  if (tid < kTQ) {
    row_max[tid] = -INFINITY;
    row_sum[tid] = 0.0f;
  }
  float acc[kAcc];
#pragma unroll
  for (int a = 0; a < kAcc; ++a) acc[a] = 0.0f;
  __syncthreads();

  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t j0 = 0; j0 < n_valid; j0 += kTK) {
      // Key (and value) tile; rows past the valid keys are zero and masked below.
      for (int e = tid; e < kTK * D; e += kThreads) {
        const int kj = e / D, d = e % D;
        const int64_t j = j0 + kj;
        const bool ok = j < n_valid;
        ks[kj * Dp + d] = ok ? dev::to_f(k[j * W + col + d]) : 0.0f;
        if (pass == 1) vs[kj * Dp + d] = ok ? dev::to_f(v[j * W + col + d]) : 0.0f;
      }
      __syncthreads();
      // Scores of the tile (identical arithmetic in both passes); −inf marks masked entries.
      for (int e = tid; e < kTQ * kTK; e += kThreads) {
        const int qi = e / kTK, kj = e % kTK;
        const int64_t i = i0 + qi, j = j0 + kj;
        float s = -INFINITY;
        if (i < Lq && j < n_valid) {
          float dot = 0.0f;
          // Explicit fmaf chains in column / key order: a host emulation with std::fma gets the
          // same bits (the bf16 test compares rounding points exactly).
          for (int d = 0; d < D; ++d) dot = fmaf(qs[qi * Dp + d], ks[kj * Dp + d], dot);
          s = dev::round_as<T>(dot);  // the q·kᵀ matmul output
          if (bias) s = dev::round_as<T>(s + dev::round_as<T>(bias[h * R + (j - i + Lq - 1)]));
        }
        ps[qi * kTK + kj] = s;
      }
      __syncthreads();
      if (pass == 0) {
        if (tid < kTQ) {  // one thread per query row folds the tile into the running max / sum
          float* p = ps + tid * kTK;
          float tile_max = -INFINITY;
          for (int kj = 0; kj < kTK; ++kj) tile_max = fmaxf(tile_max, p[kj]);
          const float m_old = row_max[tid];
          const float m_new = fmaxf(m_old, tile_max);
          if (m_new > -INFINITY) {
            float l = m_old > -INFINITY ? row_sum[tid] * expf(m_old - m_new) : 0.0f;
            for (int kj = 0; kj < kTK; ++kj)
              if (p[kj] > -INFINITY) l += expf(p[kj] - m_new);
            row_max[tid] = m_new;
            row_sum[tid] = l;
          }
        }
      } else {
        for (int e = tid; e < kTQ * kTK; e += kThreads) {
          const int qi = e / kTK;
          const float s = ps[e];
          // Valid rows have a finite max and a sum ≥ 1 (the max term contributes exp(0)).
          ps[e] = s > -INFINITY ? dev::round_as<T>(expf(s - row_max[qi]) / row_sum[qi]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int a = 0; a < kAcc; ++a) {
          const int e = tid + a * kThreads;
          if (e < kTQ * D) {
            const int qi = e / D, d = e % D;
            const float* p = ps + qi * kTK;
            float s = acc[a];
            for (int kj = 0; kj < kTK; ++kj) s = fmaf(p[kj], vs[kj * Dp + d], s);
            acc[a] = s;
          }
        }
      }
      __syncthreads();  // the tiles are overwritten by the next iteration
    }
  }

#pragma unroll
  for (int a = 0; a < kAcc; ++a) {
    const int e = tid + a * kThreads;
    if (e < kTQ * D) {
      const int qi = e / D, d = e % D;
      const int64_t i = i0 + qi;
      if (i < Lq) out[i * W + col + d] = dev::from_f<T>(acc[a]);
    }
  }
}

}  // namespace

cudaError_t t5_attention(const void* q, const void* k, const void* v, const float* rel_bias, void* out,
                         FloatType type, int64_t Lq, int64_t Lk, int64_t H, int64_t D, int64_t num_valid_kv,
                         cudaStream_t stream) {
  if (Lq < 0 || Lk < 0 || H < 0 || D < 1 || D > kT5AttnMaxHeadDim || H > 65535) return cudaErrorInvalidValue;
  if (Lq == 0 || H == 0) return cudaSuccess;
  if (!q || !out || (Lk > 0 && (!k || !v))) return cudaErrorInvalidValue;
  const int64_t n_valid = num_valid_kv < 0 ? 0 : (num_valid_kv > Lk ? Lk : num_valid_kv);
  const int64_t tiles = (Lq + kTQ - 1) / kTQ;
  if (tiles > 2147483647) return cudaErrorInvalidValue;
  const dim3 grid{unsigned(tiles), unsigned(H), 1u};
  const size_t smem = smem_bytes(D);
  const int64_t R = Lq + Lk - 1;
  VGEN_DISPATCH_FB(type, T, {
    auto kernel = t5_attention_kernel<T>;
    if (smem > 48 * 1024) {
      cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (e != cudaSuccess) return e;
    }
    kernel<<<grid, kThreads, smem, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k),
                                             static_cast<const T*>(v), Lk > 0 ? rel_bias : nullptr,
                                             static_cast<T*>(out), Lq, H, int(D), n_valid, R);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
