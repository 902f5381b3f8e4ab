// GPU execution of the Wan DiT (wan_spec.md §1): weights uploaded once, activations on the device
// between ops. Used through WanTransformer (to_device / random_on_device), which forwards
// prepare_text, forward_local and unpatchify here once the model is on the device.
//
// Precision bf16 follows §1.3/§1.4: bf16 weights except the fp32 time_embedder, scale_shift_tables
// and norm2; activations bf16 between ops with the rounding points of diffusers (LN/modulation,
// gated residuals, RMSNorm and RoPE in fp32 with one rounding each, temb rounded to bf16 before
// time_proj). Precision fp32 keeps everything fp32 (no TF32), for validation against the CPU path.
// Self-attention goes through the SeqAttention (LocalAttention → cuda_attention, or Ulysses / Ring /
// Attention2D over NCCL groups from dist/device_mesh.h); cross-attention runs locally against the
// device text K/V. Precision fp8 (enable_fp8, docs/fp8.md): bf16 as above, with the self-attention
// and the block linears in e4m3 on the steps the per-thread switches of ops/fp8.h allow.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cuda_stream.h"
#include "core/tensor.h"
#include "model/first_block_cache.h"
#include "model/model.h"
#include "model/phase_profiler.h"
#include "model/wan/dit/block_policy.h"
#include "model/wan/dit/rope_tables.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/dit/transformer_forward.h"
#include "model/wan/dit/transformer_weights.h"
#include "dist/communicator.h"
#include "ops/fp8.h"
#include "parallel/dwdp.h"
#include "parallel/seq_attention.h"

namespace vgen {

struct TextContext;  // model/wan/dit/transformer.h
class WeightStream;  // dist/weight_stream.h

// precision fp8 of a DiT (docs/fp8.md, ops/fp8.h): what its forwards run in e4m3 on the denoising
// steps that run in fp8 (StepPolicy); everything else as the compute dtype says.
struct WanFp8Options {
  bool attention = false;  // self-attention (cross-attention stays in the compute dtype)
  bool gemm = false;       // the block linears of for_each_fp8_linear, weights quantised at enable_fp8
  // Keep the original weights of the quantised linears beside the e4m3 copies: needed when some
  // steps run in bf16 (fp8_config.bf16_first_steps / bf16_last_steps). The device frees them
  // otherwise; the host (CPU emulation) always keeps its fp32 weights.
  bool keep_weights = true;
  bool qk_int8 = false;  // the self-attention's Q·Kᵀ in INT8 (fp8_config.attention_qk: int8), else e4m3
  // Of the quantised block linears (fp8_config.gemm_format, whose recipe default is int8).
  GemmFormat gemm_format = GemmFormat::kE4m3;
  // Blocks run wholly in bf16 at every step (fp8_config.bf16_blocks), and blocks whose linears run
  // in bf16 (fp8_config.bf16_gemm_blocks; their self-attention as `attention` says): indices,
  // negative ones from the end. The linears of either are not quantised.
  std::vector<int> bf16_blocks{};
  std::vector<int> bf16_gemm_blocks{};
  // Bit i: linear i of for_each_fp8_linear runs in bf16 in every block (fp8_config.bf16_linears,
  // wan_fp8_linear_mask); not quantised.
  uint8_t bf16_linears = 0;
  bool any() const { return attention || gemm; }
  Fp8BlockLists blocks() const& { return {bf16_blocks, bf16_gemm_blocks}; }
  Fp8BlockLists blocks() && = delete;  // a view: not of a temporary
  // Switches for block i of n under the forward's switches `s`.
  Fp8Switches block_switches(int64_t i, int64_t n, Fp8Switches s) const {
    return {s.attention && blocks().attention_in_fp8(i, n), s.gemm && blocks().gemm_in_fp8(i, n), s.qk_int8,
            uint8_t(s.bf16_linears | bf16_linears), s.gemm_format};
  }
};

struct WanDeviceOptions {
  DType dtype = DType::kBF16;  // compute dtype: kBF16 or kF32
  // GELU of the FFN and of the text embedder inside the GEMM epilogue (bf16: cuBLASLt's GELU+bias
  // epilogue; fp32: the separate epilogue kernel): one pass less over the ffn-wide activation (720p:
  // 2.1 GB per block; the elementwise phase 0.055 -> 0.041 s per 10 blocks on the H200,
  // results/gemm/1xh200/2026-11-30_h200_issue7_gelu_epilogue_3140037.json)
  // at the GEMM's own rate. Rounding: at most one bf16 rounding fewer than diffusers (which rounds
  // Linear1's output before the GELU) and cuBLASLt's tanh approximation (gemm.cuh). false: the
  // separate GELU pass, diffusers' rounding points.
  bool fused_gelu = true;
  // Each residual add runs inside the pass of the norm that reads x next (the same values, one
  // pass over x fewer); false runs them as separate ops (tests compare the two).
  bool fused_residual_norm = true;
  // Each residual add runs in the epilogue of the GEMM that makes the update (x += o·Wᵀ + b, in
  // place), and a gate g of the self-attention and FFN residuals is folded into a per-sample copy of
  // that GEMM's weight and bias (rows times g): the norms that follow read x alone. bf16: the
  // weight·gate product is rounded to bf16 where diffusers rounds the GEMM output before the gate.
  // Takes precedence over fused_residual_norm; false: the residual adds of fused_residual_norm.
  bool fused_residual_gemm = true;
  // DWDP (parallel/dwdp.h): with dwdp_size > 1 this GPU keeps 1/N of the block weights and
  // assembles each block it lacks from its group's GPUs before it runs; `world` (the host world
  // communicator) exchanges the arenas' handles when the weights are placed (collective: every rank
  // at the same point); `dwdp_transport` picks how they are shared (parallel_config.dwdp_transport).
  int dwdp_size = 1;
  DwdpTransport dwdp_transport = DwdpTransport::kAuto;
  std::shared_ptr<Communicator> world = nullptr;
};

class WanDeviceModel final : private WanBlockSource {
 public:
  // Weights already on the device in the dtypes this class expects (see upload/random).
  WanDeviceModel(const WanTransformerConfig& cfg, WanTransformerWeights device_weights,
                 const WanDeviceOptions& options);
  // With DWDP: a barrier on options.world first (unless an exception is unwinding), so no peer
  // still copies from this GPU's arena when it is freed: every rank drops the model at one point.
  ~WanDeviceModel();
  WanDeviceModel(const WanDeviceModel&) = delete;
  WanDeviceModel& operator=(const WanDeviceModel&) = delete;

