// Cosmos 3's video latents ↔ patch tokens (diffusers _patchify_and_pack_latents and
// _unpatchify_and_unpack_latents): latents [1, C, T, H, W] are zero-padded to multiples of the patch
// p along H and W, then each p×p patch becomes one token; tokens run over (t, h, w). The input
// side's features are in (c, p, q) order (proj_in's columns are permuted to it at load, weights.h),
// the layout of ops/embed.h patchify; the output side's in (p, q, c) order, proj_out's and
// unpatchify's. Latents that divide the patch go through ops/embed (either device); padded ones
// through host loops.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace vgen {

// The patch grid (T, ceil(H/p), ceil(W/p)) of latents [1, C, T, H, W].
std::array<int64_t, 3> latent_patch_grid(const Tensor& latents, int patch);

// latents [1, C, T, H, W] (any float dtype, any device) → tokens [1, T·Hp·Wp, C·p·p] in (c, p, q)
// order, of `dtype` on `device`.
Tensor patch_tokens(const Tensor& latents, int patch, Device device, DType dtype);

// tokens [1, T·Hp·Wp, p·p·C] of every frame (any float dtype) → latents [1, C, T, H, W] f32 on the
// tokens' device, the padding cropped.
Tensor tokens_to_video(const Tensor& tokens, int patch, int64_t C, int64_t T, int64_t H, int64_t W);

// Host loops of the padded case: latents → tokens [T·Hp·Wp, C·p·p] f32 in (c, p, q) order on the
// latents' device; tokens [num_noisy·Hp·Wp, p·p·C] of the frames `noisy` (ascending, in that order)
// → latents [1, C, T, H, W] f32 on the tokens' device, frames not listed zero.
Tensor latents_to_tokens(const Tensor& latents, int patch);
Tensor tokens_to_latents(const Tensor& tokens, int patch, int64_t C, int64_t T, int64_t H, int64_t W,
                         const std::vector<int64_t>& noisy);

}  // namespace vgen
