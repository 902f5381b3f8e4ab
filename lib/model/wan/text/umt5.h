// UMT5 / T5 encoder stack (transformers UMT5EncoderModel / T5EncoderModel, eval), CPU fp32:
// embedding (no scaling) → per block: T5 RMS norm, self-attention without 1/√d scaling plus the
// relative position bias (per layer for UMT5, layer 0's shared for T5), masked keys excluded,
// residual; T5 RMS norm, (gated) activation FFN, residual → final RMS norm.
#pragma once
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/wan/text/umt5_config.h"

namespace vgen {

struct Umt5Layer {
  Tensor q, k, v;        // [inner, D]
  Tensor o;              // [D, inner]
  Tensor rel_bias;       // [num_buckets, H]; undefined: layer 0's is used (T5)
  Tensor ln_attn;        // [D]
  Tensor wi0, wi1;       // [F, D]: gated: wi_0 (activation), wi_1 (linear); else wi0 = wi, wi1 undefined
  Tensor wo;             // [D, F]
  Tensor ln_ffn;         // [D]
};

// One sequence: all rows of `ids` are encoded as queries, the first `num_valid` rows are the keys
// (attention_mask = 1 on [0, num_valid), right padding). Rows past num_valid exist only when the
// caller wants the encoder output at padded positions (as transformers computes it).
struct Umt5Sequence {
  std::vector<int64_t> ids;
  int64_t num_valid = 0;
};

// The text encoder's checkpoint tensor `name` as stored, checked (present, shape `expect`, a float
// dtype), else kModel naming the file, tensor and shape.
Tensor umt5_weight(const WeightStore& ws, const std::string& name, const Shape& expect);

class Umt5Encoder {
 public:
  // `dir` = the text_encoder folder (config.json + safetensors, single or sharded).
  static Umt5Encoder load(const std::string& dir);
  // Weights in F32 are used in place (mmap views); BF16/F16 are converted to F32 once here.
  Umt5Encoder(const Umt5Config& cfg, const WeightStore& weights);

  const Umt5Config& config() const { return cfg_; }
  int64_t embedding_rows() const { return embed_.dim(0); }
  // Final hidden states of every sequence's rows, stacked: [Σ ids.size(), D].
  Tensor forward(const std::vector<Umt5Sequence>& seqs) const;

 private:
  Umt5Config cfg_;
  Tensor embed_;  // [vocab, D]
  std::vector<Umt5Layer> layers_;
  Tensor final_ln_;  // [D]
};

}  // namespace vgen
