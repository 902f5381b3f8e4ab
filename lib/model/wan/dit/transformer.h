// WanTransformer3DModel (wan_spec.md §1.4), written for sequence sharding: each rank embeds and
// transforms only its contiguous token shard [layout.begin(), layout.end()); self-attention goes
// through a SeqAttention (local, Ulysses, Ring, Attention2D); cross-attention runs locally against
// text K/V prepared once per prompt; the shard leaves as proj_out tokens [B, S_loc, pt·ph·pw·C_out]
// (64 channels per token for Wan), which the caller gathers and unpatchifies.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "model/first_block_cache.h"
#include "model/model.h"
#include "model/wan/dit/block_policy.h"
#include "model/wan/dit/rope_tables.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/dit/transformer_device.h"
#include "model/wan/dit/transformer_forward.h"
#include "model/wan/dit/transformer_weights.h"
#include "parallel/seq_attention.h"

namespace vgen {

// Text conditioning of one prompt batch, reused at every denoising step (the seam's Conditioning).
struct TextContext final : Conditioning {
  int64_t batch = 0;
  int64_t length = 0;     // L text positions (all attended, no mask)
  std::vector<Tensor> k;  // per block: [B, L, H, Dh], to_k(ctx) after norm_k
  std::vector<Tensor> v;  // per block: [B, L, H, Dh], to_v(ctx)
  // The image path: per block the image tokens' K (add_k_proj, norm_added_k) and V (add_v_proj)
  // [B, L_img, H, Dh]; empty without image tokens.
  int64_t image_length = 0;
  std::vector<Tensor> image_k, image_v;
};

class WanTransformer final : public Denoiser, private WanBlockSource {
 public:
  // Loads <component_dir>/config.json and its safetensors (single file or sharded index).
  static std::unique_ptr<WanTransformer> load(const std::string& component_dir);
  // The same from weights already opened (e.g. read into host memory by a WeightStream).
  static std::unique_ptr<WanTransformer> load(const std::string& component_dir, const WeightStore& store);
  // A model whose weights go straight to the current device: requested from component `component`
  // of `stream` (dist/weight_stream.h), usable once stream.run() has returned. No host weights.
  static std::unique_ptr<WanTransformer> stream_to_device(const std::string& component_dir, WeightStream& stream,
                                                          int component, const WanDeviceOptions& options);
  WanTransformer(const WanTransformerConfig& cfg, WanTransformerWeights weights);

  const WanTransformerConfig& config() const { return cfg_; }
  const WanTransformerWeights& weights() const { return w_; }

  // Post-patch token count S = (T/pt)·(H/ph)·(W/pw) of latents [B, C, T, H, W] (shape checked).
  int64_t num_tokens(const Shape& latents_shape) const override;
  int64_t out_channels() const override { return cfg_.out_channels; }

  // encoder_hidden_states [B, L, text_dim] → text embedder + per-block cross-attention K and V;
  // image_tokens (the image path, transformer_forward.h) add the image K and V.
  TextContext prepare_text(const Tensor& encoder_hidden_states, const Tensor& image_tokens = Tensor()) const;
  std::unique_ptr<Conditioning> prepare(const Tensor& prompt_embeds,
                                        const Tensor& image_tokens = Tensor()) const override;

  // latents [B, C_in, T, H, W] (full, identical on every rank), timestep [B] f32 (or i64), or [B, S]
  // one per post-patch token (Wan 2.2 TI2V; this rank reads its tokens' columns).
  // Returns this rank's proj_out tokens [B, layout.local(), pt·ph·pw·C_out] for global tokens
  // [layout.begin(), layout.end()); rows of padding tokens (>= layout.tokens) are meaningless.
  // `cache` (may be null): the first-block cache of this stream (first_block_cache.h); enabled, it
  // may skip every block after the first.
  // `cond` is a TextContext of prepare_text; `step.fp8` false runs the step wholly in bf16.
  Tensor forward_local(const Tensor& latents, const Tensor& timestep, const Conditioning& cond,
                       const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache = nullptr,
                       const StepPolicy& step = {}) const override;

  // tokens [B, S, pt·ph·pw·C_out] (padding removed) → [B, C_out, T, H, W] (latent frame/size).
  Tensor unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const override;

