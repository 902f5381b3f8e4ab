// CPU references of the Wan 2.2 VAE decoder's layout ops (fp32, channels-first): the DupUp3D
// shortcut of the residual up blocks and the unpatchify of the decoder's output. The CUDA
// launchers in vae_up.cuh have the same contracts in the device decoder's channels-last layout.
#pragma once
#include <cstdint>

namespace vgen::kern {

// DupUp3D (x.repeat_interleave(r, dim=1) viewed [Cout, ft, fs, fs, T, H, W] and laid onto the
// upsampled grid) added into time phase `phase` < ft of the upsampled frames:
//   y[o, t, fs·h + b, fs·w + d] += x[j / r, t, h, w],  j = ((o·ft + phase)·fs + b)·fs + d,
// r = Cout·ft·fs² / Cin (an integer). x [Cin, T, H, W], y [Cy, T, fs·H, fs·W] with Cy >= Cout;
// channels [Cout, Cy) are left as they are.
void dup_up_add_ref(float* y, const float* x, int64_t Cin, int64_t Cout, int64_t Cy, int64_t T, int64_t H, int64_t W,
                    int64_t ft, int64_t fs, int64_t phase);

// diffusers' unpatchify followed by the decode's clamp: x [Cx, T, H, W] (Cx >= C·p²) →
//   y[c·c_stride + (t·p·H + p·h + r)·p·W + p·w + q] = clamp(x[(c·p + q)·p + r, t, h, w], lo, hi)
// for c < C; c_stride >= T·p²·H·W lets y be a frame range inside a longer video [C, F, pH, pW].
void unpatchify_clamp_ref(const float* x, float* y, int64_t Cx, int64_t C, int64_t p, int64_t T, int64_t H, int64_t W,
                          int64_t c_stride, float lo, float hi);

}  // namespace vgen::kern
