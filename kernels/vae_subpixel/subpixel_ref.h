// The decoder's upsampler (nearest ×2, then a 3×3 conv with zero padding 1) rewritten as one 2×2
// conv of the low-resolution frame with four output phases, then a pixel shuffle: each output pixel
// (2i + a, 2j + b) sees only two input rows and two input columns, so the conv does 4/9 of the
// multiply-adds. CPU references (fp32, channels-first); the CUDA launchers in subpixel.cuh have the
// same contracts in the device decoder's channels-last layout.
#pragma once
#include <cstdint>

namespace vgen::kern {

// w3 [cout, cin, 3, 3] (a Conv2d weight) → w4 [4·cout, cin, 2, 2] with phase p = 2a + b:
//   w4[p·cout + o, i, ky, kx] = Σ_{dy ∈ S(a, ky)} Σ_{dx ∈ S(b, kx)} w3[o, i, dy, dx],
// S(0, 0) = {0}, S(0, 1) = {1, 2}, S(1, 0) = {0, 1}, S(1, 1) = {2} (fp32 sums).
void subpixel_weight_ref(const float* w3, float* w4, int64_t cout, int64_t cin);

// The 2×2 conv's output r [4·C, T, H + 1, W + 1] (input padded by 1 on every side) → the upsampled
// conv's output y [C, T, 2H, 2W]: y[c, t, 2i + a, 2j + b] = r[(2a + b)·C + c, t, i + a, j + b].
void subpixel_shuffle_ref(const float* r, float* y, int64_t C, int64_t T, int64_t H, int64_t W);

}  // namespace vgen::kern
