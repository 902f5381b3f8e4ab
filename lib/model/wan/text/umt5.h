// UMT5 / T5 encoder stack (transformers UMT5EncoderModel / T5EncoderModel, eval), one forward for
// the host fp32 oracle and the GPU (wan_spec.md §2.3) through the device-dispatching ops of ops/:
// embedding (no scaling) → per block: T5 RMS norm, self-attention without 1/√d scaling plus the
// relative position bias (per layer for UMT5, layer 0's shared for T5), masked keys excluded,
// residual; T5 RMS norm, (gated) activation FFN, residual → final RMS norm.
//
// On the device, precision bf16 is transformers' bf16 forward: bf16 weights and activations, T5 RMS
// norm with an fp32 statistic (y = bf16(w · bf16(x·rs))), bf16 GEMM outputs (fp32 accumulation),
// scores bf16(bf16(q·k) + bias) with an fp32 softmax rounded to bf16, gelu_new as eager bf16 ops,
// bf16 residual adds. Precision fp32 keeps everything fp32 (no TF32), for validation against the
// host.
#pragma once
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/wan/text/umt5_config.h"
#include "ops/linear_layer.h"

namespace vgen {

class WeightStream;  // dist/weight_stream.h

struct Umt5Layer {
  LinearWeights q, k, v;   // w [inner, D]
  LinearWeights o;         // w [D, inner]
  Tensor rel_bias;         // [num_buckets, H]; undefined: layer 0's is used (T5)
  Tensor ln_attn;          // [D]
  LinearWeights wi0, wi1;  // w [F, D]: gated: wi_0 (activation), wi_1 (linear); else wi0 = wi, wi1 undefined
  LinearWeights wo;        // w [D, F]
  Tensor ln_ffn;           // [D]
};

// One sequence: all rows of `ids` are encoded as queries, the first `num_valid` rows are the keys
// (attention_mask = 1 on [0, num_valid), right padding). Rows past num_valid exist only when the
// caller wants the encoder output at padded positions (as transformers computes it).
struct Umt5Sequence {
  std::vector<int64_t> ids;
  int64_t num_valid = 0;
};

struct Umt5Options {
  Device device = Device::kCPU;  // kCUDA: weights and activations on the current GPU (CUDA builds)
  DType dtype = DType::kF32;     // compute dtype: kF32 on the host; kBF16 or kF32 on the device
};

// The text encoder's checkpoint tensor `name` as stored, checked (present, shape `expect`, a float
// dtype), else kModel naming the file, tensor and shape.
Tensor umt5_weight(const WeightStore& ws, const std::string& name, const Shape& expect);

class Umt5Encoder {
 public:
  // `dir` = the text_encoder folder (config.json + safetensors, single or sharded).
  static Umt5Encoder load(const std::string& dir, const Umt5Options& options = {});
  // Host: F32 weights are used in place (mmap views), BF16/F16 are converted to F32 once here.
  // Device: the weights (f32, bf16 or f16 files) go to the current device in options.dtype,
  // converted there; without `stream` a stream of this rank alone loads them here, with one they
  // are requested from its component `component` and in place once stream->run() has returned.
  Umt5Encoder(const Umt5Config& cfg, const WeightStore& weights, const Umt5Options& options = {},
              WeightStream* stream = nullptr, int component = -1);

  const Umt5Config& config() const { return cfg_; }
  Device device() const { return opt_.device; }
  DType dtype() const { return opt_.dtype; }
  int64_t embedding_rows() const { return embed_.dim(0); }
  size_t weight_bytes() const { return weight_bytes_; }
  // Final hidden states of every sequence's rows, stacked, as a host f32 tensor [Σ ids.size(), D].
  Tensor forward(const std::vector<Umt5Sequence>& seqs) const;
  // The same on the encoder's device in its compute dtype: [Σ ids.size(), D].
  Tensor forward_device(const std::vector<Umt5Sequence>& seqs) const;

 private:
  Umt5Config cfg_;
  Umt5Options opt_;
  Tensor embed_;  // [vocab, D]
  std::vector<Umt5Layer> layers_;
  Tensor final_ln_;  // [D]
  size_t weight_bytes_ = 0;
};

}  // namespace vgen
