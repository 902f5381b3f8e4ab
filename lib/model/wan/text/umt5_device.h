// UMT5 / T5 encoder on the GPU (wan_spec.md §2.3): the same forward as Umt5Encoder (umt5.h) with
// the weights uploaded once to the current device and every activation on the device.
//
// Precision bf16 is transformers' bf16 forward: bf16 weights and activations, T5 RMS norm with an
// fp32 statistic (y = bf16(w · bf16(x·rs))), bf16 GEMM outputs (fp32 accumulation), scores
// bf16(bf16(q·k) + bias) with an fp32 softmax rounded to bf16, gelu_new as eager bf16 ops,
// bf16 residual adds. Precision fp32 keeps everything fp32 (no TF32), for validation against the
// CPU encoder.
//
// The class is declared in every build; its constructor and forward are defined in
// umt5_device_cuda.cpp, which only CUDA builds compile (callers guard with VGEN_WITH_CUDA).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/safetensors.h"
#include "model/wan/text/umt5.h"
#include "model/wan/text/umt5_config.h"

namespace vgen {

class WeightStream;  // dist/weight_stream.h

struct Umt5DeviceOptions {
  DType dtype = DType::kBF16;  // compute dtype of weights and activations: kBF16 or kF32
};

class Umt5DeviceEncoder {
 public:
  // `dir` = the text_encoder folder (config.json + safetensors, single or sharded).
  static std::unique_ptr<Umt5DeviceEncoder> load(const std::string& dir, const Umt5DeviceOptions& options);
  // Reads the weights (f32, bf16 or f16 files) to the current device in options.dtype, converted
  // there. Without `stream` a stream of this rank alone loads them here; with one, they are requested
  // from its component `component` and in place once stream->run() has returned.
  Umt5DeviceEncoder(const Umt5Config& cfg, const WeightStore& weights, const Umt5DeviceOptions& options,
                    WeightStream* stream = nullptr, int component = -1);

  const Umt5Config& config() const { return cfg_; }
  DType dtype() const { return opt_.dtype; }
  int64_t embedding_rows() const { return embed_.dim(0); }
  size_t weight_bytes() const { return weight_bytes_; }

  // Same contract as Umt5Encoder::forward: final hidden states of every sequence's rows, stacked,
  // as a host f32 tensor [Σ ids.size(), D].
  Tensor forward(const std::vector<Umt5Sequence>& seqs) const;
  // The same on the device, in the compute dtype: [Σ ids.size(), D].
  Tensor forward_device(const std::vector<Umt5Sequence>& seqs) const;

 private:
  Umt5Config cfg_;
  Umt5DeviceOptions opt_;
  Tensor embed_;                    // [vocab, D] device
  std::vector<Umt5Layer> layers_;   // device tensors; rel_bias undefined past layer 0 for T5
  Tensor final_ln_;                 // [D] device
  size_t weight_bytes_ = 0;
};

}  // namespace vgen
