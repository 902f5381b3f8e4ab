// precision fp8 of Cosmos3Transformer (fp8_options.h): the generation tower's quantised copies and
// how each layer's linears and attention run on a step.
#include "core/log.h"
#include "model/cosmos3/transformer.h"

namespace vgen {
namespace {

// The generation tower's linears in kCosmos3GenLinearNames' order, with their index (the relu² MLP
// has no gate).
template <typename F> void for_each_generation_linear(Cosmos3Tower& t, F&& f) {
  int k = 0;
  for (LinearWeights* l : {&t.q, &t.k, &t.v, &t.o, &t.gate, &t.up, &t.down}) {
    if (l->w.defined()) f(*l, k);
    ++k;
  }
}

}  // namespace

void Cosmos3Transformer::enable_fp8(const Cosmos3Fp8Options& options) {
  VGEN_CHECK(!fp8_.any(), ExitCode::kInternal, "enable_fp8: the transformer is already set up for precision fp8");
  const int64_t n = int64_t(w_.layers.size());
  options.blocks().check(n);
  VGEN_CHECK(!options.any() || device_ == Device::kCPU || dtype_ == DType::kBF16, ExitCode::kUsage,
             "cosmos3: precision fp8 on the device computes in bf16 outside the fp8 GEMMs and attention, not {}",
             dtype_name(dtype_));
  VGEN_CHECK(!options.gemm || !w_.gen_dwdp, ExitCode::kRecipe,
             "precision fp8: fp8 GEMMs do not run with parallel_config.dwdp_size > 1 on device cuda (the streamed "
             "generation-layer slices hold no quantised copy); set fp8_config.gemm false or dwdp_size 1");
  VGEN_CHECK(!(options.bf16_linears & 0x10) || w_.layers.empty() || w_.layers[0].gen.gate.w.defined(),
             ExitCode::kRecipe, "fp8_config.bf16_linears names mlp_moe_gen.gate_proj, which this checkpoint's "
             "{} MLP does not have", cfg_.hidden_act == Cosmos3Act::kSilu ? "gated" : "relu² (non-gated)");
  size_t added = 0;
  bool quantises = false;
  for (int64_t i = 0; i < n; ++i) {
    quantises = quantises || (options.attention && options.blocks().attention_in_fp8(i, n));
    if (!options.gemm || !options.blocks().gemm_in_fp8(i, n)) continue;
    quantises = true;
    for_each_generation_linear(w_.layers[size_t(i)].gen, [&](LinearWeights& l, int k) {
      if ((options.bf16_linears >> k) & 1u) return;  // fp8_config.bf16_linears: no quantised copy
      Fp8Weight q = fp8_quantize_weight(l.w, options.gemm_format);  // per output channel, on w's device
      l.w8 = std::move(q.w8);
      l.w_scale = std::move(q.scale);
      added += l.w8.nbytes() + l.w_scale.nbytes();
      if (!options.keep_weights && device_ != Device::kCPU) l.w = Tensor();  // no step needs the bf16 copy
    });
  }
  if (options.gemm)
    log_info("cosmos3: precision fp8: generation-tower linears quantised to {} (+{:.1f} MiB)",
             gemm_format_name(options.gemm_format), double(added) / 1048576.0);
  fp8_ = options;
  rows_ = quantises ? LinearRows::kRowByRow : LinearRows::kBatched;
}

LinearMode Cosmos3Transformer::plain_mode() const { return {false, fp8_.gemm_format, rows_, dtype_}; }

TowerModes Cosmos3Transformer::generation_modes(size_t i, bool fp8) const {
  LinearMode m = plain_mode();
  m.fp8 = fp8 && fp8_.gemm && fp8_.blocks().gemm_in_fp8(int64_t(i), int64_t(w_.layers.size()));
  TowerModes t = TowerModes::all(m);
  int k = 0;
  for (LinearMode* l : {&t.q, &t.k, &t.v, &t.o, &t.gate, &t.up, &t.down})
    if ((fp8_.bf16_linears >> k++) & 1u) l->fp8 = false;
  return t;
}

AttentionPolicy Cosmos3Transformer::generation_attention(size_t i, bool fp8) const {
  AttentionPolicy p = attention_policy;
  p.fp8 = fp8 && fp8_.attention && fp8_.blocks().attention_in_fp8(int64_t(i), int64_t(w_.layers.size()));
  p.qk = fp8_.qk_int8 ? QkFormat::kInt8 : QkFormat::kE4m3;
  return p;
}

}  // namespace vgen
