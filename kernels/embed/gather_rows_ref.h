// CPU reference of the row gather (an embedding lookup): the per-token modulation of per-token
// timesteps expands one row per distinct timestep to the tokens (model/wan/dit/time_modulation.h).
// CUDA: gather_rows.cuh.
#pragma once
#include <cstdint>

namespace vgen::kern {

// out [rows, cols] with out[r] = table[index[r]]; table [*, cols] f32, every index in range.
void gather_rows_ref(const float* table, const int64_t* index, float* out, int64_t rows, int64_t cols);

}  // namespace vgen::kern
