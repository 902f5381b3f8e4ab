// CPU references of the DiT patch gather (before the patch-embedding GEMM) and of unpatchify
// (after proj_out), fp32. CUDA: patch.cuh. Tokens are numbered f-major, then h, then w over the
// grid (T/pt, H/ph, W/pw); S = (T/pt)·(H/ph)·(W/pw).
#pragma once
#include <cstdint>

namespace vgen::kern {

// x [B, C, T, H, W] → out [B, tok_count, C·pt·ph·pw] for global tokens [tok_begin, tok_begin + tok_count),
// each row ordered (c, kt, kh, kw) with c slowest (the Conv3d weight layout). Rows of tokens >= S
// (sequence padding) are zero.
void patchify_ref(const float* x, float* out, int64_t B, int64_t C, int64_t T, int64_t H, int64_t W, int64_t pt,
                  int64_t ph, int64_t pw, int64_t tok_begin, int64_t tok_count);

// tokens [B, S, pt·ph·pw·C] with rows ordered (kt, kh, kw, c), c fastest (the proj_out layout)
// → out [B, C, T, H, W].
void unpatchify_ref(const float* tokens, float* out, int64_t B, int64_t C, int64_t T, int64_t H, int64_t W, int64_t pt,
                    int64_t ph, int64_t pw);

}  // namespace vgen::kern
