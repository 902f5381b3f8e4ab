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
#include "plan/time_model_terms.h"

namespace vgen {
namespace time_model_detail {

// Bytes per token-channel and layer of the memory-bound ops that are not fused into a GEMM
// epilogue: three AdaLN/LayerNorm passes (fp32 residual in, bf16 out: 3 × 6) and the Q/K
// RMSNorm + RoPE pass (bf16 q and k read and written: 8). Residual adds and GELU run in the GEMM
// epilogues (fc29a1c, 3140037).
constexpr double kElementwiseBytes = 26.0;

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

}  // namespace time_model_detail

using time_model_detail::check_priceable;
using time_model_detail::TimeModel;

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
