// Cosmos 3's video latents ↔ patch tokens (diffusers _patchify_and_pack_latents and
// _unpatchify_and_unpack_latents): latents [1, C, T, H, W] are zero-padded to multiples of the patch
// p along H and W, then each p×p patch becomes one token with features in (p, q, c) order; tokens
// run over (t, h, w). Host loops (latents of any device go through the host).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace vgen {

// The patch grid (T, ceil(H/p), ceil(W/p)) of latents [1, C, T, H, W].
std::array<int64_t, 3> latent_patch_grid(const Tensor& latents, int patch);

// latents [1, C, T, H, W] → tokens [T·Hp·Wp, p·p·C] f32 on the latents' device.
Tensor latents_to_tokens(const Tensor& latents, int patch);

// tokens [num_noisy·Hp·Wp, p·p·C] of the frames `noisy` (ascending, in that order) → latents
// [1, C, T, H, W] f32 on the tokens' device: the padding cropped, frames not listed zero.
Tensor tokens_to_latents(const Tensor& tokens, int patch, int64_t C, int64_t T, int64_t H, int64_t W,
                         const std::vector<int64_t>& noisy);

}  // namespace vgen
