// Host tensors for the sequence-parallel attention tests (attention_parallel_test,
// fp8_attention_parallel_test): random [B, S, H, D] data, the padded sequence a mesh runs, one
// rank's shard of it, and grouped K/V heads repeated for the oracle.
#pragma once
#include <cstring>
#include <random>

#include "core/tensor.h"
#include "kernels/gqa/repeat_kv_ref.h"

namespace vgen::test {

inline Tensor random_tensor(const Shape& s, std::mt19937_64& rng, float scale) {
  Tensor t = Tensor::empty(s, DType::kF32);
  std::uniform_real_distribution<float> d(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = d(rng);
  return t;
}

// [B, S, H, D] -> [B, Sp, H, D], the pad rows random in ±pad_scale: large garbage, so a pad key
// that leaks into the softmax shows.
inline Tensor pad_seq(const Tensor& t, int64_t Sp, std::mt19937_64& rng, float pad_scale) {
  const int64_t B = t.dim(0), S = t.dim(1), X = t.numel() / (B * S);
  Tensor p = random_tensor({B, Sp, t.dim(2), t.dim(3)}, rng, pad_scale);
  for (int64_t b = 0; b < B; ++b) std::memcpy(p.f32() + b * Sp * X, t.f32() + b * S * X, size_t(S * X) * 4);
  return p;
}

// Tokens [begin, begin + L) of [B, Sp, H, D].
inline Tensor shard_seq(const Tensor& t, int64_t begin, int64_t L) {
  const int64_t B = t.dim(0), Sp = t.dim(1), X = t.dim(2) * t.dim(3);
  Tensor s = Tensor::empty({B, L, t.dim(2), t.dim(3)}, DType::kF32);
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(s.f32() + b * L * X, t.f32() + (b * Sp + begin) * X, size_t(L * X) * 4);
  return s;
}

// Grouped K/V heads [B, S, KVH, D] repeated to [B, S, H, D] (head h = KV head h / (H / KVH)): the
// one-rank oracle of the grouped-head attentions.
inline Tensor repeat_heads(const Tensor& kv, int64_t H) {
  const int64_t B = kv.dim(0), S = kv.dim(1), KVH = kv.dim(2), D = kv.dim(3);
  Tensor r = Tensor::empty({B, S, H, D}, DType::kF32);
  kern::repeat_kv_ref(kv.f32(), r.f32(), B * S, KVH, H / KVH, D);
  return r;
}

}  // namespace vgen::test
