// The time model of `vgen plan --predict` (see time_model.h). Per rank and per DiT forward:
//   GEMMs      L · Σ 2·s·K·N FLOPs over the family's block linears at the profile's GEMM efficiency for s rows
//   attention  per call 4·q·k·(H/U)·d FLOPs at the attention efficiency of that call size:
//              local (q = k = S), ring (P calls of S/cp × S/cp), Attention2D (S/R × S/C)
//   cross-attn 4·s·text_len·D FLOPs per layer (text K/V are computed once per prompt); a prompt
//              prefix (Cosmos 3) instead: the rank's video queries against the prompt's K/V per layer
//              and the understanding tower's prefill in place of the text encoder (streamed: its
//              layers' copies from the host overlapped with it)
//   elementwise kElementwiseBytes·s·D bytes per layer (norms, modulation, RoPE), and every
//              memory pass of the sequence-parallel code (Ulysses' packs and unpacks, the ring's
//              buffer, casts and fp32 LSE merges, Attention2D's reorders, casts, packing and
//              combine) at HBM speed; with grouped K/V heads the K/V move through the collectives
//              with KVH heads (lcm(KVH, U) under Ulysses) and each attention call repeats its block
//   VAE        the decoder call by call (the family's PlanModel::vae_work): conv FLOPs at the VAE fraction of the peak,
//              its memory-bound passes at HBM speed; split, the halo-extended copies, the two halo
//              phases per spatial conv with their measured per-call cost, the gathers
//   collectives the volumes of `vgen plan` (plan.cpp) on their groups: NVLink inside a domain,
//              the inter-node fabric when a group spans domains
//   fp8        precision fp8 (docs/fp8.md) on a profile with an `fp8` section: the block linears'
//              FLOPs at the fp8 GEMM curve (fraction of the fp8 peak; gemm_format int8: the INT8
//              one, gemm_int8_by_rows) plus the row quantisation of
//              each input (3 bytes per element); each self-attention call at the e4m3 kernel's curve
//              plus its q/k/v quantisation pass; cross-attention, patch embedding, proj_out, the
//              memory passes, the collectives (bf16), the text encoder and the VAE as bf16;
//              fp8_config.attention / gemm choose the parts, bf16_first/last_steps are bf16 steps
#include "plan/time_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "core/error.h"
#include "dist/mesh_axes.h"
#include "ops/fp8.h"
#include "parallel/ulysses.h"
#include "plan/plan_fit.h"
#include "plan/prefill_placement.h"

