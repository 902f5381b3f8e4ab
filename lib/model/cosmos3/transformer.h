// Cosmos3OmniTransformer (diffusers transformer_cosmos3.py) for video: the understanding tower runs
// once per prompt (prefill) and leaves its per-layer K/V; every denoising step runs the generation
// tower over the video tokens, whose queries attend to [prompt K/V | video K/V]. Written once over
// device-dispatching ops (host fp32 is the reference the goldens check; on the device the weights
// and activations are in the compute dtype, f32 or bf16, the time embedder f32). precision fp8:
// enable_fp8 (fp8_options.h).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "model/cosmos3/config.h"
#include "model/cosmos3/fp8_options.h"
#include "model/cosmos3/mrope.h"
#include "model/cosmos3/tower.h"
#include "model/cosmos3/und_stream.h"
#include "model/cosmos3/weights.h"
#include "parallel/dwdp.h"
#include "parallel/seq_attention.h"

namespace vgen {

// The understanding tower's keys (after the Q/K norm, or k_norm_und_for_gen, and RoPE; in the rope_
// pair layout of weights.h) and values of every layer for one prompt: [1, L, KVH, Dh] each. They
// depend on the prompt only, so every step (and every expert of a step) reuses them.
struct Cosmos3PromptKv {
  int64_t len = 0;
  std::vector<Tensor> k, v;
};

// One generation call: latents [1, C, T, H, W] (any float dtype), the step's timestep (the
// scheduler's value, scaled by timestep_scale inside), the noisy latent frames (ascending; the
// others are clean: no timestep embedding, zero velocity), the video's fps for the mRoPE time axis
// (nullopt: integer positions) and the VAE's temporal compression.
struct Cosmos3VideoInput {
  Tensor latents;
  float timestep = 0;
  std::vector<int64_t> noisy_frames;
  std::optional<double> fps;
  int temporal_compression = 4;
  bool fp8 = true;  // the step may run in fp8 (false: one of precision fp8's bf16 steps)
};

class Cosmos3Transformer {
 public:
  Cosmos3Transformer(Cosmos3Config cfg, Cosmos3Weights w, Device device, DType dtype);
  // Reads <dir>/config.json and the safetensors of <dir> (transformer/); device cuda: through a
  // weight stream of this rank alone (stream_to_device). `und_streamed` (device cuda): the
  // understanding tower in pinned host memory, streamed for each prefill (the host ignores it).
  static Cosmos3Transformer load(const std::string& dir, Device device, DType dtype, bool und_streamed = false);
  // The device model, its weights requested from `stream` (dist/weight_stream.h: read once per node
  // when the stream is shared, converted to `dtype` on the device) and in place after the stream's
  // run(), which this call makes (collective over the stream's node, as every rank's load).
  // `und_streamed`: the understanding tower read from the mapped files into pinned host memory
  // instead (text.device stream; each process its own copy), copied to the device per prefill.
  // `dwdp` (size > 1): the generation layers shared over the dwdp group (Cosmos3GenDwdp; collective
  // over dwdp.world too).
  static Cosmos3Transformer stream_to_device(const std::string& dir, WeightStream& stream, DType dtype,
                                             bool und_streamed = false, const Cosmos3DwdpOptions& dwdp = {});

  const Cosmos3Config& config() const { return cfg_; }
  const Cosmos3Weights& weights() const { return w_; }

  // precision fp8: the generation tower's linears quantised per output channel now (on the
  // weights' device; the device computes in bf16), its attention as `options` says; the forwards
  // run them so on the steps whose input says fp8. Once, before the model is shared.
  void enable_fp8(const Cosmos3Fp8Options& options);
  const Cosmos3Fp8Options& fp8() const { return fp8_; }

  // DWDP on the host (parallel/dwdp.h): the generation tower's layers are the blocks; this rank
  // keeps 1/N of them in an MPI window and assembles each layer it lacks during each pass; their
  // host tensors are dropped (precision fp8: their linears quantised at each use, the same values).
  // The understanding tower, embeddings, proj_in/out and the time embedder stay whole. Collective
  // over MPI_COMM_WORLD (`world` has its ranks); after enable_fp8, host only.
  void enable_host_dwdp(int dwdp_size, const Communicator& world);
  bool host_dwdp() const { return host_dwdp_ != nullptr; }

  // The understanding tower over the prompt ids (each in [0, vocab_size)); streamed (text.device
  // stream) its layers pass through two device slots, with the same K/V.
  Cosmos3PromptKv prefill(const std::vector<int64_t>& ids) const;
  bool und_streamed() const { return w_.und_host.streamed(); }
  // The velocity [1, C, T, H, W] f32 on the latents' device.
  Tensor forward(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in) const;
  // The velocity as this rank's padded patch tokens [1, layout.local(), p·p·C] f32 (global tokens
  // [layout.begin(), layout.end()) of the sequence padded to the layout's degree), zero on the clean
  // frames' tokens and on padding. attention null: one rank (layout degree 1); else the video K/V
  // go through it with the prompt K/V as its prefix.
  Tensor forward_tokens(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in, const SeqLayout& layout,
                        SeqAttention* attention) const;

  AttentionPolicy attention_policy;  // backend and key split of the device attention calls

 private:
  Tensor embed_prompt(const std::vector<int64_t>& ids) const;       // [1, L, D]
  Tensor timestep_embedding_row(float timestep) const;             // [1, D]
  Tensor embed_video(const Cosmos3VideoInput& in) const;            // [1, S, D]
  void check_input(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in) const;
  // Every generation layer and norm_moe_gen over x [1, S_loc, D] (rope: its [S_loc, Dh] tables);
  // fp8: the step may run in fp8.
  Tensor generation_tower(const Cosmos3PromptKv& prompt, Tensor x, const MropeTables& rope, const SeqLayout& layout,
                          SeqAttention* attention, bool fp8) const;
  // How a linear outside the generation layers runs (the compute dtype; the host's row order).
  LinearMode plain_mode() const;
  // How generation layer i runs its linears and its attention on a step that may run in fp8 (`fp8`).
  TowerModes generation_modes(size_t i, bool fp8) const;
  AttentionPolicy generation_attention(size_t i, bool fp8) const;
  MropeTables video_rope(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in) const;  // [S, Dh]
  // Generation layer i's weights for the ops queued next (DWDP: its staged copy, on the device the
  // compute stream waiting for its copies) until block_end(i).
  const Cosmos3Tower& block_begin(size_t i) const;
  void block_end(size_t i) const;

  Cosmos3Config cfg_;
  Cosmos3Weights w_;
  Device device_;
  DType dtype_;
  Cosmos3Fp8Options fp8_;
  std::shared_ptr<const Cosmos3UndStream> und_stream_;  // the prefill's copies when w_.und_host streams
  // The host's fp32 linears row by row once something quantises (ops/linear.h LinearRows): meshes
  // then round what is quantised as one rank does.
  LinearRows rows_ = LinearRows::kBatched;
  std::shared_ptr<DwdpHostWeights> host_dwdp_;  // null without host DWDP
  std::array<Cosmos3Tower, 2> host_staged_;     // views of its staging slots
};

}  // namespace vgen
