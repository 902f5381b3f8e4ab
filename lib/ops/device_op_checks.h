// Argument checks and launch-status reporting shared by the Tensor-level device ops
// (ops/*_device_ops_cuda.cpp). CUDA builds only (includes the CUDA runtime).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "core/error.h"
#include "core/tensor.h"
#include "kernels/common/convert.cuh"

namespace vgen::device_ops {

inline std::string desc(const Tensor& t) { return t.defined() ? t.str() : std::string("undefined"); }

inline void check_dev(const Tensor& t, const char* op, const char* what) {
  VGEN_ASSERT(t.defined() && t.device() == Device::kCUDA, "{}: {} must be a device tensor, got {}", op, what, desc(t));
}

// The kernel float type of dtype `dt` (f32, bf16, f16); false for the others.
inline bool float_type(DType dt, kern::FloatType* out) {
  switch (dt) {
    case DType::kF32: *out = kern::FloatType::kF32; return true;
    case DType::kBF16: *out = kern::FloatType::kBF16; return true;
    case DType::kF16: *out = kern::FloatType::kF16; return true;
    default: return false;
  }
}

// The kernel float type of an f32 or bf16 device tensor (the activation dtypes).
inline kern::FloatType act_type(const Tensor& t, const char* op, const char* what) {
  check_dev(t, op, what);
  VGEN_ASSERT(t.dtype() == DType::kF32 || t.dtype() == DType::kBF16, "{}: {} must be f32 or bf16, got {}", op, what,
              t.str());
  return t.dtype() == DType::kF32 ? kern::FloatType::kF32 : kern::FloatType::kBF16;
}

// Throws kInternal naming the op, the tensor and the CUDA error (and `detail` when given).
inline void launched(cudaError_t e, const char* op, const Tensor& t, const char* detail = "") {
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "{} on {} failed: {} ({}){}{}", op, t.str(), cudaGetErrorString(e),
               cudaGetErrorName(e), detail[0] ? ": " : "", detail);
}

}  // namespace vgen::device_ops