  // Single rank: forward_local over all tokens with local attention, then unpatchify.
  Tensor forward(const Tensor& latents, const Tensor& timestep, const Tensor& encoder_hidden_states,
                 const StepPolicy& step = {}) const;

  // The device kernels of this model's attention calls (attention_config: the backend and the key
  // split; the host runs the reference). Set at load; a later to_device carries it over.
  void set_attention(const AttentionConfig& attention);
  const AttentionConfig& attention() const { return attention_; }
  // The host's fp32 linears row by row even when this model quantises nothing (a model that
  // quantises always runs them so): for an fp32 reference that rounds as the fp8 model's bf16 steps.
  void set_row_wise_linears(bool on) { row_wise_linears_ = on; }

  // GPU execution (transformer_device.h). to_device uploads the weights once to the current CUDA
  // device (bf16: wan_spec §1.3 dtypes; f32: all fp32); from then on prepare_text, forward_local and
  // unpatchify run there: inputs may be host or device tensors, prepare_text returns device K/V,
  // forward_local device tokens in the compute dtype, unpatchify a device f32 tensor. The host
  // weights are released unless keep_host_weights.
  void to_device(const WanDeviceOptions& options, bool keep_host_weights = false);
  // A model with random device weights of cfg's shapes and no host weights (benchmarks).
  static std::unique_ptr<WanTransformer> random_on_device(const WanTransformerConfig& cfg,
                                                          const WanDeviceOptions& options, uint64_t seed);
  bool on_device() const override { return device_ != nullptr; }
  void set_profiler(DitPhaseProfiler* profiler) const override;
  // precision fp8 (docs/fp8.md): from now on forward_local runs the self-attention (options.attention)
  // and the block linears of for_each_fp8_linear (options.gemm) in FP8 e4m3 on the denoising steps
  // where fp8_step_enabled() (ops/fp8.h). Call once the weights are final (after LoRA merges).
  // options.gemm quantises those linears per output channel: on the device, into e4m3 + fp32
  // scales (WanDeviceModel::enable_fp8, which frees the bf16 weights unless keep_weights); on the
  // host (the CPU emulation), into e4m3 copies beside the fp32 weights, except under host DWDP,
  // whose staged blocks are quantised at each use (the same values). A later to_device carries the
  // options over.
  void enable_fp8(const WanFp8Options& options);
  const WanFp8Options& fp8_options() const { return fp8_; }
  // DWDP on the host (parallel/dwdp.h): this rank keeps 1/N of the block weights in an MPI window
  // and assembles each block it lacks during each pass; the blocks' host tensors are dropped. Collective over
  // MPI_COMM_WORLD (`world` has its ranks). Before to_device is never needed: the device model
  // has its own DWDP (WanDeviceOptions::dwdp_size).
  void enable_host_dwdp(int dwdp_size, const Communicator& world);
  const WanDeviceModel* device_model() const { return device_.get(); }
  // In-place updates at load, before the first use (LoRA merge, model/wan/dit/lora.h).
  WanDeviceModel* mutable_device_model() { return device_.get(); }
  WanTransformerWeights& mutable_weights() { return w_; }

 private:
  WanTransformerConfig cfg_;
  WanTransformerWeights w_;
  WanRopeRows rope_;
  std::shared_ptr<WanDeviceModel> device_;  // set by to_device / random_on_device
  std::shared_ptr<DwdpHostWeights> host_dwdp_;  // null without host DWDP
  WanFp8Options fp8_;                           // precision fp8 (enable_fp8); none by default
  WanBlockWeights host_staged_[2];              // views of its staging slots
  bool fp8_quantises() const;  // whether some block runs some part in fp8 (at the steps that do)
  LinearRows linear_rows() const;  // how the host's fp32 linears run (fp8_quantises, row_wise_linears_)
  AttentionConfig attention_;
  bool row_wise_linears_ = false;
  // The host's forwards (transformer_forward.h): fp32, no fusion, no profiler.
  WanForwardContext host_context() const;
  // WanBlockSource of the host forwards: a block's weights, or with host DWDP its staged copy.
  const WanBlockWeights& block_begin(size_t i) const override;
  void block_end(size_t i) const override;
};

}  // namespace vgen
