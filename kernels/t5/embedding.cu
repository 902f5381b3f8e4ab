// Token embedding gather on the device (contract in embedding.cuh): one thread per output
// element in a grid-stride loop (consecutive threads copy consecutive elements of a row).
#include <cmath>

#include "kernels/common/elem_io.cuh"
#include "kernels/t5/embedding.cuh"

namespace vgen::kern {
namespace {

template <typename T>
__global__ void embedding_kernel(const T* table, const int64_t* ids, T* out, int64_t rows, int64_t dim,
                                 int64_t vocab) {
  const int64_t n = rows * dim, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    const int64_t r = e / dim, c = e % dim;
    const int64_t id = ids[r];
    out[e] = (id >= 0 && id < vocab) ? table[id * dim + c] : dev::from_f<T>(NAN);
  }
}

}  // namespace

cudaError_t embedding_gather(const void* table, const int64_t* ids, void* out, FloatType type, int64_t rows,
                             int64_t dim, int64_t vocab, cudaStream_t stream) {
  if (rows < 0 || dim < 0 || vocab < 0) return cudaErrorInvalidValue;
  if (rows == 0 || dim == 0) return cudaSuccess;
  if (!table || !ids || !out) return cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(type, T, {
    embedding_kernel<T><<<dev::grid_for(rows * dim, 256), 256, 0, stream>>>(
        static_cast<const T*>(table), ids, static_cast<T*>(out), rows, dim, vocab);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
