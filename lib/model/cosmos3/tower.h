// The pieces of one Cosmos 3 tower shared by the understanding prefill and the generation forward:
// the attention inputs (projections, per-head Q/K norm, mRoPE) and the MLP with its residuals.
#pragma once
#include "core/tensor.h"
#include "model/cosmos3/config.h"
#include "model/cosmos3/mrope.h"
#include "model/cosmos3/weights.h"

namespace vgen {

struct TowerQkv {
  Tensor q;        // [1, S, H, Dh] after norm and RoPE
  Tensor k;        // [1, S, KVH, Dh] after norm and RoPE (what this tower attends to)
  Tensor k_other;  // understanding only: the keys the generation tower reads when they differ (else undefined)
  Tensor v;        // [1, S, KVH, Dh]
};

// h = RMSNorm_in(x); q, k, v projections; the tower's per-head norms; RoPE with `rope` ([S, Dh]
// tables). x [1, S, D].
TowerQkv tower_qkv(const Cosmos3Config& cfg, const Cosmos3Tower& w, const Tensor& x, const MropeTables& rope);

// x += o·Woᵀ (+ bo); x += MLP(RMSNorm_post(x)) in place. o [1, S, H, Dh], x [1, S, D].
void tower_finish(const Cosmos3Config& cfg, const Cosmos3Tower& w, Tensor& x, const Tensor& o);

}  // namespace vgen
