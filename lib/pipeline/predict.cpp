// The time model of `vgen plan --predict` (see predict.h). Per rank and per DiT forward:
//   GEMMs      L · (12·s·D² + 4·s·D·F) FLOPs at the profile's GEMM efficiency for s rows
//   attention  per call 4·q·k·(H/U)·d FLOPs at the attention efficiency of that call size:
//              local (q = k = S), ring (P calls of S/cp × S/cp), Attention2D (S/R × S/C)
//   cross-attn 4·s·text_len·D FLOPs per layer (text K/V are computed once per prompt)
//   elementwise kElementwiseBytes·s·D bytes per layer (norms, modulation, RoPE), the Ulysses
//              shuffles, the ring's fp32 LSE merges and Attention2D's combine at HBM speed
//   collectives the volumes of `vgen plan` (plan.cpp) on their groups: NVLink inside a domain,
//              the inter-node fabric when a group spans domains
#include "pipeline/predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "parallel/ulysses.h"
#include "pipeline/plan_fit.h"

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

double vae_flops_per_pixel(const PlanModel& md) {
  // Wan VAE decoder (wan_spec.md §5): a mid block (2 resnets) at the latent resolution, then one
  // up block per dim_mult entry with num_res_blocks + 1 resnets of two 3×3×3 convolutions; each up
  // block but the last doubles H and W, the first ones double T where temperal_downsample says.
  const int n = int(md.vae_dim_mult.size());
  std::vector<double> ch;
  for (int i = n - 1; i >= 0; --i) ch.push_back(double(md.vae_base_dim) * md.vae_dim_mult[i]);
  double t = 1.0;
  for (bool d : md.vae_temporal_down) t /= d ? 2.0 : 1.0;
  double area = 1.0 / std::pow(4.0, n - 1);
  const double conv = 2.0 * 27.0;  // multiply-add per tap
  double f = 2 * 2 * conv * ch[0] * ch[0] * area * t;  // mid block
  for (int i = 0; i < n; ++i) {
    f += (md.vae_res_blocks + 1) * 2 * conv * ch[i] * ch[i] * area * t;
    if (i < n - 1) {
      const size_t ti = md.vae_temporal_down.size() - 1 - size_t(i);
      if (ti < md.vae_temporal_down.size() && md.vae_temporal_down[ti]) t *= 2.0;
      area *= 4.0;
      f += 2.0 * 9.0 * ch[i] * ch[std::min(i + 1, n - 1)] * area * t;  // upsample conv (2-D)
    }
  }
  return f + 2.0 * 27.0 * ch[n - 1] * 3.0;  // conv_out to RGB
}

}  // namespace

std::string mesh_label(const ParallelConfig& pc) {
  std::string cp = pc.ring_size > 1 ? fmt::format(" × ring {}", pc.ring_size)
                   : pc.attn2d_size[0] * pc.attn2d_size[1] > 1
                       ? fmt::format(" × attn2d {}×{}", pc.attn2d_size[0], pc.attn2d_size[1])
                       : std::string();
  return fmt::format("dp {} × cfg {} × ulysses {}{}, vae {}, dwdp {}{}", pc.dp_size, pc.cfg_size, pc.ulysses_size, cp,
                     pc.parallel_vae_size, pc.dwdp_size, pc.async_ulysses ? ", async ulysses" : "");
}

