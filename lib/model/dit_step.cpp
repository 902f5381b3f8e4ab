#include "model/dit_step.h"

#include <algorithm>
#include <cstring>

namespace vgen {

namespace {

// Device tokens (GPU path): all-gather on the device communicator (NCCL), then the padding-free
// rows of each shard are copied into place on the device.
Tensor gather_seq_tokens_device(Communicator& seq, const Tensor& local, const SeqLayout& layout) {
  VGEN_ASSERT(local.ndim() == 3 && local.dim(1) == layout.local() && seq.size() == layout.degree,
              "gather_seq_tokens: local {} for layout (local {}, degree {}) on a group of {}", local.str(),
              layout.local(), layout.degree, seq.size());
  const int64_t B = local.dim(0), L = local.dim(1), P = local.dim(2), N = layout.degree, S = layout.tokens;
  Tensor all = Tensor::empty({N, B, L, P}, local.dtype(), local.device());  // source-major
  seq.all_gather(local, all);
  Tensor out = Tensor::empty({B, S, P}, local.dtype(), local.device());  // [B, S, P]
  for (int64_t r = 0; r < N; ++r)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t g0 = r * L, n = std::clamp<int64_t>(S - g0, 0, L);
      if (n > 0) out[b].narrow(g0, n).copy_from(all[r][b].narrow(0, n));
    }
  return out;
}

}  // namespace

Tensor gather_seq_tokens(Communicator& seq, const Tensor& local, const SeqLayout& layout) {
  if (local.defined() && !local.is_cpu()) return gather_seq_tokens_device(seq, local, layout);
  VGEN_ASSERT(local.ndim() == 3 && local.dim(1) == layout.local() && seq.size() == layout.degree &&
                  local.is_cpu() && local.dtype() == DType::kF32,
              "gather_seq_tokens: local {} for layout (local {}, degree {}) on a group of {}", local.str(),
              layout.local(), layout.degree, seq.size());
  const int64_t B = local.dim(0), L = local.dim(1), P = local.dim(2), N = layout.degree, S = layout.tokens;
  Tensor all = Tensor::empty({N, B, L, P}, DType::kF32);  // source-major
  seq.all_gather(local, all);
  Tensor out = Tensor::empty({B, S, P}, DType::kF32);  // [B, S, P]
  const float* src = all.f32();
  float* dst = out.f32();
  for (int64_t r = 0; r < N; ++r)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t g0 = r * L;  // global index of the shard's first token
      const int64_t n = std::clamp<int64_t>(S - g0, 0, L);
      if (n > 0)
        std::memcpy(dst + (b * S + g0) * P, src + ((r * B + b) * L) * P, size_t(n * P) * sizeof(float));
    }
  return out;
}

Tensor dit_predict(const Denoiser& model, const Tensor& latents, const Tensor& timestep, const Conditioning& cond,
                   Communicator& seq, SeqAttention& attention, FirstBlockCache* cache, const StepPolicy& step) {
  const int64_t S = model.num_tokens(latents.shape());
  SeqLayout layout = SeqLayout::make(S, seq.size(), seq.rank());
  if (cache) cache->set_group(&seq);
  Tensor local = model.forward_local(latents, timestep, cond, layout, attention, cache, step);  // [B, S_loc, P]
  Tensor tokens = seq.size() == 1 && layout.padded == S ? local : gather_seq_tokens(seq, local, layout);  // [B, S, P]
  Tensor out = model.unpatchify(tokens, latents.dim(2), latents.dim(3), latents.dim(4));  // [B, C_out, T, H, W]
  return out.is_cpu() ? out : out.to(Device::kCPU);  // a device model's prediction comes back as host f32
}

}  // namespace vgen
