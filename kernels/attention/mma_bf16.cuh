// Warp-level tensor-core helpers of the attention kernels (sm_80+): cp.async copies, ldmatrix
// loads, the mma.sync m16n8k16 bf16 product with fp32 accumulators, and the log2-domain softmax
// steps on its accumulator layout (row max / sum over a lane quad, exp2, P as an A fragment).
// Device code only.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

namespace vgen::kern::mma {

constexpr float kLog2e = 1.4426950408889634f;  // scores scaled into the log2 domain (exp2)
constexpr float kLn2 = 0.6931471805599453f;    // and an LSE back to natural log

// Sets N m16n8 accumulator tiles (4 fp32 per lane) to zero.
template <int N>
__device__ __forceinline__ void zero_acc(float (&c)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) c[i][j] = 0.0f;
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2,
                                                  uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
// c += a · b for one m16n8k16 tile (a row-major 16x16, b column-major 16x8, fp32 accumulators).
__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo
  return *reinterpret_cast<uint32_t*>(&v);
}

// Row reductions over the quad of lanes that holds one row of an m16n8 accumulator.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// Scores of NT tiles of 8 keys (key0 + nt·8 + …) into the log2 domain; keys from nk on become
// −inf. mx[r] (the caller's start) takes the max of this lane's values of row r (r = c >> 1).
template <int NT>
__device__ __forceinline__ void scale_mask_max(float (&s)[NT][4], int lane, int key0, int nk, float scale_log2,
                                               float (&mx)[2]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int key = key0 + nt * 8 + (lane & 3) * 2 + (c & 1);
      const float v = key < nk ? s[nt][c] * scale_log2 : -INFINITY;
      s[nt][c] = v;
      mx[c >> 1] = fmaxf(mx[c >> 1], v);
    }
}

// s = exp2(s − m[row]); rsum[row] += this lane's share of the row sum.
template <int NT>
__device__ __forceinline__ void exp2_rows(float (&s)[NT][4], const float (&m)[2], float (&rsum)[2]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const float pv = exp2f(s[nt][c] - m[c >> 1]);
      s[nt][c] = pv;
      rsum[c >> 1] += pv;
    }
}

// P in bf16 as the A fragment of keys [16·kk, 16·kk + 16): score tiles 2kk and 2kk + 1.
template <int NT>
__device__ __forceinline__ void p_frag(const float (&s)[NT][4], int kk, uint32_t (&a)[4]) {
  a[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
  a[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
  a[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
  a[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

}  // namespace vgen::kern::mma
