#include "model/wan/dit/transformer.h"

#include "core/log.h"
#include "io/safetensors.h"
#include "ops/fp8.h"
#include "parallel/local_attention.h"

namespace vgen {

std::unique_ptr<WanTransformer> WanTransformer::load(const std::string& component_dir) {
  return load(component_dir, WeightStore::open(component_dir));
}

std::unique_ptr<WanTransformer> WanTransformer::stream_to_device(const std::string& component_dir,
                                                                 WeightStream& stream, int component,
                                                                 const WanDeviceOptions& options) {
  WanTransformerConfig cfg = WanTransformerConfig::load(component_dir);
  WanTransformerWeights none;  // no host weights: every call goes to the device model
  none.blocks.resize(size_t(cfg.num_layers));
  auto model = std::make_unique<WanTransformer>(cfg, std::move(none));
  model->device_ = WanDeviceModel::stream(cfg, stream, component, options);
  return model;
}

std::unique_ptr<WanTransformer> WanTransformer::load(const std::string& component_dir, const WeightStore& store) {
  WanTransformerConfig cfg = WanTransformerConfig::load(component_dir);
  WanTransformerWeights w = load_wan_transformer_weights(store, cfg);
  log_debug("{}: transformer D={} layers={} heads={}, {:.1f} MiB of weights ({:.1f} MiB converted)", component_dir,
            cfg.dim(), cfg.num_layers, cfg.num_attention_heads, double(w.bytes) / 1048576.0,
            double(w.converted_bytes) / 1048576.0);
  return std::make_unique<WanTransformer>(cfg, std::move(w));
}

WanTransformer::WanTransformer(const WanTransformerConfig& cfg, WanTransformerWeights weights)
    : cfg_(cfg), w_(std::move(weights)), rope_(cfg) {
  VGEN_ASSERT(int(w_.blocks.size()) == cfg_.num_layers, "transformer weights have {} blocks, config {}",
              w_.blocks.size(), cfg_.num_layers);
}

int64_t WanTransformer::num_tokens(const Shape& s) const {
  const auto& p = cfg_.patch_size;
  VGEN_CHECK(s.size() == 5 && s[1] == cfg_.in_channels && s[2] % p[0] == 0 && s[3] % p[1] == 0 && s[4] % p[2] == 0,
             ExitCode::kInput,
             "transformer input must be [B, {}, T, H, W] with T, H, W divisible by the patch [{}, {}, {}]; got {}",
             cfg_.in_channels, p[0], p[1], p[2], shape_str(s));
  return (s[2] / p[0]) * (s[3] / p[1]) * (s[4] / p[2]);
}

// When some block quantises at some step, the model's fp32 linears run row by row (LinearRows):
// meshes splitting the tokens then round what is quantised as one rank does on any BLAS, the bf16
// steps' too (bf16_first_steps), whose last bits the next fp8 step would round. A model that never
// quantises (none enabled, every block in bf16_blocks) keeps the plain GEMM.
bool WanTransformer::fp8_quantises() const {
  const Fp8Switches configured{fp8_.attention, fp8_.gemm, fp8_.qk_int8, 0, fp8_.gemm_format};
  for (size_t i = 0; i < w_.blocks.size(); ++i)
    if (fp8_.block_switches(int64_t(i), int64_t(w_.blocks.size()), configured).any()) return true;
  return false;
}

LinearRows WanTransformer::linear_rows() const {
  return fp8_quantises() || row_wise_linears_ ? LinearRows::kRowByRow : LinearRows::kBatched;
}

WanForwardContext WanTransformer::host_context() const {
  return {cfg_, w_, *this, rope_, fp8_, Device::kCPU, WanBlockFusion{}, linear_rows(), attention_, host_dwdp_ != nullptr,
          nullptr};
}

TextContext WanTransformer::prepare_text(const Tensor& encoder_hidden_states, const Tensor& image_tokens) const {
  if (device_) return device_->prepare_text(encoder_hidden_states, image_tokens);
  return wan_prepare_text(host_context(), encoder_hidden_states, image_tokens);
}

std::unique_ptr<Conditioning> WanTransformer::prepare(const Tensor& prompt_embeds, const Tensor& image_tokens) const {
  return std::make_unique<TextContext>(prepare_text(prompt_embeds, image_tokens));
}

void WanTransformer::set_attention(const AttentionConfig& attention) {
  attention_ = attention;
  if (device_) device_->set_attention(attention);
}

void WanTransformer::set_profiler(DitPhaseProfiler* profiler) const {
  if (device_) device_->set_profiler(profiler);
}

Tensor WanTransformer::forward_local(const Tensor& latents, const Tensor& timestep, const Conditioning& cond,
                                     const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache,
                                     const StepPolicy& step) const {
  const auto* text_ptr = dynamic_cast<const TextContext*>(&cond);
  VGEN_ASSERT(text_ptr != nullptr, "WanTransformer::forward_local: the conditioning is not a Wan TextContext");
  const TextContext& text = *text_ptr;
  if (device_) return device_->forward_local(latents, timestep, text, layout, attention, cache, step);
  return wan_forward_local(host_context(), latents, timestep, text, layout, attention, cache, step);
}

Tensor WanTransformer::unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const {
  if (device_) return device_->unpatchify(tokens, T, H, W);
  return wan_unpatchify(host_context(), tokens, T, H, W);
}

Tensor WanTransformer::forward(const Tensor& latents, const Tensor& timestep, const Tensor& encoder_hidden_states,
                               const StepPolicy& step) const {
  const int64_t S = num_tokens(latents.shape());
  TextContext text = prepare_text(encoder_hidden_states);
  SeqLayout layout = SeqLayout::make(S, 1, 0);
  auto attention = make_local_attention();
  Tensor tokens = forward_local(latents, timestep, text, layout, *attention, nullptr, step);  // [B, S, P·C_out]
  return unpatchify(tokens, latents.dim(2), latents.dim(3), latents.dim(4));
}

void WanTransformer::enable_fp8(const WanFp8Options& options) {
  VGEN_CHECK(!fp8_.any(), ExitCode::kInternal, "enable_fp8: the transformer is already set up for precision fp8");
  options.blocks().check(int64_t(cfg_.num_layers));
  if (device_) {
    device_->enable_fp8(options);
  } else if (options.gemm && !host_dwdp_) {
    const int64_t n = int64_t(w_.blocks.size());
    for (int64_t i = 0; i < n; ++i)
      if (options.blocks().gemm_in_fp8(i, n))
        for_each_fp8_linear(w_.blocks[size_t(i)], [&](WanLinear& l, int k) {
          if ((options.bf16_linears >> k) & 1u) return;  // fp8_config.bf16_linears: no quantised copy
          Fp8Weight q = fp8_quantize_weight(l.w, options.gemm_format);  // per output channel, fp32 weights kept
          l.w8 = std::move(q.w8);
          l.w_scale = std::move(q.scale);
        });
  }
  fp8_ = options;
}

void WanTransformer::to_device(const WanDeviceOptions& options, bool keep_host_weights) {
  if (!device_) {
    device_ = WanDeviceModel::upload(cfg_, w_, options);
    device_->set_attention(attention_);
    if (fp8_.any()) device_->enable_fp8(fp8_);
  }
  if (!keep_host_weights) {
    WanTransformerWeights none;
    none.blocks.resize(w_.blocks.size());
    w_ = std::move(none);
  }
}

std::unique_ptr<WanTransformer> WanTransformer::random_on_device(const WanTransformerConfig& cfg,
                                                                 const WanDeviceOptions& options, uint64_t seed) {
  WanTransformerWeights none;  // no host weights: every call goes to the device model
  none.blocks.resize(size_t(cfg.num_layers));
  auto model = std::make_unique<WanTransformer>(cfg, std::move(none));
  model->device_ = WanDeviceModel::random(cfg, options, seed);
  return model;
}

}  // namespace vgen
