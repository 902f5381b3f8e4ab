// The device half of weights.h: the rope row permutation of a Q/K tensor streamed to the device, and
// the pinned host memory of a streamed understanding tower.
#include <cuda_runtime.h>

#include "core/cuda_stream.h"
#include "kernels/seq_shuffle/copy_runs.cuh"
#include "model/cosmos3/weights.h"
#include "ops/device_op_checks.h"

namespace vgen {

using namespace device_ops;

void permute_rope_rows_device(const Tensor& src, Tensor& dst, int64_t head_dim) {
  check_dev(src, "permute_rope_rows", "src");
  check_dev(dst, "permute_rope_rows", "dst");
  VGEN_ASSERT(src.ndim() >= 1 && src.shape() == dst.shape() && src.dtype() == dst.dtype() &&
                  src.dim(0) % head_dim == 0 && head_dim % 2 == 0 && src.raw() != dst.raw(),
              "permute_rope_rows: {} into {} for head_dim {}", src.str(), dst.str(), head_dim);
  const int64_t row = int64_t(dtype_size(src.dtype())) * (src.numel() / src.dim(0)), half = head_dim / 2;
  // Run (h, s, j): source row h·Dh + s·Dh/2 + j to destination row h·Dh + 2j + s.
  const int64_t dims[3] = {src.dim(0) / head_dim, 2, half};
  const int64_t from[3] = {head_dim * row, half * row, row}, to[3] = {head_dim * row, row, 2 * row};
  launched(kern::copy_runs(src.raw(), dst.raw(), dims, from, to, row, compute_stream()), "permute_rope_rows", src);
}

std::shared_ptr<Storage> pinned_host_storage(size_t bytes) {
  auto st = std::make_shared<Storage>();
  VGEN_CUDA_CHECK(cudaHostAlloc(&st->ptr, bytes ? bytes : 1, cudaHostAllocDefault));
  st->bytes = bytes;
  st->device = Device::kCPU;  // host memory the device copies from asynchronously
  st->release = [](void* p) { cudaFreeHost(p); };
  return st;
}

}  // namespace vgen
