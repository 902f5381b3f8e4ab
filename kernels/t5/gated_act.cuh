// CUDA launcher of the T5 feed-forward activation with the contract of gated_act_ref.h:
// out = act(gate) ⊙ lin, or out = act(gate) when lin is null. f32: fp32 math in the reference's
// op order. bf16: the rounding points of transformers' eager bf16 modules (wan_spec.md §2.3):
// act(gate) is a bf16 tensor before the product, and gelu_new (kGeluTanh) is a chain of eager ops
// each rounded to bf16 (pow, mul, add, mul, tanh, add, mul, mul); relu / gelu (erf) / silu are
// single ops (one rounding); the product is rounded once more. Raw device pointers; queued on
// `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"
#include "kernels/t5/gated_act_ref.h"

namespace vgen::kern {

// gate, lin (or null), out [n], all of `type` (f32 or bf16); out may alias gate or lin.
cudaError_t t5_gated_act(const void* gate, const void* lin, void* out, FloatType type, int64_t n, T5Act act,
                         cudaStream_t stream);

}  // namespace vgen::kern
