#include "parallel/local_attention.h"

#include <algorithm>
#include <mutex>

#include "parallel/block_attention.h"
#include "parallel/ulysses.h"  // check_seq_inputs

namespace vgen {

Tensor LocalAttention::forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                                const AttentionPolicy& policy) {
  VGEN_ASSERT(layout.degree == 1, "LocalAttention used with sequence-parallel degree {} (rank {})", layout.degree,
              layout.seq_rank);
  check_seq_inputs(q, k, v, layout, "LocalAttention");
  const int64_t valid = std::clamp<int64_t>(layout.tokens - layout.begin(), 0, layout.local());
  Tensor out = Tensor::empty(q.shape(), q.is_cpu() ? DType::kF32 : q.dtype(), q.device());  // [B, S, H, Dh]
  block_attention(q, k, v, valid, out, nullptr, policy);
  return out;
}

std::unique_ptr<SeqAttention> make_local_attention() { return std::make_unique<LocalAttention>(); }

namespace {
std::mutex g_factory_mutex;
SeqAttentionFactory g_factory;
}  // namespace

void set_seq_attention_factory(SeqAttentionFactory factory) {
  std::lock_guard<std::mutex> lock(g_factory_mutex);
  g_factory = std::move(factory);
}

SeqAttentionFactory seq_attention_factory() {
  std::lock_guard<std::mutex> lock(g_factory_mutex);
  return g_factory;
}

}  // namespace vgen
