// Tensor-level linear layer: dispatches to the CPU reference or the CUDA launcher by device.
#pragma once
#include "core/tensor.h"

namespace vgen {

// x [..., K], w [N, K], b [N] or undefined → [..., N]
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);

// While a LinearRowsScope(true) lives on this thread, linear() computes one row at a time
// (kern::linear_rows_ref), so that a row's result does not depend on the rows computed with it: the
// CPU emulation of precision fp8 turns a last-bit difference into a different rounding of what it
// quantises, and its meshes are to match one rank bit for bit (tests/parallel/fp8_meshes.sh).
// A model scopes its forwards with LinearRowsScope(quantises || linear_rows()), so that a caller's
// row-wise mode holds through a model that would not set it.
bool linear_rows();

class LinearRowsScope {
 public:
  explicit LinearRowsScope(bool on);
  ~LinearRowsScope();
  LinearRowsScope(const LinearRowsScope&) = delete;
  LinearRowsScope& operator=(const LinearRowsScope&) = delete;

 private:
  bool prev_;
};

}  // namespace vgen
