// The pieces of one Cosmos 3 tower shared by the understanding prefill and the generation forward:
// the attention inputs (projections, per-head Q/K norm, mRoPE) and the MLP with its residuals.
// Written once over device-dispatching ops: host f32 runs the references, device tensors (f32 or
// bf16 activations, the weights in the same dtype) the CUDA paths; `m` says whether each of the
// tower's linears runs through its quantised copy (precision fp8) and how the host's GEMMs walk rows.
#pragma once
#include "core/tensor.h"
#include "model/cosmos3/config.h"
#include "model/cosmos3/mrope.h"
#include "model/cosmos3/weights.h"
#include "ops/linear_layer.h"

namespace vgen {

// How each linear of a tower runs (precision fp8: fp8_config.bf16_linears keeps some in the compute
// dtype); all() gives every linear one mode.
struct TowerModes {
  LinearMode q, k, v, o, gate, up, down;
  static TowerModes all(const LinearMode& m) { return {m, m, m, m, m, m, m}; }
};

struct TowerQkv {
  Tensor q;        // [1, S, H, Dh] after norm and RoPE
  Tensor k;        // [1, S, KVH, Dh] after norm and RoPE (what this tower attends to)
  Tensor k_other;  // understanding only: the keys the generation tower reads when they differ (else undefined)
  Tensor v;        // [1, S, KVH, Dh]
};

// h = RMSNorm_in(x); q, k, v projections; the tower's per-head norms; RoPE with `rope` ([S, Dh]
// tables on x's device). x [1, S, D].
TowerQkv tower_qkv(const Cosmos3Config& cfg, const Cosmos3Tower& w, const Tensor& x, const MropeTables& rope,
                   const TowerModes& m);

// x += o·Woᵀ (+ bo); x += MLP(RMSNorm_post(x)) in place, each residual in its GEMM's epilogue on the
// device. o [1, S, H, Dh] (any float dtype: an f32 merge of a sharded attention is rounded to x's),
// x [1, S, D].
void tower_finish(const Cosmos3Config& cfg, const Cosmos3Tower& w, Tensor& x, const Tensor& o, const TowerModes& m);

}  // namespace vgen
