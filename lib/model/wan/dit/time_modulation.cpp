#include "model/wan/dit/time_modulation.h"

#include <algorithm>
#include <vector>

#include "ops/device_ops.h"
#include "ops/elementwise.h"
#include "ops/embed.h"

namespace vgen {

WanTokenTimesteps wan_token_timesteps(const Tensor& timestep, const SeqLayout& layout) {
  VGEN_ASSERT(timestep.ndim() == 2 && timestep.dim(1) == layout.tokens && layout.tokens > 0,
              "per-token timestep {} for {} tokens", timestep.str(), layout.tokens);
  Tensor h = timestep.is_cpu() ? timestep : timestep.to(Device::kCPU);
  if (h.dtype() != DType::kF32) h = h.to(DType::kF32);  // the sinusoid reads f32, as diffusers' t.float()
  const int64_t B = h.dim(0), S = h.dim(1), begin = layout.begin(), S_loc = layout.local();
  std::vector<float> values;
  WanTokenTimesteps out;
  out.index = Tensor::empty({B * S_loc}, DType::kI64);  // [B·S_loc]
  int64_t* idx = out.index.data<int64_t>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S_loc; ++s) {
      const float v = h.f32()[b * S + std::min(begin + s, S - 1)];
      size_t u = 0;
      while (u < values.size() && values[u] != v) ++u;  // a handful of values (one per mask level and sample)
      if (u == values.size()) values.push_back(v);
      idx[b * S_loc + s] = int64_t(u);
    }
  out.values = Tensor::from_vector(values, {int64_t(values.size())});  // [U]
  return out;
}

Tensor wan_block_modulation(const WanTimeEmbedding& t, const Tensor& table, int64_t B, int64_t S_loc) {
  const int64_t D6 = t.tproj.dim(-1);
  VGEN_ASSERT(t.tproj.ndim() == 2 && table.numel() == D6 && (t.per_token() || t.tproj.dim(0) == B) &&
                  (!t.per_token() || t.index.numel() == B * S_loc),
              "block modulation: tproj {} and table {} for batch {} of {} tokens", t.tproj.str(), table.str(), B,
              S_loc);
  Tensor mod = add_row(t.tproj, table.reshape({D6}));                        // [N, 6D] f32
  if (!t.per_token()) return mod.reshape({B, 6, D6 / 6});                     // [B, 6, D]
  return gather_rows(mod, t.index).reshape({B, S_loc, 6, D6 / 6});  // [B, S_loc, 6, D]
}

Tensor wan_head_modulation(const WanTimeEmbedding& t, const Tensor& table, int64_t B, int64_t S_loc) {
  const int64_t N = t.temb.dim(0), D = t.temb.dim(1);
  VGEN_ASSERT(t.temb.ndim() == 2 && table.numel() == 2 * D && (t.per_token() || N == B) &&
                  (!t.per_token() || t.index.numel() == B * S_loc),
              "head modulation: temb {} and table {} for batch {} of {} tokens", t.temb.str(), table.str(), B, S_loc);
  Tensor temb_f = cast(t.temb, DType::kF32);                               // the rounded temb, as diffusers adds it
  Tensor mod = Tensor::empty({N, 2, D}, DType::kF32, t.temb.device());  // [N, 2, D]
  for (int64_t n = 0; n < N; ++n) {
    Tensor dst = mod[n];
    dst.copy_from(add_row(table, temb_f[n]));
  }
  if (!t.per_token()) return mod;                                    // [B, 2, D]
  return gather_rows(mod.reshape({N, 2 * D}), t.index).reshape({B, S_loc, 2, D});  // [B, S_loc, 2, D]
}

}  // namespace vgen
