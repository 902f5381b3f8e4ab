// Picks the self-attention implementation for this rank's mesh (parallel_reference.md §2.7):
// CP inner (Ring if ring_size > 1, Attention2D if attn2d rows·cols > 1), Ulysses outer when
// ulysses_size > 1, local attention on a single sequence rank.
#pragma once
#include <memory>

#include "config/attention_config.h"
#include "dist/mesh.h"
#include "parallel/seq_attention.h"

namespace vgen {

std::unique_ptr<SeqAttention> make_seq_attention(Mesh& mesh, const AttentionConfig& config);

}  // namespace vgen
