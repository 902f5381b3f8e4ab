// The terms of a job around the denoising loop (time_model_terms.h): text or the prompt prefill,
// the image conditioning, the VAE decode with the frames and the MP4, and the load.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "plan/time_model_terms.h"

namespace vgen::time_model_detail {

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

}  // namespace vgen::time_model_detail
