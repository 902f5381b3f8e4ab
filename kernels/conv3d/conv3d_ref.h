// CPU reference 3-D convolution (fp32), stride 1, for the Wan VAE: 3×3×3, 3×1×1, 1×1×1 kernels and
// the 2-D 3×3 case as one frame with kt = 1. The CUDA launcher in conv3d.cuh computes the same sums
// in the device decoder's channels-last layout (the cached frames laid out in front of x).
#pragma once
#include <cstdint>

namespace vgen::kern {

// Zero padding applied by the kernel on each spatial side (top/bottom of H, left/right of W).
// There is no temporal padding: a causal conv gets its cached or zero frames prepended by the caller.
struct Conv3dPad {
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

// x [N, Cin, Ti, Hi, Wi], w [Cout, Cin, kt, kh, kw] (PyTorch Conv3d layout), bias [Cout] or null.
// prev [N, Cin, Tp, Hi, Wi] or null (Tp = 0): frames logically in front of x (a causal cache), so the
// conv runs over the time concatenation [prev, x] without the caller building it.
// y [N, Cout, To, Ho, Wo] with To = Tp + Ti − kt + 1, Ho = Hi + top + bottom − kh + 1,
// Wo = Wi + left + right − kw + 1 (all ≥ 1). y must not overlap x or prev.
// Per output frame: one GEMM per tap over a zero-padded copy of the input (no im2col buffer).
void conv3d_ref(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t Cin, int64_t Ti,
                int64_t Hi, int64_t Wi, int64_t Cout, int64_t kt, int64_t kh, int64_t kw, const Conv3dPad& pad,
                const float* prev = nullptr, int64_t Tp = 0);

// Plain seven-loop version of conv3d_ref without `prev` (slow; for tests of the fast path).
void conv3d_naive_ref(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t Cin,
                      int64_t Ti, int64_t Hi, int64_t Wi, int64_t Cout, int64_t kt, int64_t kh, int64_t kw,
                      const Conv3dPad& pad);

}  // namespace vgen::kern
