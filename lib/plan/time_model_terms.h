// The time model's terms (time_model.h): the class whose members are the sizes every term reads,
// shared by time_model.cpp (the DiT forward, the denoising loop) and time_model_job.cpp (the terms
// around it: text or prefill, image, VAE, MP4, load). Internal to lib/plan.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "dist/mesh_axes.h"
#include "plan/time_model.h"

namespace vgen::time_model_detail {

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

}  // namespace vgen::time_model_detail
