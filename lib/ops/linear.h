// Tensor-level linear layer: dispatches to the CPU reference or the CUDA launcher by device.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace vgen {

// kRowByRow computes one row at a time (kern::linear_rows_ref), so that a row's result does not
// depend on the rows computed with it: the CPU emulation of precision fp8 turns a last-bit
// difference into a different rounding of what it quantises, and its meshes are to match one rank
// bit for bit (tests/parallel/fp8_meshes.sh). A model that quantises passes it for every linear of
// its forwards; kBatched is one GEMM.
enum class LinearRows : uint8_t { kBatched, kRowByRow };

// x [..., K], w [N, K], b [N] or undefined → [..., N]
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, LinearRows rows = LinearRows::kBatched);

}  // namespace vgen
