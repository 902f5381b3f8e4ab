// RoPE tables of the Wan DiT (wan_spec.md §1.4.1): per-axis cos/sin computed in float64 and stored
// as float32, split [t | h | w] over the head dim, positions from the GLOBAL token index so a
// sequence shard gets exactly the rows of the full tables.
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/tensor.h"
#include "model/wan/dit/transformer_config.h"

namespace vgen {

class WanRopeTables {
 public:
  explicit WanRopeTables(const WanTransformerConfig& cfg, double theta = 10000.0);

  // cos, sin [count, Dh] for global tokens [begin, begin + count) of the post-patch grid
  // (frames, rows, cols), f-major then h then w. Padding tokens (>= frames·rows·cols) get the
  // identity rotation (cos 1, sin 0). Throws kInput when an axis exceeds rope_max_seq_len.
  void make(int64_t frames, int64_t rows, int64_t cols, int64_t begin, int64_t count, Tensor& cos, Tensor& sin) const;

 private:
  int head_dim_ = 0, dt_ = 0, dh_ = 0, dw_ = 0;
  int64_t max_len_ = 0;
  // Per axis [max_len, d] repeat-interleaved tables.
  std::vector<float> cos_t_, sin_t_, cos_h_, sin_h_, cos_w_, sin_w_;
};

// The RoPE rows of the last shard a model's forwards asked for (the same every denoising step),
// on the forwards' device: made, and uploaded, once per shard. Thread-safe.
class WanRopeRows {
 public:
  explicit WanRopeRows(const WanTransformerConfig& cfg) : tables_(cfg) {}
  // cos, sin [count, Dh] f32 on `dev` (WanRopeTables::make), shared with later calls: read-only.
  void rows(int64_t frames, int64_t rows, int64_t cols, int64_t begin, int64_t count, Device dev, Tensor& cos,
            Tensor& sin) const;

 private:
  WanRopeTables tables_;
  mutable std::mutex mu_;
  mutable int64_t key_[6] = {-1, -1, -1, -1, -1, -1};
  mutable Tensor cos_, sin_;
};

}  // namespace vgen
