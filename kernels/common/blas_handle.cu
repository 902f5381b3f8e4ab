#include <string>
#include <vector>

#include "kernels/common/blas_handle.cuh"

namespace vgen::kern {
namespace {
thread_local std::string t_error;
}

const char* blas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_(unknown)";
  }
}

const char* blas_last_error() { return t_error.c_str(); }

cublasHandle_t blas_handle(cudaStream_t stream) {
  // Never destroyed (see the header).
  thread_local std::vector<cublasHandle_t>* handles = new std::vector<cublasHandle_t>();
  int dev = 0;
  cudaError_t ce = cudaGetDevice(&dev);
  if (ce != cudaSuccess) {
    t_error = std::string("cudaGetDevice: ") + cudaGetErrorString(ce);
    return nullptr;
  }
  if (size_t(dev) >= handles->size()) handles->resize(size_t(dev) + 1, nullptr);
  cublasHandle_t& h = (*handles)[size_t(dev)];
  if (!h) {
    const cublasStatus_t s = cublasCreate(&h);
    if (s != CUBLAS_STATUS_SUCCESS) {
      h = nullptr;
      t_error = std::string("cublasCreate: ") + blas_status_name(s);
      return nullptr;
    }
    // fp32 GEMMs stay fp32 (no TF32): precision fp32 is the validation mode.
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  }
  const cublasStatus_t s = cublasSetStream(h, stream);
  if (s != CUBLAS_STATUS_SUCCESS) {
    t_error = std::string("cublasSetStream: ") + blas_status_name(s);
    return nullptr;
  }
  return h;
}

}  // namespace vgen::kern