  // Copies host weights (any float dtype) to the current device, converting per §1.3.
  static std::shared_ptr<WanDeviceModel> upload(const WanTransformerConfig& cfg, const WanTransformerWeights& host,
                                                const WanDeviceOptions& options);
  // Device tensors of every weight requested from component `component` of `stream`
  // (dist/weight_stream.h): read from the checkpoint and converted on the device per §1.3; the
  // model is usable once stream.run() has returned (with DWDP each block runs the stream itself,
  // collectively, before its slices are kept).
  static std::shared_ptr<WanDeviceModel> stream(const WanTransformerConfig& cfg, WeightStream& stream, int component,
                                                const WanDeviceOptions& options);
  // Random device weights of the config's shapes (benchmarks; no checkpoint): matrices, biases
  // and modulation tables N(0, 0.02²), RMSNorm / norm2 weights 1 — as the diffusers peer benchmark.
  static std::shared_ptr<WanDeviceModel> random(const WanTransformerConfig& cfg, const WanDeviceOptions& options,
                                                uint64_t seed);

  // DWDP placement (upload/random): `weights` holds the owned blocks, `staged` views the slots.
  void set_dwdp(std::shared_ptr<DwdpDeviceWeights> weights, WanBlockWeights staged0, WanBlockWeights staged1);

  const WanTransformerConfig& config() const { return cfg_; }
  const WanDeviceOptions& options() const { return opt_; }
  size_t weight_bytes() const { return weight_bytes_; }
  // In-place updates at load, before the first forward (LoRA merge); with DWDP the blocks are slices.
  WanTransformerWeights& mutable_weights() { return w_; }
  bool has_dwdp() const { return dwdp_ != nullptr; }
  // How the DWDP arenas are shared (DwdpDeviceWeights::transport); "" without DWDP.
  const char* dwdp_transport() const { return dwdp_ ? dwdp_->transport() : ""; }

  // Same contracts as WanTransformer's (inputs host or device; results on the device):
  // text K/V [B, L, H, Dh] in the compute dtype; proj_out tokens [B, S_loc, P·C_out] in the
  // compute dtype; unpatchify → [B, C_out, T, H, W] f32.
  TextContext prepare_text(const Tensor& encoder_hidden_states, const Tensor& image_tokens = Tensor()) const;
  Tensor forward_local(const Tensor& latents, const Tensor& timestep, const TextContext& text,
                       const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache = nullptr,
                       const StepPolicy& step = {}) const;
  // The device kernels of the attention calls (attention_config: the backend and the key split).
  void set_attention(const AttentionConfig& attention) { attention_ = attention; }
  Tensor unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const;

  // precision fp8 (WanTransformer::enable_fp8): quantises the block linears on the device when
  // options.gemm (refused with DWDP: the slices hold no e4m3 copy), frees their weights unless
  // options.keep_weights; later forwards run per options on the steps that run in fp8 (StepPolicy).
  void enable_fp8(const WanFp8Options& options);
  const WanFp8Options& fp8_options() const { return fp8_; }

  // Attach a profiler to later calls (null detaches). Not thread-safe with concurrent forwards.
  void set_profiler(DitPhaseProfiler* p) const { prof_ = p; }

 private:
  // The device's forwards (transformer_forward.h): its dtype and fusions, its phase profiler.
  WanForwardContext context() const;
  // WanBlockSource: block i's weights for the kernels queued next (DWDP: staged on the compute
  // stream), and the end of their use (its staging slot may be refilled after the queued kernels).
  const WanBlockWeights& block_begin(size_t i) const override;
  void block_end(size_t i) const override;

  WanTransformerConfig cfg_;
  WanTransformerWeights w_;
  WanDeviceOptions opt_;
  WanRopeRows rope_;  // device RoPE rows of the last shard (the same every denoising step)
  size_t weight_bytes_ = 0;
  std::shared_ptr<DwdpDeviceWeights> dwdp_;  // null without DWDP
  WanBlockWeights staged_[2];                 // views of the DWDP staging slots
  WanFp8Options fp8_;
  AttentionConfig attention_;
  mutable DitPhaseProfiler* prof_ = nullptr;
};

}  // namespace vgen
