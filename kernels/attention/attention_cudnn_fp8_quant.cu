// The cuDNN FP8 attention's own steps (attention_cudnn_fp8.cuh): K's mean over the valid keys,
// per-tensor amax of Q, K − mean and V over their valid tokens, the scales, the dense e4m3 copies,
// the e4m3 output read back into bf16, the LSE fix, and the empty call. Memory-bound kernels; the
// numerics are attention_cudnn_fp8_ref.h's (the mean's sums in its order).
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>

#include "kernels/attention/attention_cudnn_fp8.cuh"
#include "kernels/quant/e4m3_pack.cuh"

namespace vgen::kern {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

// One of Q, K, V: a bf16 [B, S, H, D] view of its first n tokens (token stride t), and its dense
// e4m3 copy [B, n, H, Dp] (head dim padded with zeros to Dp: attention_cudnn_fp8_head_dim).
struct Operand {
  const __nv_bfloat16* x;
  int64_t S, n, t;
  uint8_t* x8;
  const float* sub;  // [B, H, D] subtracted from every token (K's mean), or null
};
struct Operands {
  Operand op[3];
  int64_t H, D, Dp;
  float* scalars;
};

// The value at padded index e ([B, n, H, Dp] order; fp32, the mean taken out), false in the padding.
__device__ __forceinline__ bool src_value(const Operand& o, int64_t e, const Operands& p, float* v) {
  const int64_t dp = e % p.Dp, rh = e / p.Dp, h = rh % p.H, row = rh / p.H;  // row = b·n + s
  if (dp >= p.D) return false;
  const int64_t b = row / o.n, s = row - b * o.n;
  *v = __bfloat162float(o.x[(b * o.S + s) * o.t + h * p.D + dp]);
  if (o.sub) *v -= o.sub[(b * p.H + h) * p.D + dp];
  return true;
}

// grid (blocks, 3): blockIdx.y picks the operand; max |x| into scalars[kAmaxQ + y] (float bits:
// non-negative floats order as their bit patterns).
__global__ void amax_kernel(const Operands p, int64_t B) {
  const Operand& o = p.op[blockIdx.y];
  const int64_t total = B * o.n * p.H * p.Dp;
  float m = 0.0f;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    float v;
    if (src_value(o, e, p, &v)) m = fmaxf(m, fabsf(v));
  }
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  __shared__ float warp_max[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, warp_max[w]);
    atomicMax(reinterpret_cast<unsigned int*>(p.scalars + kAmaxQ + blockIdx.y), __float_as_uint(m));
  }
}

// One thread: the scales from the amaxes (fp8_quant_mul / fp8_dequant_mul), P's and O's.
__global__ void scales_kernel(float* s) {
  for (int i = 0; i < 3; ++i) {
    s[kDescaleQ + i] = e4m3_dequant_mul(s[kAmaxQ + i]);
    s[kScaleQ + i] = e4m3_quant_mul(s[kAmaxQ + i]);
  }
  s[kDescaleS] = 1.0f / kFp8E4M3Max;
  s[kScaleO] = 0.5f * s[kScaleV];
  s[kDescaleO] = 2.0f * s[kDescaleV];
  s[kOne] = 1.0f;
}

// grid (blocks, 3): e4m3(x · scale) of each operand, densely, zeros in the head-dim padding.
__global__ void quant_kernel(const Operands p, int64_t B) {
  const Operand& o = p.op[blockIdx.y];
  const float mul = p.scalars[kScaleQ + blockIdx.y];
  const int64_t total = B * o.n * p.H * p.Dp;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    float v = 0.0f;
    if (src_value(o, e, p, &v)) v = e4m3_scaled(v, mul);
    o.x8[e] = uint8_t(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
  }
}

// out [rows, H, D] (token stride ot) from cuDNN's O [rows, H, Dp] in the workspace: e4m3 · descale_o
// or bf16 as it is.
__global__ void finish_kernel(const void* o, bool e4m3, const float* scalars, __nv_bfloat16* out, int64_t rows,
                              int64_t H, int64_t D, int64_t Dp, int64_t ot) {
  const float mul = scalars[kDescaleO];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < rows * H * D; e += step) {
    const int64_t d = e % D, rh = e / D, h = rh % H, row = rh / H;
    const int64_t src = (row * H + h) * Dp + d;
    if (e4m3) {
      __nv_fp8_e4m3 v;
      v.__x = static_cast<const uint8_t*>(o)[src];
      out[row * ot + h * D + d] = __float2bfloat16_rn(float(v) * mul);
    } else {
      out[row * ot + h * D + d] = static_cast<const __nv_bfloat16*>(o)[src];
    }
  }
}

// grid (chunks, H, B), block 128: thread d sums its chunk's keys (in order) of channel d.
__global__ void key_sum_kernel(const __nv_bfloat16* k, int64_t S, int64_t t, int64_t n, int64_t H, int64_t D,
                               int64_t chunks, float* ksum) {
  const int64_t c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, d = threadIdx.x;
  if (d >= D) return;
  const int64_t j0 = c * kCudnnFp8KeyChunk, j1 = j0 + kCudnnFp8KeyChunk < n ? j0 + kCudnnFp8KeyChunk : n;
  float sum = 0.0f;
  for (int64_t j = j0; j < j1; ++j) sum += __bfloat162float(k[(b * S + j) * t + h * D + d]);
  ksum[((b * H + h) * chunks + c) * D + d] = sum;
}

// grid (H, B), block 128: the chunks' totals in order, / n.
__global__ void key_mean_kernel(const float* ksum, int64_t n, int64_t H, int64_t D, int64_t chunks, float* km) {
  const int64_t h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  if (d >= D) return;
  float total = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) total += ksum[((b * H + h) * chunks + c) * D + d];
  km[(b * H + h) * D + d] = total / float(n);
}

