#include "ops/embed.h"

#include "kernels/embed/gather_rows_ref.h"
#include "kernels/embed/patch_ref.h"
#include "kernels/embed/timestep_embed_ref.h"
#include "ops/check.h"
#include "ops/device_ops.h"
#include "ops/dit_device_ops.h"

namespace vgen {

Tensor timestep_embedding(const Tensor& t0, int64_t dim, bool flip_sin_to_cos, float freq_shift, float max_period) {
  if (t0.defined() && !t0.is_cpu())
    return cuda_timestep_embedding(t0, dim, flip_sin_to_cos, freq_shift, max_period);
  Tensor t = t0.dtype() == DType::kF32 ? t0 : t0.to(DType::kF32);
  check_cpu_f32(t, "timestep_embedding", "t");
  VGEN_ASSERT(t.ndim() == 1 && dim > 0, "timestep_embedding: t must be [N], got {}", t.str());
  Tensor out = Tensor::empty({t.dim(0), dim}, DType::kF32);
  kern::timestep_embedding_ref(t.f32(), out.f32(), t.dim(0), dim, flip_sin_to_cos, freq_shift, max_period);
  return out;
}

Tensor gather_rows(const Tensor& table, const Tensor& index) {
  if (table.defined() && !table.is_cpu()) return cuda_gather_rows(table, index);
  check_cpu_f32(table, "gather_rows", "table");
  VGEN_ASSERT(table.ndim() == 2 && index.ndim() == 1 && index.dtype() == DType::kI64 && index.is_cpu(),
              "gather_rows: table must be [U, N] and index [R] i64 on the host, got {} and {}", table.str(),
              index.str());
  const int64_t U = table.dim(0), R = index.dim(0);
  const int64_t* idx = index.data<int64_t>();
  for (int64_t r = 0; r < R; ++r)
    VGEN_ASSERT(idx[r] >= 0 && idx[r] < U, "gather_rows: index {} at {} for a table of {} rows", idx[r], r, U);
  Tensor out = Tensor::empty({R, table.dim(1)}, DType::kF32);
  kern::gather_rows_ref(table.f32(), idx, out.f32(), R, table.dim(1));
  return out;
}

Tensor patchify(const Tensor& x, const std::array<int, 3>& patch, int64_t begin, int64_t count, DType out_dtype) {
  if (x.defined() && !x.is_cpu()) return cuda_patchify(x, patch, begin, count, out_dtype);
  check_cpu_f32(x, "patchify", "x");
  VGEN_ASSERT(x.ndim() == 5 && x.dim(2) % patch[0] == 0 && x.dim(3) % patch[1] == 0 && x.dim(4) % patch[2] == 0,
              "patchify: x {} is not [B, C, T, H, W] divisible by the patch [{}, {}, {}]", x.str(), patch[0], patch[1],
              patch[2]);
  VGEN_ASSERT(begin >= 0 && count >= 0, "patchify: token range [{}, +{})", begin, count);
  const int64_t P = x.dim(1) * patch[0] * patch[1] * patch[2];
  Tensor out = Tensor::empty({x.dim(0), count, P}, DType::kF32);
  kern::patchify_ref(x.f32(), out.f32(), x.dim(0), x.dim(1), x.dim(2), x.dim(3), x.dim(4), patch[0], patch[1],
                     patch[2], begin, count);
  return cast(out, out_dtype);
}

Tensor unpatchify(const Tensor& tokens, const std::array<int, 3>& patch, int64_t C, int64_t T, int64_t H, int64_t W,
                  DType out_dtype) {
  if (tokens.defined() && !tokens.is_cpu()) return cuda_unpatchify(tokens, patch, C, T, H, W, out_dtype);
  check_cpu_f32(tokens, "unpatchify", "tokens");
  const int64_t S = (T / patch[0]) * (H / patch[1]) * (W / patch[2]);
  VGEN_ASSERT(T % patch[0] == 0 && H % patch[1] == 0 && W % patch[2] == 0 && tokens.ndim() == 3 &&
                  tokens.dim(1) == S && tokens.dim(2) == C * patch[0] * patch[1] * patch[2],
              "unpatchify: tokens {} for C={} T={} H={} W={} and patch [{}, {}, {}]", tokens.str(), C, T, H, W,
              patch[0], patch[1], patch[2]);
  Tensor out = Tensor::empty({tokens.dim(0), C, T, H, W}, DType::kF32);
  kern::unpatchify_ref(tokens.f32(), out.f32(), tokens.dim(0), C, T, H, W, patch[0], patch[1], patch[2]);
  return cast(out, out_dtype);
}

}  // namespace vgen
