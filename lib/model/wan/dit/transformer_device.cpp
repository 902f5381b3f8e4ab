// The device DiT's placement and its forwards (transformer_forward.h with the device's context).
// Built in both configurations: the device ops throw kUsage in a CPU-only build.
#include "model/wan/dit/transformer_device.h"

#include <exception>

#include "model/wan/dit/transformer.h"

namespace vgen {

WanDeviceModel::WanDeviceModel(const WanTransformerConfig& cfg, WanTransformerWeights device_weights,
                               const WanDeviceOptions& options)
    : cfg_(cfg), w_(std::move(device_weights)), opt_(options), rope_(cfg) {
  VGEN_CHECK(opt_.dtype == DType::kBF16 || opt_.dtype == DType::kF32, ExitCode::kUsage,
             "the device DiT computes in bf16 or fp32, not {}", dtype_name(opt_.dtype));
  VGEN_ASSERT(int(w_.blocks.size()) == cfg_.num_layers, "device weights have {} blocks, config {}", w_.blocks.size(),
              cfg_.num_layers);
  VGEN_ASSERT(w_.patch_embedding.w.defined() && !w_.patch_embedding.w.is_cpu(),
              "WanDeviceModel needs device weights");
  weight_bytes_ = w_.bytes;
}

WanDeviceModel::~WanDeviceModel() {
  if (!dwdp_ || !opt_.world || std::uncaught_exceptions() > 0) return;
  try {
    sync_compute_stream();
    opt_.world->barrier();
  } catch (...) {
    // Teardown: a failed barrier means the job is ending anyway (a peer died or aborted).
  }
}

void WanDeviceModel::set_dwdp(std::shared_ptr<DwdpDeviceWeights> weights, WanBlockWeights staged0,
                              WanBlockWeights staged1) {
  dwdp_ = std::move(weights);
  staged_[0] = std::move(staged0);
  staged_[1] = std::move(staged1);
  weight_bytes_ = w_.bytes + dwdp_->device_bytes();  // w_'s blocks are none or views of the arena
}

const WanBlockWeights& WanDeviceModel::block_begin(size_t i) const {
  if (!dwdp_) return w_.blocks[i];
  const int s = dwdp_->acquire(int(i));
  return s < 0 ? w_.blocks[i] : staged_[s];
}

void WanDeviceModel::block_end(size_t i) const {
  if (dwdp_) dwdp_->release(int(i));
}

WanForwardContext WanDeviceModel::context() const {
  const WanBlockFusion fusion{opt_.dtype, opt_.fused_gelu, opt_.fused_residual_norm, opt_.fused_residual_gemm, false};
  return {cfg_, w_, *this, rope_, fp8_, Device::kCUDA, fusion, LinearRows::kBatched, attention_, dwdp_ != nullptr, prof_};
}

TextContext WanDeviceModel::prepare_text(const Tensor& encoder_hidden_states, const Tensor& image_tokens) const {
  return wan_prepare_text(context(), encoder_hidden_states, image_tokens);
}

Tensor WanDeviceModel::forward_local(const Tensor& latents, const Tensor& timestep, const TextContext& text,
                                     const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache,
                                     const StepPolicy& step) const {
  return wan_forward_local(context(), latents, timestep, text, layout, attention, cache, step);
}

Tensor WanDeviceModel::unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const {
  return wan_unpatchify(context(), tokens, T, H, W);
}

}  // namespace vgen
