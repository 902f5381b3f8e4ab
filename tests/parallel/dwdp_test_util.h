// Shared by the DWDP test programs (dwdp_test on GPUs, dwdp_host_test over MPI): random host
// inputs and one single-rank DiT prediction (self group, local attention).
#pragma once
#include <random>

#include <string>

#include "dist/communicator.h"
#include "mesh_test_main.h"
#include "model/wan/dit/transformer.h"
#include "parallel/local_attention.h"
#include "model/dit_step.h"

namespace vgen::dwdp_test {

inline Tensor random_host(const Shape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  Tensor t = Tensor::empty(s, DType::kF32);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = d(rng);
  return t;
}

inline Tensor predict(const WanTransformer& m, const Tensor& x, const Tensor& t, const Tensor& ctx) {
  auto self = make_self_communicator();
  auto attn = make_local_attention();
  TextContext text = m.prepare_text(ctx);
  return dit_predict(m, x, t, text, *self, *attn);
}

// Fails at the first element where the DWDP prediction differs from the whole model's (bit for bit).
inline void expect_identical(const float* whole, const float* dwdp, int64_t n, const std::string& what) {
  for (int64_t i = 0; i < n; ++i)
    if (!(whole[i] == dwdp[i]))
      fail(fmt::format("{}: element {} is {} with DWDP, {} without", what, i, dwdp[i], whole[i]));
}

}  // namespace vgen::dwdp_test
