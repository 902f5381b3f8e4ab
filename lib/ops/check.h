// Shared argument checks of the Tensor-level ops (CPU f32 path until the CUDA launchers land).
#pragma once
#include "core/tensor.h"

namespace vgen {

inline void check_cpu_f32(const Tensor& t, const char* op, const char* what) {
  VGEN_ASSERT(t.defined() && t.is_cpu() && t.dtype() == DType::kF32, "{}: {} must be a host f32 tensor, got {}", op,
              what, t.defined() ? t.str() : std::string("undefined"));
}

}  // namespace vgen