Prediction predict(const Recipe& recipe, const Plan& plan, const HardwareProfile& hw) {
  const MeshShape& m = plan.shape;
  const PlanModel& md = plan.model;
  const GenerationConfig& g = recipe.generation;
  Prediction p;
  p.pc = recipe.parallel;
  p.mesh = mesh_label(recipe.parallel);
  VGEN_CHECK(recipe.precision == "bf16" || recipe.precision == "fp32", ExitCode::kRecipe,
             "vgen plan --predict: precision {} cannot be priced (bf16 or fp32)", recipe.precision);
  const bool bf16 = recipe.precision == "bf16";
  const double b = bf16 ? 2 : 4;
  const double peak = (bf16 ? hw.bf16_tflops : hw.fp32_tflops) * 1e12;
  const double hbm = hw.hbm_tbps * 1e12 * hw.elementwise_efficiency;
  const EfficiencyCurve& att_curve = recipe.attention.backend == "cudnn" ? hw.attention_cudnn : hw.attention;
  const Fabric fab{hw};

  const double L = md.layers, D = md.dim(), F = md.ffn;
  const double S = double(plan.tokens.padded), s = double(plan.tokens.per_rank);
  const int U = m.ulysses, R = m.rows, C = m.cols, cp = m.cp(), sp = m.seq();
  const double du = D / U, hu = double(md.heads) / U;
  const double c = S / cp;  // tokens per rank after the Ulysses all-to-all
  // Strides of the groups in world ranks (DESIGN.md linearisation, ulysses innermost).
  const int st_u = 1, st_col = U, st_row = C * U, st_cfg = R * C * U;
  auto attn_s = [&](double flops) { return flops / (peak * att_curve.at(flops / 1e9)); };

  // GEMMs of a layer on the s local rows, plus patch embedding and proj_out once per forward.
  const int patch = md.patch[0] * md.patch[1] * md.patch[2];
  const double gemm_flops = L * (12 * s * D * D + 4 * s * D * F) + 2 * s * D * md.in_channels * patch +
                            2 * s * D * md.out_channels * patch;
  const double t_gemm = gemm_flops / (peak * hw.gemm.at(s));
  const double t_gemm_layer = t_gemm / L;

  double elem_bytes = L * kElementwiseBytes * s * D;
  double t_attn = 0, t_comm = 0;  // per forward: attention compute, exposed collectives
  double t_attn_layer = 0;
  const int G = (m.async_ulysses && U > 1 && cp == 1) ? std::min<int>(kAsyncUlyssesHeadGroups, int(hu)) : 1;
  if (m.ring && C > 1) {
    const double call = attn_s(4 * c * c * du);
    const double xfer = fab.of(C, st_col).p2p.seconds(2 * c * du * b, 2);  // send + recv of the K/V block
    t_attn_layer = C * call;
    // Block i + 1 travels while block i is attended; the last block has no exchange.
    t_comm += L * (C - 1) * std::max(0.0, xfer - call);
    elem_bytes += L * (C - 1) * c * du * (4 + 4 + 2) + L * (C - 1) * c * hu * 8;  // fp32 LSE merge
  } else if (cp > 1) {
    const double q = c * C, k = c * R;
    t_attn_layer = attn_s(4 * q * k * du);
    const double n = c * du;
    // Blocking today: the Q gather (row group), the fused K/V gather (column group), the output +
    // LSE all-to-all (row group), then the combine.
    if (C > 1) t_comm += L * fab.of(C, st_col).all_gather.seconds((C - 1) * n * b, 1);
    if (R > 1) t_comm += L * fab.of(R, st_row).all_gather.seconds(2 * (R - 1) * n * b, 1);
    if (C > 1) t_comm += L * fab.of(C, st_col).all_to_all.seconds((C - 1) * (n * b + c * hu * 4), 1);
    if (C > 1) elem_bytes += L * (C * c * du * (b + 4) + c * du * b + C * c * hu * 4);
  } else {
    t_attn_layer = G * attn_s(4 * S * S * du / G);
  }
  t_attn = L * t_attn_layer;
  if (U > 1) {
    // Q, K, V in and the output back: each moves (U-1)/U of the local [s, D] tensor.
    const double bytes = s * D * b * (U - 1) / U;
    const LinkCost& a2a = fab.of(U, st_u).all_to_all;
    const double per_layer = a2a.seconds(4 * bytes, 4);
    // Async Ulysses: the head groups' all-to-alls overlap the attention of the other groups; the
    // first group's inputs and the last group's output stay exposed.
    t_comm += L * (G > 1 ? per_layer * 2.0 / G : per_layer);
    elem_bytes += L * 2 * 4 * s * D * b;  // the pack / unpack shuffles around each all-to-all
  }
  const double t_cross = L * attn_s(4 * s * md.text_len * D);
  const double t_elem = elem_bytes / hbm;
  // DWDP: block l + 1 is pulled from its owners over the copy engine while block l computes.
  double t_dwdp = 0;
  if (recipe.parallel.dwdp_size > 1) {
    const int d = recipe.parallel.dwdp_size;
    const double fetch =
        fab.of(d, 1).copy_engine.seconds(double(md.dit_block_bytes) * (d - 1) / d, std::max(1, d - 1));
    const double layer = t_gemm_layer + t_attn_layer + t_cross / L + t_elem / L;
    t_dwdp = L * std::max(0.0, fetch - layer);
  }
  // proj_out gather over the seq group: [s, out·patch] from every seq rank.
  double t_gather = 0;
  if (sp > 1) t_gather = fab.of(sp, 1).all_gather.seconds((sp - 1) * s * md.out_channels * patch * b, 1);

  p.forward_s = t_gemm + t_attn + t_cross + t_elem + t_comm + t_dwdp + t_gather;
  p.forward_parts = {{"gemm", t_gemm},      {"self-attention", t_attn},     {"cross-attention", t_cross},
                     {"elementwise", t_elem}, {"exposed collectives", t_comm}, {"dwdp exposed", t_dwdp},
                     {"proj_out gather", t_gather}};

  // One step: the rank's forwards (two streams unless cfg 2 or no guidance), the CFG all-gather.
  const bool cfg_on = g.guidance_scale > 1.0;
  const int fwd = cfg_on ? (m.cfg == 2 ? 1 : 2) : 1;
  const double latent = double(md.out_channels) * plan.tokens.latent_t * plan.tokens.latent_h * plan.tokens.latent_w;
  double t_cfg = 0;
  if (m.cfg == 2 && cfg_on) t_cfg = fab.of(2, st_cfg).all_gather.seconds(latent * b, 1);
  p.step_s = fwd * p.forward_s * hw.forward_overhead + t_cfg;
  p.denoise_s = g.num_inference_steps * p.step_s;

  // Text: UMT5 over text_len tokens for the prompt and, with guidance, the negative prompt; then
  // the text embedder and every layer's cross-attention K/V projections.
  const double te_dense = double(md.te_params - md.te_embed_params);
  const double te_flops = 2 * te_dense * md.text_len + 4.0 * md.te_layers * md.text_len * md.text_len * md.te_dmodel;
  const double kv_flops = 2.0 * md.text_len * (md.text_dim * D + D * D) + L * 2 * 2.0 * md.text_len * D * D;
  const int prompts = cfg_on ? 2 : 1;
  const int prompts_here = (m.cfg == 2 && cfg_on) ? 1 : prompts;  // each cfg rank encodes its own stream
  p.text_s = hw.text_fixed_s + prompts_here * (te_flops + kv_flops) / (peak * hw.gemm.at(md.text_len));

  // VAE decode of this rank's slice (width or height split) with a (k-1)-wide halo per conv.
  const int P = m.vae;
  const double frames = g.num_frames, pixels = frames * g.height * g.width;
  const bool split_w = recipe.parallel.parallel_vae_split_dim != "height";
  const double lat_side = split_w ? plan.tokens.latent_w : plan.tokens.latent_h;
  const double lat_other = split_w ? plan.tokens.latent_h : plan.tokens.latent_w;
  double halo_frac = 0;
  if (P > 1) halo_frac = 2.0 / (lat_side / P);  // at the latent resolution, where it is largest
  const double vae_flops = vae_flops_per_pixel(md) * pixels / P * (1 + halo_frac);
  double t_vae = vae_flops / (hw.bf16_tflops * 1e12 * hw.vae_efficiency);
  if (P > 1) {
    const int convs = 2 * 2 + int(md.vae_dim_mult.size()) * (md.vae_res_blocks + 1) * 2;
    const double chunks = plan.tokens.latent_t;
    const double halo_bytes = 2.0 * lat_other * md.vae_base_dim * md.vae_dim_mult.back() * 4 * 4;  // 2 neighbours
    t_vae += fab.of(P, 1).p2p.seconds(convs * chunks * halo_bytes, int(convs * chunks));
    t_vae += fab.of(P, 1).all_gather.seconds(pixels * 3 * 4 * (P - 1) / P, 1);  // the final frames, fp32
  }
  p.vae_decode_s = t_vae;
  p.vae_s = t_vae + pixels / (hw.frame_mpix_per_s * 1e6);
  p.mp4_s = pixels / (hw.mp4_mpix_per_s * 1e6);
  p.e2e_s = p.text_s + p.denoise_s + p.vae_s + p.mp4_s;

  // Load: every byte a node's ranks need is read once, split over the node's ranks, and shared
  // over NVLink (the node-shared loader); DWDP ranks keep 1/dwdp of the DiT.
  const int world = m.world();
  const int node = std::min(world, hw.nvlink_domain);
  const double vae_bytes = md.vae_bytes >= 0 ? double(md.vae_bytes) : 0.5e9;
  const double ckpt = double(md.dit_bytes) * md.experts + double(md.te_bytes) + vae_bytes;
  const int readers = std::min(node, 8);  // ranks of one host read; NVL72 hosts hold 4 GPUs each
  p.load_s = ckpt / (readers * hw.loader_gbps * 1e9);
  if (node > 1) p.load_s += hw.intra.all_gather.seconds(ckpt * (readers - 1) / readers, 1);

  p.videos_per_hour = 3600.0 * m.dp / p.e2e_s;
  p.memory_gib = plan_memory_total(plan) / double(1ull << 30);
  p.fits = p.memory_gib <= 0.95 * hw.memory_gib;
  return p;
}

