// Pieces shared by the cuBLASLt launchers of kernels/gemm/ (gemm.cu: bf16/fp32, gemm_fp8.cu: e4m3):
// the per-thread text behind gemm_last_error(), the cuBLAS-status mapping, pointer alignment, the
// switch of gemm_set_fused_epilogue, and one cuBLASLt handle per device with one workspace per
// (device, stream), so both launchers use the same handle and workspace (freed by
// gemm_release_resources). Their cached plans: lt_plan.cuh. Internal to kernels/gemm/; never
// includes lib/.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace vgen::kern::gemm_detail {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLAS' recommendation for Hopper

std::string& last_error();  // this thread's (gemm_last_error)
bool fused_epilogue_enabled();  // gemm_set_fused_epilogue

// The device's cuBLASLt handle and the workspace (kWorkspaceBytes) of `stream`, created on first use.
// Thread-safe.
cudaError_t lt_resources(int dev, cudaStream_t stream, cublasLtHandle_t* handle, void** workspace);

inline cudaError_t fail(cudaError_t e, const std::string& what) {
  last_error() = what;
  return e;
}

inline cudaError_t fail_cublas(cublasStatus_t s, const std::string& what) {
  last_error() = what + ": " + cublasLtGetStatusName(s) + " (" + cublasLtGetStatusString(s) + ")";
  switch (s) {
    case CUBLAS_STATUS_ALLOC_FAILED: return cudaErrorMemoryAllocation;
    case CUBLAS_STATUS_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUBLAS_STATUS_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUBLAS_STATUS_ARCH_MISMATCH: return cudaErrorInvalidDeviceFunction;
    default: return cudaErrorUnknown;
  }
}

// Largest power of two (at most 16) dividing the address; 16 for null.
inline uint8_t align_of(const void* p) {
  if (!p) return 16;
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uintptr_t a = v & (~v + 1);  // lowest set bit
  return uint8_t(a >= 16 ? 16 : a);
}

}  // namespace vgen::kern::gemm_detail
