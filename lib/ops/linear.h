// Tensor-level linear layer: dispatches to the CPU reference or the CUDA launcher by device.
#pragma once
#include "core/tensor.h"

namespace vgen {

// x [..., K], w [N, K], b [N] or undefined → [..., N]
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);

}  // namespace vgen
