// A model's Linear layer on either device, as its forwards run it: through its weight in the
// compute dtype or (precision fp8) through its per-output-channel quantised copy, with the residual
// add in the GEMM's epilogue, with a per-channel gate folded into a copy of its weights. Device:
// the GEMMs of ops/device_ops.h and ops/fp8.h on compute_stream(); host (f32): the CPU references
// of ops/linear.h and ops/fp8.h, unfused (the GEMM, then the activation or the add).
#pragma once
#include <optional>

#include "core/tensor.h"
#include "ops/device_ops.h"
#include "ops/fp8.h"
#include "ops/linear.h"

namespace vgen {

// A Linear's tensors: w [N, K] (undefined on the device once precision fp8 freed it), b [N] or
// undefined; precision fp8's copy of w (fp8_quantize_weight), w ≈ w8 · w_scale: w8 [N, K] u8 e4m3
// or i8 INT8, w_scale [N] f32; both undefined unless quantised.
struct LinearWeights {
  Tensor w;
  Tensor b;
  Tensor w8;
  Tensor w_scale;
};

// How one call runs.
struct LinearMode {
  bool fp8 = false;                        // through w8 (host: w quantised now where w8 is undefined)
  GemmFormat format = GemmFormat::kE4m3;   // of a weight the host quantises at its use
  LinearRows rows = LinearRows::kBatched;  // the host's fp32 GEMMs
  DType dtype = DType::kF32;               // what the device's fp8 GEMMs write (the others write x's dtype)
};

// act(x·wᵀ + b) → [..., N] for x [..., K]. `xq` (device, fp8): x already quantised per token in
// w8's format by the op that made it; x may then be undefined.
Tensor linear(const LinearWeights& l, const Tensor& x, const LinearMode& m, Activation act = Activation::kNone,
              const Fp8Activation* xq = nullptr);

// y += x·wᵀ + b in place; y [..., N], x [..., K]. Device: inside the GEMM's epilogue (one rounding
// into y's dtype); host: linear, then add_inplace.
void linear_add_(Tensor& y, const LinearWeights& l, const Tensor& x, const LinearMode& m);

// The Linear whose output is g ⊙ (x·wᵀ + b), gate g [N] f32: w's rows and b times g (m.fp8:
// w_scale and b times g in f32, b rounded back to its dtype, w8 shared) → new weights.
LinearWeights fold_gate(const LinearWeights& l, const Tensor& gate, const LinearMode& m);

// x [..., K] quantised per token once for several fp8 GEMMs of `format` (each linear of it then
// skips its own quantisation). Device: cuda_quantize_activation; host: nullopt (fp8_linear_host
// quantises its input at each call, the same values).
std::optional<Fp8Activation> quantize_activation_shared(const Tensor& x, GemmFormat format);

}  // namespace vgen
