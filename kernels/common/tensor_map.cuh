// The driver's TMA descriptor encoder (cuTensorMapEncodeTiled) through the runtime's entry-point
// query, so the kernels need no link against libcuda; null where the driver lacks it. Host code.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <mutex>

namespace vgen::kern {

using TensorMapEncoder = PFN_cuTensorMapEncodeTiled_v12000;

inline TensorMapEncoder tensor_map_encoder() {
  static TensorMapEncoder fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<TensorMapEncoder>(f);
  });
  return fn;
}

}  // namespace vgen::kern