// lse[b,h,i] += scale · Σ_d q[b,i,h,d]·km[b,h,d]: the mean's share of every score of row i.
__global__ void lse_fix_kernel(const __nv_bfloat16* q, int64_t Sq, int64_t t, int64_t H, int64_t D, const float* km,
                               float scale, float* lse, int64_t rows) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += step) {  // r = (b·H + h)·Sq + i
    const int64_t i = r % Sq, bh = r / Sq, h = bh % H, b = bh / H;
    const __nv_bfloat16* qr = q + (b * Sq + i) * t + h * D;
    const float* m = km + bh * D;
    float corr = 0.0f;
    for (int64_t d = 0; d < D; ++d) corr += __bfloat162float(qr[d]) * m[d];
    lse[r] += scale * corr;
  }
}

// No valid key: out rows 0, lse −inf.
__global__ void empty_kernel(__nv_bfloat16* out, float* lse, int64_t rows, int64_t HD, int64_t ot, int64_t lse_n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < rows * HD; e += step) {
    const int64_t row = e / HD;
    out[row * ot + (e - row * HD)] = __float2bfloat16_rn(0.0f);
  }
  if (lse)
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < lse_n; e += step)
      lse[e] = -INFINITY;
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

int64_t valid_kv(const AttnArgs& a) { return a.num_valid_kv < 0 ? 0 : a.num_valid_kv > a.Skv ? a.Skv : a.num_valid_kv; }

}  // namespace

cudaError_t attention_cudnn_fp8_quantize(const AttnArgs& a, void* workspace, size_t workspace_bytes,
                                         cudaStream_t stream) {
  if (!workspace || workspace_bytes < attention_cudnn_fp8_workspace_bytes(a)) return cudaErrorInvalidValue;
  const CudnnFp8Buffers buf = attention_cudnn_fp8_buffers(a, workspace);
  const AttnStrides st = attn_strides(a);
  const int64_t nv = valid_kv(a);
  if (nv < 1) return cudaErrorInvalidValue;  // the empty call has its own kernel
  Operands p;
  p.op[0] = {static_cast<const __nv_bfloat16*>(a.q), a.Sq, a.Sq, st.q, buf.q8, nullptr};
  p.op[1] = {static_cast<const __nv_bfloat16*>(a.k), a.Skv, nv, st.k, buf.k8, buf.km};
  p.op[2] = {static_cast<const __nv_bfloat16*>(a.v), a.Skv, nv, st.v, buf.v8, nullptr};
  p.H = a.H, p.D = a.D, p.Dp = attention_cudnn_fp8_head_dim(a.D);
  p.scalars = buf.scalars;
  cudaError_t e = cudaMemsetAsync(buf.scalars, 0, kCudnnFp8Scalars * sizeof(float), stream);
  if (e == cudaSuccess) e = attention_cudnn_fp8_key_mean(a, buf, stream);
  if (e != cudaSuccess) return e;
  const int64_t most = a.B * (a.Sq > nv ? a.Sq : nv) * p.H * p.Dp;
  const dim3 grid(blocks_for(most), 3);
  amax_kernel<<<grid, kThreads, 0, stream>>>(p, a.B);
  scales_kernel<<<1, 1, 0, stream>>>(buf.scalars);
  quant_kernel<<<grid, kThreads, 0, stream>>>(p, a.B);
  return cudaGetLastError();
}

cudaError_t attention_cudnn_fp8_key_mean(const AttnArgs& a, const CudnnFp8Buffers& buf, cudaStream_t stream) {
  const int64_t nv = valid_kv(a), chunks = (nv + kCudnnFp8KeyChunk - 1) / kCudnnFp8KeyChunk;
  if (nv < 1 || a.D > 128) return cudaErrorInvalidValue;
  const auto* k = static_cast<const __nv_bfloat16*>(a.k);
  key_sum_kernel<<<dim3(unsigned(chunks), unsigned(a.H), unsigned(a.B)), 128, 0, stream>>>(
      k, a.Skv, attn_strides(a).k, nv, a.H, a.D, chunks, buf.ksum);
  key_mean_kernel<<<dim3(unsigned(a.H), unsigned(a.B)), 128, 0, stream>>>(buf.ksum, nv, a.H, a.D, chunks, buf.km);
  return cudaGetLastError();
}

cudaError_t attention_cudnn_fp8_lse_fix(const AttnArgs& a, const CudnnFp8Buffers& buf, cudaStream_t stream) {
  const int64_t rows = a.B * a.H * a.Sq;
  lse_fix_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(a.q), a.Sq,
                                                            attn_strides(a).q, a.H, a.D, buf.km, a.scale, a.lse, rows);
  return cudaGetLastError();
}

cudaError_t attention_cudnn_fp8_finish(const AttnArgs& a, const CudnnFp8Buffers& buf, bool e4m3, cudaStream_t stream) {
  const int64_t rows = a.B * a.Sq;
  finish_kernel<<<blocks_for(rows * a.H * a.D), kThreads, 0, stream>>>(
      buf.o, e4m3, buf.scalars, static_cast<__nv_bfloat16*>(a.out), rows, a.H, a.D, attention_cudnn_fp8_head_dim(a.D),
      attn_strides(a).o);
  return cudaGetLastError();
}

cudaError_t attention_cudnn_fp8_empty(const AttnArgs& a, cudaStream_t stream) {
  const int64_t rows = a.B * a.Sq, HD = a.H * a.D;
  empty_kernel<<<blocks_for(rows * HD), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(a.out), a.lse, rows, HD,
                                                               attn_strides(a).o, a.B * a.H * a.Sq);
  return cudaGetLastError();
}

}  // namespace vgen::kern
