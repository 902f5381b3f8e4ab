// Row gather on the device (contract in gather_rows.cuh): one grid-stride pass over the output in
// float4 units where every row starts 16-byte aligned, else in floats. A copy: exact.
#include <cstdint>

#include "kernels/embed/gather_rows.cuh"

namespace vgen::kern {
namespace {

template <typename V>
__global__ void gather_rows_kernel(const V* table, const int64_t* index, V* out, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / cols, c = e % cols;
    out[e] = table[index[r] * cols + c];
  }
}

template <typename V>
cudaError_t launch(const void* table, const int64_t* index, void* out, int64_t rows, int64_t cols,
                   cudaStream_t stream) {
  int64_t blocks = (rows * cols + 255) / 256;
  if (blocks > 65535) blocks = 65535;
  gather_rows_kernel<V><<<unsigned(blocks), 256, 0, stream>>>(static_cast<const V*>(table), index,
                                                              static_cast<V*>(out), rows, cols);
  return cudaGetLastError();
}

}  // namespace

cudaError_t gather_rows(const float* table, const int64_t* index, float* out, int64_t rows, int64_t cols,
                        cudaStream_t stream) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const bool wide = cols % 4 == 0 && reinterpret_cast<uintptr_t>(table) % 16 == 0 &&
                    reinterpret_cast<uintptr_t>(out) % 16 == 0;
  if (wide) return launch<float4>(table, index, out, rows, cols / 4, stream);
  return launch<float>(table, index, out, rows, cols, stream);
}

}  // namespace vgen::kern
