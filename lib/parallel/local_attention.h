// Single-rank self-attention over the whole (padded) sequence, and the SeqAttention factory hook
// the DiT runners use to pick the parallel algorithm for a mesh.
#pragma once
#include <functional>
#include <memory>

#include "parallel/seq_attention.h"

namespace vgen {

struct Mesh;

// Degree-1 layouts only: every query sees every real key; padding keys (global index >=
// layout.tokens) get zero weight.
class LocalAttention : public SeqAttention {
 public:
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                 const AttentionPolicy& policy) override;
  // The sequence block (pad keys excluded), then the prefix block merged in through the LSE
  // (defined in prefix_attention.cpp).
  Tensor forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                          const SeqLayout& layout, const AttentionPolicy& policy) override;
};

std::unique_ptr<SeqAttention> make_local_attention();

// Builds the SeqAttention of a mesh's sequence group (Ulysses / Ring / Attention2D / local).
using SeqAttentionFactory = std::function<std::unique_ptr<SeqAttention>(Mesh&)>;

// Process-wide override hook (tests, experiments): when set, the golden runners build their
// SeqAttention with it instead of make_seq_attention(mesh, recipe.attention). Empty by default;
// set an empty function to clear it.
void set_seq_attention_factory(SeqAttentionFactory factory);
SeqAttentionFactory seq_attention_factory();  // the registered hook, or an empty function

}  // namespace vgen