namespace vgen {
namespace {

// Bytes per token-channel and layer of the memory-bound ops that are not fused into a GEMM
// epilogue: three AdaLN/LayerNorm passes (fp32 residual in, bf16 out: 3 × 6) and the Q/K
// RMSNorm + RoPE pass (bf16 q and k read and written: 8). Residual adds and GELU run in the GEMM
// epilogues (fc29a1c, 3140037).
constexpr double kElementwiseBytes = 26.0;

struct Fabric {
  const HardwareProfile& hw;
  // A group of `n` ranks whose consecutive members are `stride` world ranks apart leaves the
  // NVLink domain when its span reaches past it.
  const FabricCost& of(int n, int stride) const {
    return int64_t(n - 1) * stride >= hw.nvlink_domain ? hw.inter : hw.intra;
  }
};

// One DiT forward's seconds, in total and by item.
struct Forward {
  double total = 0;
  std::vector<std::pair<std::string, double>> parts;
};

// What --predict cannot price: kRecipe naming it.
void check_priceable(const Recipe& recipe, const HardwareProfile& hw) {
  VGEN_CHECK(recipe.is_bf16() || recipe.is_fp32() || recipe.is_fp8(), ExitCode::kRecipe,
             "vgen plan --predict: precision {} cannot be priced (fp32, bf16 or fp8)", precision_name(recipe.precision));
  const bool fp8 = recipe.is_fp8();
  VGEN_CHECK(!fp8 || hw.fp8, ExitCode::kRecipe,
             "vgen plan --predict: hardware profile {} ({}) has no fp8 section, so precision fp8 is not priced on "
             "{} (the profile's comments say why); use precision bf16 or a profile with one",
             hw.name, hw.source_path, hw.gpu);
  const bool int8_gemm = fp8 && recipe.fp8.gemm && recipe.fp8.gemm_int8();
  VGEN_CHECK(!int8_gemm || hw.fp8->gemm_int8, ExitCode::kRecipe,
             "vgen plan --predict: hardware profile {} ({}) has no fp8.gemm_int8_by_rows, so fp8_config.gemm_format "
             "int8 is not priced on {}; use gemm_format e4m3 or a profile with one",
             hw.name, hw.source_path, hw.gpu);
  VGEN_CHECK(!(fp8 && recipe.is_cuda() && recipe.fp8.gemm && recipe.parallel.dwdp_size > 1), ExitCode::kRecipe,
             "vgen plan --predict: precision fp8 with fp8_config.gemm does not run with parallel_config.dwdp_size {} "
             "on device cuda (docs/fp8.md)",
             recipe.parallel.dwdp_size);
}

// Σ 2·K·N over a block's linears.
double block_linear_flops(const PlanModel& md) {
  double block_lin = 0;
  for (const PlanLinear& l : md.block_linears) block_lin += 2.0 * double(l.k) * double(l.n);
  return block_lin;
}

// The time model of one recipe on one plan and profile (a priceable recipe: check_priceable). The
// members are the sizes every term reads, per rank; each term is a member function.
class TimeModel {
 public:
  TimeModel(const Recipe& recipe, const Plan& plan, const HardwareProfile& hw);
  void denoise(Prediction& p) const;
  double text_seconds() const;
  double prefill_seconds(bool cfg_on) const;
  double prefill_copy_seconds() const;
  double image_seconds() const;
  void vae_and_mp4(Prediction& p) const;
  double load_seconds() const;

 private:
  double attn_call(double q, double k, double ch, bool e4m3) const;
  double gemm_seconds(bool e4m3) const;
  void add_sequence_passes();
  void add_prompt_prefix();
  Forward forward(bool a8, bool g8) const;
  Forward forward_with_bf16_blocks(Prediction& p) const;

  const Recipe& recipe;
  const Plan& plan;
  const HardwareProfile& hw;
  const MeshShape& m;
  const PlanModel& md;
  const GenerationConfig& g;
  const bool fp8;
  const bool int8_gemm;
  const bool lowp;  // bf16 between ops (precision fp8 too: docs/fp8.md)
  const double b;
  const double peak;
  const double peak8, hbm_peak;
  const double hbm;
  const EfficiencyCurve& att_curve;
  const Fabric fab;

  const double L, D;
  const double S, s;
  const int U, R, C, cp, sp;
  const double du, hu;
  const double c;  // tokens per rank after the Ulysses all-to-all
  // Strides of the groups in world ranks (the mesh's axis order, dist/mesh_axes.h).
  const MeshAxes axes;
  const int st_u, st_col, st_row, st_cfg;

  // GEMMs of a layer on the s local rows (the family's block linears), plus patch embedding and
  // proj_out once per forward.
  const int patch;
  const double block_lin;  // Σ 2·K·N of a block's linears
  const double block_flops;
  const double edge_flops;
  // fp8_config.bf16_linears: those linears in bf16 in every block.
  const std::vector<bool> bf16_lin;