Prediction predict_one_gpu(const Recipe& recipe, const PlanModel& model, const HardwareProfile& hw) {
  Recipe r = recipe;
  r.parallel = ParallelConfig{};
  r.parallel.parallel_vae_split_dim = recipe.parallel.parallel_vae_split_dim;
  return predict(r, make_plan(r, 1, model, false), hw);
}

std::string format_prediction(const Recipe& recipe, const HardwareProfile& hw, const Prediction& p) {
  fmt::memory_buffer o;
  auto out = std::back_inserter(o);
  const GenerationConfig& g = recipe.generation;
  fmt::format_to(out, "\npredicted on {} ({}, profile {}): {}\n", hw.name, hw.gpu, hw.source_path, p.mesh);
  fmt::format_to(out, "  DiT forward {:.3f} s (one stream, one rank):", p.forward_s);
  for (auto& [what, sec] : p.forward_parts)
    if (sec > 0) fmt::format_to(out, " {} {:.3f}", what, sec);
  fmt::format_to(out, "\n");
  fmt::format_to(out, "  {:<24} {:>9.3f} s\n", "per step", p.step_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  ({} steps)\n", "denoise", p.denoise_s, g.num_inference_steps);
  fmt::format_to(out, "  {:<24} {:>9.3f} s\n", "text encode", p.text_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  (parallel_vae_size {})\n", "VAE decode", p.vae_s, p.pc.parallel_vae_size);
  fmt::format_to(out, "  {:<24} {:>9.3f} s\n", "MP4 encode", p.mp4_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  (once per job)\n", "load", p.load_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  (text + denoise + VAE + MP4)\n", "end to end per video", p.e2e_s);
  fmt::format_to(out, "  {:<24} {:>9.1f}    (dp {})\n", "videos per hour", p.videos_per_hour, p.pc.dp_size);
  fmt::format_to(out, "  {:<24} {:>9.3f}    (against one GPU of {})\n", "efficiency", p.efficiency, hw.name);
  fmt::format_to(out, "  {:<24} {:>9.1f} GiB of {:.0f}{}\n", "memory estimate", p.memory_gib, hw.memory_gib,
                 p.fits ? "" : "  (does not fit)");
  return fmt::to_string(o);
}

}  // namespace vgen
