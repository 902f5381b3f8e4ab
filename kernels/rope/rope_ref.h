// CPU reference of rotary position embedding with interleaved pairs (fp32). The CUDA launcher in
// rope.cuh has the same contract.
#pragma once
#include <cstdint>

namespace vgen::kern {

// x, y [batch, seq, heads, head_dim] (y may alias x); cos, sin [seq, head_dim]: per-token tables
// shared by every sample and head, entries 2j and 2j+1 hold the angle of pair j (as diffusers'
// repeat_interleave tables; cos is read at 2j, sin at 2j+1). For each pair:
//   y[2j] = x[2j]·cos − x[2j+1]·sin,  y[2j+1] = x[2j]·sin + x[2j+1]·cos.
void rope_ref(const float* x, const float* cos, const float* sin, float* y, int64_t batch, int64_t seq, int64_t heads,
              int64_t head_dim);

}  // namespace vgen::kern