  // The memory passes and the collectives do not depend on the precision of the attention and the
  // GEMMs (bf16 between ops in precision fp8); only how much of a collective the attention hides.
  double elem_bytes;
  const int G;
  const double n;     // elements of one rank's q (or k, or v) block after the all-to-all
  // Grouped K/V heads move with R = ulysses_kv_heads(KVH, U) heads: R·hd channels of the local
  // tokens (dkv), R/U·hd per rank after the all-to-all (dkv_u: nkv elements of a k or v block).
  const double hd, kvh, dkv, dkv_u, nkv;
  const double cast;  // bytes per element of a bf16 ↔ fp32 cast (2 + 4, either way)
  double t_comm_fixed = 0;  // exposed collectives that no compute hides
  double t_cross = 0, t_elem = 0, t_gather = 0;
};

TimeModel::TimeModel(const Recipe& recipe_in, const Plan& plan_in, const HardwareProfile& hw_in)
    : recipe(recipe_in),
      plan(plan_in),
      hw(hw_in),
      m(plan.shape),
      md(plan.model),
      g(recipe.generation),
      fp8(recipe.is_fp8()),
      int8_gemm(fp8 && recipe.fp8.gemm && recipe.fp8.gemm_int8()),
      lowp(!recipe.is_fp32()),
      b(lowp ? 2 : 4),
      peak((lowp ? hw.bf16_tflops : hw.fp32_tflops) * 1e12),
      peak8(hw.fp8_tflops * 1e12),
      hbm_peak(hw.hbm_tbps * 1e12),
      hbm(hbm_peak * hw.elementwise_efficiency),
      att_curve(recipe.attention.backend == AttentionBackend::kCudnn ? hw.attention_cudnn : hw.attention),
      fab{hw},
      L(md.layers),
      D(md.dim()),
      S(double(plan.tokens.padded)),
      s(double(plan.tokens.per_rank)),
      U(m.ulysses),
      R(m.rows),
      C(m.cols),
      cp(m.cp()),
      sp(m.seq()),
      du(D / U),
      hu(double(md.heads) / U),
      c(S / cp),
      axes(MeshAxes::of(m)),
      st_u(axes.stride(MeshAxis::kUlysses)),
      st_col(axes.stride(MeshAxis::kCol)),
      st_row(axes.stride(MeshAxis::kRow)),
      st_cfg(axes.stride(MeshAxis::kCfg)),
      patch(md.patch[0] * md.patch[1] * md.patch[2]),
      block_lin(block_linear_flops(md)),
      block_flops(L * s * block_lin),
      edge_flops(2 * s * D * md.in_channels * patch + 2 * s * D * md.out_channels * patch),
      bf16_lin(fp8 ? plan_bf16_linears(md, recipe.fp8.bf16_linears) : std::vector<bool>(md.block_linears.size())),
      elem_bytes(L * kElementwiseBytes * s * D),
      G((m.async_ulysses && U > 1 && cp == 1) ? std::min<int>(kAsyncUlyssesHeadGroups, int(hu)) : 1),
      n(c * du),
      hd(md.head_dim),
      kvh(md.self_kv_heads()),
      dkv(double(ulysses_kv_heads(md.self_kv_heads(), m.ulysses)) * md.head_dim),
      dkv_u(dkv / U),
      nkv(c * dkv_u),
      cast(b < 4 ? 6 : 0) {
  add_sequence_passes();
  if (md.prompt_prefix) {
    add_prompt_prefix();
  } else {
    t_cross = L * attn_call(s, md.text_len, D, false);  // bf16 in precision fp8 too
  }
  t_elem = elem_bytes / hbm;
  // proj_out gather over the seq group: [s, out·patch] from every seq rank.
  if (sp > 1) t_gather = fab.of(sp, 1).all_gather.seconds((sp - 1) * s * md.out_channels * patch * b, 1);
}

// One attention call of q queries against k keys over ch channels (heads · head_dim): in bf16 (or
// fp32) at the backend's curve; in e4m3 (precision fp8, self-attention) at the fp8 kernel's curve
// plus its quantisation pass over the call's q, k and v (bf16 read, e4m3 written: 3 bytes each).
double TimeModel::attn_call(double q, double k, double ch, bool e4m3) const {
  const double flops = 4 * q * k * ch;
  if (!e4m3) return flops / (peak * att_curve.at(flops / 1e9));
  return flops / (peak8 * hw.fp8->attention.at(flops / 1e9)) +
         3 * (q + 2 * k) * ch / (hbm_peak * hw.fp8->attention_quant);
}

// The GEMMs of one forward, the block linears in e4m3 or INT8 or not.
double TimeModel::gemm_seconds(bool e4m3) const {
  if (!e4m3) return (block_flops + edge_flops) / (peak * hw.gemm.at(s));
  // precision fp8: the block linears in e4m3 or INT8 (but those of bf16_linears), each input
  // row-quantised first (linears that read one input share its quantisation: 3 bytes per
  // element); patch embedding and proj_out stay bf16.
  double lin8 = 0;
  std::map<int, double> inputs;  // input → K of a quantised reader
  for (size_t i = 0; i < md.block_linears.size(); ++i) {
    const PlanLinear& l = md.block_linears[i];
    if (bf16_lin[i]) continue;
    lin8 += 2.0 * double(l.k) * double(l.n);
    inputs[l.input] = double(l.k);
  }
  double quant_k = 0;
  for (const auto& [input, k] : inputs) quant_k += k;
  const double flops8 = L * s * lin8;
  const EfficiencyCurve& curve8 = int8_gemm ? *hw.fp8->gemm_int8 : hw.fp8->gemm;
  return flops8 / (peak8 * curve8.at(s)) + L * 3 * s * quant_k / (hbm_peak * hw.fp8->gemm_quant) +
         (block_flops - flops8 + edge_flops) / (peak * hw.gemm.at(s));
}

// The sequence-parallel code's memory passes (elem_bytes) and its collectives that no compute hides
// (t_comm_fixed): the ring's or Attention2D's over cp, Ulysses' over its group.
void TimeModel::add_sequence_passes() {
  if (m.ring && C > 1) {
    // ring_attention.cpp: K and V stacked into the ring buffer (read + write), the first block's
    // partial widened to the fp32 accumulator and the result narrowed back, and the fp32 LSE merge
    // of every later block (out read + written, the partial read; LSE likewise).
    elem_bytes += L * (4 * nkv * b + 2 * cast * n);
    elem_bytes += L * (C - 1) * n * (8 + b) + L * (C - 1) * c * hu * 8;
  } else if (cp > 1) {
    // Blocking today: the Q gather (row group), the fused K/V gather (column group), the output +
    // LSE all-to-all (row group, the partials in fp32), then the combine.
    if (C > 1) t_comm_fixed += L * fab.of(C, st_col).all_gather.seconds((C - 1) * n * b, 1);
    if (R > 1) t_comm_fixed += L * fab.of(R, st_row).all_gather.seconds(2 * (R - 1) * nkv * b, 1);
    if (C > 1) t_comm_fixed += L * fab.of(C, st_col).all_to_all.seconds((C - 1) * (n * 4 + c * hu * 4), 1);
    // attention2d.cpp's memory passes (read + write each): the gathered Q put in sequence order; K
    // and V stacked for their gather and put in order; with C > 1 the partial widened to fp32, packed
    // with its LSE for the all-to-all, the own chunk copied out, C − 1 fp32 merges (out and the
    // partial read, out written; LSE likewise), the result narrowed back.
    if (C > 1) elem_bytes += L * 2 * C * n * b;
    if (R > 1) elem_bytes += L * (4 + 4 * R) * nkv * b;
    if (C > 1) {
      elem_bytes += L * (C * n * cast + 8 * C * (n + c * hu) + 8 * (n + c * hu));
      elem_bytes += L * ((C - 1) * 12 * (n + c * hu) + n * cast);
    }
  }
  if (U > 1) {
    // Q, K, V in (one all-to-all of the packed three) and the output back (a second one): each
    // tensor moves (U-1)/U of the local [s, D] tensor (K and V: [s, dkv]).
    const double bytes = s * (2 * D + 2 * dkv) * b * (U - 1) / U;
    const LinkCost& a2a = fab.of(U, st_u).all_to_all;
    const double per_layer = a2a.seconds(bytes, 2);
    // Async Ulysses: the head groups' all-to-alls overlap the attention of the other groups; the
    // first group's inputs and the last group's output stay exposed.
    t_comm_fixed += L * (G > 1 ? per_layer * 2.0 / G : per_layer);
    // ulysses.cpp: Q, K, V packed for the all-to-all and unpacked after it, the output packed and
    // unpacked likewise (seq_shuffle.cpp: one read and one write of each tensor per pass); where U
    // does not divide KVH, K and V repeated to R heads first (ulysses_gqa.cpp).
    elem_bytes += L * 2 * 2 * s * (2 * D + 2 * dkv) * b;
    if (dkv > kvh * hd) elem_bytes += L * 2 * s * (kvh * hd + dkv) * b;
  }
  // Grouped K/V heads: each attention call repeats its key block's K and V to du channels (read + write).
  const double keys = m.ring && C > 1 ? C * c : cp > 1 ? c * R : c;
  if (dkv_u < du) elem_bytes += L * 2 * keys * (dkv_u + du) * b;
}

// A prompt prefix (PlanPromptPrefix) instead of cross-attention: every layer attends the rank's
// video queries (c tokens, H/U heads after the all-to-all) to the whole prompt's K/V, held on every
// rank of the branch (Ulysses: its head shard), as a call of its own; GQA's K and V of the prompt
// repeated to the rank's query heads at that call, and from KVH to R heads where U does not divide KVH.
void TimeModel::add_prompt_prefix() {
  const PlanPromptPrefix& pp = *md.prompt_prefix;
  const double P = double(pp.tokens);
  t_cross = L * attn_call(c, P, du, false);
  if (pp.kv_heads <= 0 || pp.kv_heads >= md.heads) return;
  const double pdkv = double(ulysses_kv_heads(pp.kv_heads, U)) * hd;  // the prompt's K/V channels, R·hd
  elem_bytes += L * 2 * P * (pdkv / U + du) * b;
  if (pdkv > pp.kv_heads * hd) elem_bytes += L * 2 * P * (pp.kv_heads * hd + pdkv) * b;
}

// One DiT forward with the self-attention (a8) and the block linears (g8) in e4m3 or not.
Forward TimeModel::forward(bool a8, bool g8) const {
  const double t_gemm = gemm_seconds(g8);
  double t_attn_layer = 0, t_comm = t_comm_fixed;
  if (m.ring && C > 1) {
    const double call = attn_call(c, c, du, a8);
    const double xfer = fab.of(C, st_col).p2p.seconds(2 * nkv * b, 2);  // send + recv of the K/V block
    t_attn_layer = C * call;
    // Block i + 1 travels while block i is attended; the last block has no exchange.
    t_comm += L * (C - 1) * std::max(0.0, xfer - call);
  } else if (cp > 1) {
    t_attn_layer = attn_call(c * C, c * R, du, a8);
  } else {
    t_attn_layer = G * attn_call(S, S, du / G, a8);
  }
  const double t_attn = L * t_attn_layer;
  // DWDP: block l + 1 is pulled from its owners over the copy engine while block l computes.
  double t_dwdp = 0;
  if (recipe.parallel.dwdp_size > 1) {
    const int d = recipe.parallel.dwdp_size;
    const double fetch =
        fab.of(d, 1).copy_engine.seconds(double(md.dit_block_bytes) * (d - 1) / d, std::max(1, d - 1));
    const double layer = t_gemm / L + t_attn_layer + t_cross / L + t_elem / L;
    t_dwdp = L * std::max(0.0, fetch - layer);
  }
  Forward f;
  f.total = t_gemm + t_attn + t_cross + t_elem + t_comm + t_dwdp + t_gather;
  f.parts = {{"gemm", t_gemm},
             {"self-attention", t_attn},
             {md.prompt_prefix ? "prompt-prefix attention" : "cross-attention", t_cross},
             {"elementwise", t_elem}, {"exposed collectives", t_comm}, {"dwdp exposed", t_dwdp},
             {"proj_out gather", t_gather}};
  return f;
}

// The forward of a step that runs in fp8 (or the only one), with the blocks of fp8_config.bf16_blocks
// and bf16_gemm_blocks counted into `p`.
Forward TimeModel::forward_with_bf16_blocks(Prediction& p) const {
  // fp8_config.bf16_blocks run wholly in bf16, bf16_gemm_blocks (not also in bf16_blocks) their
  // linears. Every per-layer term above is a sum over the layers, so such a forward is the
  // layer-weighted mix of the fp8 one, the bf16 one and the one with bf16 GEMMs.
  Forward first = forward(fp8 && recipe.fp8.attention, fp8 && recipe.fp8.gemm);
  p.fp8_bf16_blocks = 0;
  p.fp8_bf16_gemm_blocks = 0;
  if (fp8) {
    const Fp8BlockLists lists{recipe.fp8.bf16_blocks, recipe.fp8.bf16_gemm_blocks};
    lists.check(md.layers);
    for (int64_t i = 0; i < md.layers; ++i) {
      p.fp8_bf16_blocks += !lists.attention_in_fp8(i, md.layers);
      p.fp8_bf16_gemm_blocks += lists.attention_in_fp8(i, md.layers) && !lists.gemm_in_fp8(i, md.layers);
    }
  }
  if (p.fp8_bf16_blocks > 0 || p.fp8_bf16_gemm_blocks > 0) {
    const Forward bf = forward(false, false), bf_gemm = forward(recipe.fp8.attention, false);
    const double wa = double(p.fp8_bf16_blocks) / L, wg = double(p.fp8_bf16_gemm_blocks) / L, w8 = 1 - wa - wg;
    first.total = w8 * first.total + wa * bf.total + wg * bf_gemm.total;
    for (size_t i = 0; i < first.parts.size(); ++i)
      first.parts[i].second = w8 * first.parts[i].second + wa * bf.parts[i].second + wg * bf_gemm.parts[i].second;
  }
  return first;
}

// The forward, the step and the denoising loop (precision fp8: its bf16 steps priced as such).
void TimeModel::denoise(Prediction& p) const {
  const Forward first = forward_with_bf16_blocks(p);
  p.forward_s = first.total;
  p.forward_parts = first.parts;

  // One step: the rank's forwards (two streams unless cfg 2 or no guidance), the CFG all-gather.
  const bool cfg_on = g.guidance_scale > 1.0;
  const int fwd = cfg_on ? (m.cfg == 2 ? 1 : 2) : 1;
  const double latent = double(md.out_channels) * plan.tokens.latent_t * plan.tokens.latent_h * plan.tokens.latent_w;
  double t_cfg = 0;
  if (m.cfg == 2 && cfg_on) t_cfg = fab.of(2, st_cfg).all_gather.seconds(latent * b, 1);
  p.step_s = fwd * p.forward_s * hw.forward_overhead + t_cfg;
  const int steps = g.num_inference_steps;
  p.precision = recipe.precision;
  p.fp8_steps = 0;
  if (fp8)
    for (int i = 0; i < steps; ++i) p.fp8_steps += recipe.fp8.step_in_fp8(i, steps) ? 1 : 0;
  if (fp8 && p.fp8_steps < steps) {
    // fp8_config.bf16_first_steps / bf16_last_steps: those steps run wholly in bf16, priced as such.
    p.forward_bf16_s = forward(false, false).total;
    p.step_bf16_s = fwd * p.forward_bf16_s * hw.forward_overhead + t_cfg;
  }
  p.denoise_s = fp8 ? p.fp8_steps * p.step_s + (steps - p.fp8_steps) * p.step_bf16_s : steps * p.step_s;
}

// Text: UMT5 over text_len tokens for the prompt and, with guidance, the negative prompt; then
// the text embedder and every layer's cross-attention K/V projections.
double TimeModel::text_seconds() const {
  const bool cfg_on = g.guidance_scale > 1.0;
  if (md.prompt_prefix) return prefill_seconds(cfg_on);
  const double te_dense = double(md.te_params - md.te_embed_params);
  const double te_flops = 2 * te_dense * md.text_len + 4.0 * md.te_layers * md.text_len * md.text_len * md.te_dmodel;
  const double kv_flops = 2.0 * md.text_len * (md.text_dim * D + D * D) + L * 2 * 2.0 * md.text_len * D * D;
  const int prompts = cfg_on ? 2 : 1;
  const int prompts_here = (m.cfg == 2 && cfg_on) ? 1 : prompts;  // each cfg rank encodes its own stream
  return hw.text_fixed_s + prompts_here * (te_flops + kv_flops) / (peak * hw.gemm.at(md.text_len));
}

// A prompt prefix: the understanding tower over the prompt's P tokens once per prompt and branch
// (with guidance the negative prompt too; each cfg rank its own) on every rank of the branch: its
// linears at the GEMM rate of P rows and the causal attention (half of 4·P²·D per layer). Streamed,
// each prefill copies every layer from pinned host memory at the loader's host-to-device rate, layer
// i + 1 during the compute of layer i: the first copy, then the slower of the two per layer.
double TimeModel::prefill_seconds(bool cfg_on) const {
  const PlanPromptPrefix& pp = *md.prompt_prefix;
  const double P = double(pp.tokens);
  const double flops = P * pp.prefill_flops_per_token + L * 2 * P * P * D;
  const int prompts_here = (cfg_on && m.cfg != 2) ? 2 : 1;
  double one = flops / (peak * hw.gemm.at(P));
  if (pp.streamed) {
    const double layer = one / L, copy = prefill_copy_seconds() / L;
    one = copy + (L - 1) * std::max(layer, copy) + layer;
  }
  return hw.text_fixed_s + prompts_here * one;
}

// One prefill's host-to-device copies of the streamed understanding tower (its layers, not the
// embedding table, which stays a host lookup).
double TimeModel::prefill_copy_seconds() const {
  return L * double(md.prompt_prefix->layer_bytes) / (hw.loader_gbps * 1e9);
}

// An image line's conditioning (PlanModel's image facts): the image encoder on the replica leader
// (one image; FLF2V's second is not priced) at the GEMM rate of its tokens, and the VAE encode of
// the condition video (every frame for I2V, the first for TI2V) split over the VAE group like the
// decode, at the profile's VAE fraction of the peak. 0 for a text-only model.
double TimeModel::image_seconds() const {
  if (!md.vae_encode_flops) return 0;
  const double F = md.condition_frames_all ? g.num_frames : 1;
  const bool split_w = recipe.parallel.parallel_vae_split_dim != VaeSplitDim::kHeight;
  const double lat_side = split_w ? plan.tokens.latent_w : plan.tokens.latent_h;
  const double part = std::ceil(lat_side / m.vae) / lat_side;  // the largest rank's share
  const double encode = md.vae_encode_flops(F, g.height, g.width) * part / (peak * hw.vae_efficiency);
  const double clip = md.image_encoder_flops > 0 ? md.image_encoder_flops / (peak * hw.gemm.at(257)) : 0;
  return encode + clip;
}

// VAE decode of this rank's part (PlanModel::vae_work; the frame split along width or height over the
// VAE group in near-equal parts, the largest sets the pace). Convs at the profile's VAE fraction of
// the peak, the memory-bound passes at HBM speed. Split over P > 1 ranks (vae_parallel.cpp)
// every spatial conv copies its input into a halo-extended buffer (read + write), exchanges the
// halos in two blocking sendrecv phases (right edges right, then left edges left) and pays the
// profile's per-call cost of that exchange (its edge copies and the ranks' rendezvous, measured
// on two H200s); the mid attention gathers q/k/v of the whole frame, each output frame is
// gathered and written whole on every rank of the group. Then the MP4 encode of the same pixels.
void TimeModel::vae_and_mp4(Prediction& p) const {
  const int P = m.vae;
  const double frames = g.num_frames, pixels = frames * g.height * g.width;
  const bool split_w = recipe.parallel.parallel_vae_split_dim != VaeSplitDim::kHeight;
  const double lat_side = split_w ? plan.tokens.latent_w : plan.tokens.latent_h;
  VGEN_CHECK(bool(md.vae_work), ExitCode::kRecipe,
             "--predict: the time model has no terms for the {} family ({}); `vgen plan` without --predict works",
             md.family, md.variant);
  const VaeWork vw = md.vae_work(plan.tokens.latent_t, plan.tokens.latent_h, plan.tokens.latent_w, b, split_w);
  const double part = std::ceil(lat_side / P) / lat_side;  // the largest rank's share
  double t_vae = vw.flops * part / (peak * hw.vae_efficiency) + vw.bytes * part / hbm;
  t_vae += vw.frame_bytes * (P > 1 ? 1.0 : part) / hbm;
  if (P > 1) {
    const FabricCost& f = fab.of(P, 1);
    t_vae += 2 * vw.spatial_in_bytes * part / hbm;  // the inputs copied into the halo-extended buffers
    t_vae += 2 * (vw.spatial_convs * f.p2p.latency_us * 1e-6 + vw.halo_bytes / (f.p2p.gbps * 1e9));
    t_vae += vw.spatial_convs * hw.vae_halo_conv_us * 1e-6;
    const double gathered = vw.attn_gather_bytes + vw.out_gather_bytes;
    t_vae += f.all_gather.seconds(gathered * (P - 1) / P, int(vw.attn_gathers + vw.out_gathers));
    t_vae += 2 * gathered / hbm;  // each rank's received parts placed into the whole frame
  }
  p.vae_decode_s = t_vae;
  p.vae_s = t_vae + pixels / (hw.frame_mpix_per_s * 1e6);
  p.mp4_s = pixels / (hw.mp4_mpix_per_s * 1e6);
}

// Load: every byte a node's ranks need is read once, split over the node's ranks, and shared
// over NVLink (the node-shared loader); DWDP ranks keep 1/dwdp of the DiT; a streamed understanding
// tower is read again by every rank into its pinned host copy.
double TimeModel::load_seconds() const {
  const int world = m.world();
  const int node = std::min(world, hw.nvlink_domain);
  const double vae_bytes = md.vae_bytes >= 0 ? double(md.vae_bytes) : 0.5e9;
  const double ckpt = double(md.dit_bytes) * md.experts + double(md.te_bytes) + vae_bytes;
  const int readers = std::min(node, 8);  // ranks of one host read; NVL72 hosts hold 4 GPUs each
  double load_s = ckpt / (readers * hw.loader_gbps * 1e9);
  if (node > 1) load_s += hw.intra.all_gather.seconds(ckpt * (readers - 1) / readers, 1);
  // A streamed understanding tower: every rank also reads its own pinned host copy.
  if (md.prompt_prefix && md.prompt_prefix->streamed)
    load_s += double(md.prompt_prefix->tower_bytes) / (hw.loader_gbps * 1e9);
  return load_s;
}

}  // namespace

Prediction predict(const Recipe& recipe, const Plan& plan, const HardwareProfile& hw) {
  const MeshShape& m = plan.shape;
  Prediction p;
  p.pc = recipe.parallel;
  p.mesh = mesh_label(recipe.parallel);
  check_priceable(recipe, hw);
  const TimeModel model(recipe, plan, hw);
  model.denoise(p);
  p.text_s = model.text_seconds();
  if (const auto& pp = plan.model.prompt_prefix) {
    p.text_what = "prompt prefill";
    p.text_note = fmt::format("  ({} prompt tokens per branch, {}; understanding tower {})", pp->tokens,
                              pp->tokens_source,
                              pp->streamed ? fmt::format("streamed for it: {:.2f} s of host-to-device copies per "
                                                         "prefill at {} GB/s, overlapped with its compute",
                                                         model.prefill_copy_seconds(), hw.loader_gbps)
                                           : std::string("resident"));
  }
  p.image_s = model.image_seconds();
  model.vae_and_mp4(p);
  p.e2e_s = p.text_s + p.image_s + p.denoise_s + p.vae_s + p.mp4_s;
  p.load_s = model.load_seconds();

  p.videos_per_hour = 3600.0 * m.dp / p.e2e_s;
  p.memory_gib = plan_memory_total(plan) / double(1ull << 30);
  p.fits = p.memory_gib <= 0.95 * hw.memory_gib;
  return p;
}

Prediction predict_one_gpu(const Recipe& recipe, const PlanModel& model, const HardwareProfile& hw) {
  Recipe r = recipe;
  r.parallel = ParallelConfig{};
  r.parallel.parallel_vae_split_dim = recipe.parallel.parallel_vae_split_dim;
  PlanModel m = model;  // text.device auto of a prompt-prefix model, weighed on the one GPU
  place_prefill(r, 1, m, hw);
  return predict(r, make_plan(r, 1, m, false), hw);
}

}  // namespace vgen
