// cuBLAS handles for the kernels that call cuBLAS directly (the VAE's per-tap conv fallback and
// its per-frame attention). One handle per (thread, device), created on first use and never
// destroyed (handles may outlive static destruction of the CUDA runtime); bound to `stream` on
// every call. Never includes lib/.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace vgen::kern {

// The calling thread's handle for the current device, set to `stream`; null when cuBLAS could not
// be initialised (blas_last_error() says why).
cublasHandle_t blas_handle(cudaStream_t stream);
const char* blas_last_error();

// A short name of a cuBLAS status ("CUBLAS_STATUS_NOT_SUPPORTED").
const char* blas_status_name(cublasStatus_t s);

}  // namespace vgen::kern
