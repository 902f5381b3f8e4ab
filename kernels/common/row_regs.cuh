// Rows held in registers for the row-wise norms of the DiT (LayerNorm, AdaLN, RMSNorm + RoPE):
// one block per row, thread t owns the 8-element vectors v·threads + t (v < V), so a row is read
// from memory once, with coalesced 16-byte loads, and reduced without a shared-memory copy. Many
// small blocks per SM keep enough loads in flight to run near the memory bandwidth (the shared-
// memory kernels beside them reached 1.6–2.3 TB/s at 5120 wide, these aim at the 4.3 TB/s of the
// elementwise kernels). Header-only, CUDA sources only. Never includes lib/.
#pragma once
#include "kernels/common/elem_io.cuh"

namespace vgen::kern::dev {

constexpr int kRowRegsMaxV = 4;  // vectors of 8 per thread: at most 32 fp32 registers of row data

// The launch shape for rows of `width` elements: threads (a multiple of 32, at most 1024) and
// vectors per thread V with threads·V·8 == width; false when no such shape exists (the caller
// takes its general kernel). Prefers the most vectors per thread (fewer, busier threads).
inline bool row_regs_shape(int64_t width, int* threads, int* vecs) {
  if (width <= 0 || width % 8) return false;
  const int64_t n = width / 8;
  for (int v = kRowRegsMaxV; v >= 1; --v) {
    if (n % v) continue;
    const int64_t t = n / v;
    if (t % 32 == 0 && t >= 32 && t <= 1024) {
      *threads = int(t);
      *vecs = v;
      return true;
    }
  }
  return false;
}

// Index of element j of this thread's vector v in its row.
__device__ __forceinline__ int64_t row_index(int v, int j) { return (int64_t(v) * blockDim.x + threadIdx.x) * 8 + j; }

// A thread's share of a row in registers: fp32 values for f32 rows, the bf16 bits for bf16 rows
// (exact, since the values are bf16; half the registers, so more rows in flight per SM).
template <typename T, int V> struct RowRegs;

template <int V> struct RowRegs<float, V> {
  float v[V][8];
  __device__ __forceinline__ void load(const float* row) {
#pragma unroll
    for (int i = 0; i < V; ++i) load8<float>(row + row_index(i, 0), v[i]);
  }
  __device__ __forceinline__ void store(float* row) const {
#pragma unroll
    for (int i = 0; i < V; ++i) store8<float>(row + row_index(i, 0), v[i]);
  }
  __device__ __forceinline__ void get(int i, float (&o)[8]) const {
#pragma unroll
    for (int j = 0; j < 8; ++j) o[j] = v[i][j];
  }
  __device__ __forceinline__ void set(int i, const float (&o)[8]) {
#pragma unroll
    for (int j = 0; j < 8; ++j) v[i][j] = o[j];
  }
};

template <int V> struct RowRegs<bf16, V> {
  uint4 raw[V];
  __device__ __forceinline__ void load(const bf16* row) {
#pragma unroll
    for (int i = 0; i < V; ++i) raw[i] = *reinterpret_cast<const uint4*>(row + row_index(i, 0));
  }
  __device__ __forceinline__ void store(bf16* row) const {
#pragma unroll
    for (int i = 0; i < V; ++i) *reinterpret_cast<uint4*>(row + row_index(i, 0)) = raw[i];
  }
  __device__ __forceinline__ void get(int i, float (&o)[8]) const { bf16x8_to_f32(raw[i], o); }
  // Rounds into bf16 (a store of the values would round the same way).
  __device__ __forceinline__ void set(int i, const float (&o)[8]) {
    bf16* e = reinterpret_cast<bf16*>(&raw[i]);
#pragma unroll
    for (int j = 0; j < 8; ++j) e[j] = __float2bfloat16_rn(o[j]);
  }
};

// Σ f(v) over this thread's share of the row (the partial that block_sum then reduces).
template <typename T, int V, typename F>
__device__ __forceinline__ float row_sum(const RowRegs<T, V>& row, F f) {
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    float v[8];
    row.get(i, v);
#pragma unroll
    for (int j = 0; j < 8; ++j) s += f(v[j]);
  }
  return s;
}

// The general row kernels beside the register ones (a shared-memory copy of the row, one block per
// row): threads for a row width, and a launch that grants shared memory beyond the 48 KiB default.
inline int smem_row_threads(int64_t width) {
  if (width >= 4096) return 512;
  if (width >= 1024) return 256;
  if (width >= 256) return 128;
  return 32;
}

inline unsigned row_grid(int64_t rows) { return unsigned(rows < 2147483647 ? rows : 2147483647); }

template <typename Kernel, typename... Args>
cudaError_t launch_smem_rows(Kernel kernel, int64_t rows, int64_t width, size_t smem, cudaStream_t stream,
                             Args... args) {
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  kernel<<<row_grid(rows), smem_row_threads(width), smem, stream>>>(args...);
  return cudaGetLastError();
}

// Calls BODY with `constexpr int V` = vecs (1..kRowRegsMaxV). Use inside a function returning
// cudaError_t.
#define VGEN_DISPATCH_ROW_V(vecs, V, ...)       \
  switch (vecs) {                               \
    case 1: { constexpr int V = 1; __VA_ARGS__ } \
    case 2: { constexpr int V = 2; __VA_ARGS__ } \
    case 3: { constexpr int V = 3; __VA_ARGS__ } \
    case 4: { constexpr int V = 4; __VA_ARGS__ } \
    default: return cudaErrorInvalidValue;      \
  }

}  // namespace vgen::kern::dev
