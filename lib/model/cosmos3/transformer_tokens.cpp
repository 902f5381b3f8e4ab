// Cosmos3Transformer::forward_tokens: the generation tower over one rank's window of the padded
// video tokens (the denoiser's forward_local; docs/architecture.md "One denoising step").
#include <algorithm>

#include "model/cosmos3/latent_tokens.h"
#include "model/cosmos3/transformer.h"
#include "ops/device_ops.h"
#include "ops/linear_layer.h"

namespace vgen {
namespace {

// rows [S, ...] → this rank's rows [layout.local(), ...] of the sequence zero-padded to layout.padded.
Tensor local_rows(const Tensor& rows, const SeqLayout& layout) {
  Shape shape = rows.shape();
  shape[0] = layout.local();
  Tensor out = Tensor::zeros(shape, rows.dtype(), rows.device());  // [S_loc, ...]
  const int64_t end = std::min(layout.end(), layout.tokens);
  if (end > layout.begin()) {
    Tensor dst = out.narrow(0, end - layout.begin());
    dst.copy_from(rows.narrow(layout.begin(), end - layout.begin()));
  }
  return out;
}

// Zeroes the rows of out [S_loc, P] whose global token [begin, end) ∩ [a, b) it holds.
void zero_global_range(Tensor& out, const SeqLayout& layout, int64_t a, int64_t b) {
  const int64_t lo = std::max(a, layout.begin()), hi = std::min(b, layout.end());
  if (hi <= lo) return;
  Tensor dst = out.narrow(lo - layout.begin(), hi - lo);
  dst.copy_from(Tensor::zeros(dst.shape(), dst.dtype(), dst.device()));
}

}  // namespace

Tensor Cosmos3Transformer::forward_tokens(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in,
                                          const SeqLayout& layout, SeqAttention* attention) const {
  check_input(prompt, in);
  const int p = cfg_.latent_patch_size;
  const auto grid = latent_patch_grid(in.latents, p);
  const int64_t per_frame = grid[1] * grid[2], S = grid[0] * per_frame, D = cfg_.hidden_size;
  const int64_t P = int64_t(p) * p * cfg_.latent_channel, S_loc = layout.local();
  VGEN_CHECK(layout.tokens == S && layout.padded % layout.degree == 0 && (attention != nullptr || layout.degree == 1),
             ExitCode::kInternal, "cosmos3: layout of {} tokens (degree {}) for {} tokens", layout.tokens,
             layout.degree, S);
  if (in.noisy_frames.empty())  // nothing to predict: every frame is clean
    return Tensor::zeros({1, S_loc, P}, DType::kF32, in.latents.device());
  // The embedding and the rope tables of the whole sequence (cheap), then this rank's window; pad
  // rows are zero (their keys are excluded by the attention, their outputs zeroed below).
  const Tensor x_all = embed_video(in);  // [1, S, D]
  const MropeTables rope_all = video_rope(prompt, in);
  const MropeTables rope{local_rows(rope_all.cos, layout), local_rows(rope_all.sin, layout)};  // [S_loc, Dh]
  Tensor x = local_rows(x_all.reshape({S, D}), layout).reshape({1, S_loc, D});             // [1, S_loc, D]
  x = generation_tower(prompt, x, rope, layout, attention, in.fp8);                         // [1, S_loc, D]
  Tensor out = cast(linear(w_.proj_out, x.reshape({S_loc, D}), plain_mode()), DType::kF32);  // [S_loc, P]
  // Clean frames get zero velocity (diffusers' condition mask), padding too.
  size_t next = 0;
  for (int64_t f = 0; f < grid[0]; ++f) {
    if (next < in.noisy_frames.size() && in.noisy_frames[next] == f) {
      ++next;
      continue;
    }
    zero_global_range(out, layout, f * per_frame, (f + 1) * per_frame);
  }
  zero_global_range(out, layout, S, layout.padded);
  return out.reshape({1, S_loc, P}).to(in.latents.device());
}

}  // namespace vgen
