// `vgen plan --predict`: the calibrated time model. The work each rank runs (GEMM FLOPs by rows,
// attention FLOPs by query and key length per call, elementwise bytes, the text encoder, the VAE
// decode of the rank's slice with its halos, and every collective of `vgen plan` with its group and
// calls) priced with a hardware profile (predict_profile.h). Communication overlaps compute only
// where the code overlaps it: the ring's K/V send/recv under the attention of the previous block,
// async Ulysses' V and Q all-to-alls, DWDP's prefetch of the next block; Attention2D's gathers and
// every other collective are exposed.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "io/recipe.h"
#include "plan/plan.h"
#include "plan/hardware_profile.h"

namespace vgen {

struct Prediction {
  ParallelConfig pc;
  std::string mesh;  // "dp 1 × cfg 2 × ulysses 4 × attn2d 3×3, vae 8, dwdp 1"
  double forward_s = 0;   // one DiT forward of one stream on one rank, with its exposed collectives
                          // (precision fp8: of a step that runs in fp8)
  double step_s = 0;      // one denoising step (all forwards of the rank, CFG and proj_out gathers)
  Precision precision = Precision::kFp32;  // the recipe's
  int fp8_steps = 0;      // precision fp8: the steps that run in fp8 (the others are bf16 steps)
  int fp8_bf16_blocks = 0;  // precision fp8: blocks of fp8_config.bf16_blocks (wholly bf16, forward_s counts them)
  int fp8_bf16_gemm_blocks = 0;  // and of bf16_gemm_blocks not also in bf16_blocks (bf16 linears)
  double forward_bf16_s = 0, step_bf16_s = 0;  // precision fp8 with bf16 steps: forward and step of one
  double denoise_s = 0, text_s = 0, vae_s = 0, mp4_s = 0, load_s = 0;
  std::string text_what = "text encode";  // or "prompt prefill" (a prompt prefix: PlanPromptPrefix)
  std::string text_note;
  double image_s = 0;         // an image line's conditioning: the image encoder and the VAE encode (0: text only)
  double vae_decode_s = 0;    // the decode alone (vae_s less the frames' postprocess), as the benchmark times it
  double e2e_s = 0;           // one video: text + denoise + VAE + MP4 (load not included)
  double videos_per_hour = 0; // dp replicas in parallel
  double efficiency = 0;      // one GPU's e2e over (world × this e2e / dp), one GPU of the same profile
  double memory_gib = 0;      // vgen plan's per-GPU estimate
  bool fits = true;           // memory_gib within the profile's memory
  std::vector<std::pair<std::string, double>> forward_parts;  // seconds per forward by item
};

// Seconds of one video on the mesh of `plan` (validated by make_plan) on profile `hw`.
// kRecipe when the recipe asks for something the model cannot price (naming it).
Prediction predict(const Recipe& recipe, const Plan& plan, const HardwareProfile& hw);

// The same recipe on one GPU of the profile (dp = cfg = every size 1): the efficiency baseline.
Prediction predict_one_gpu(const Recipe& recipe, const PlanModel& model, const HardwareProfile& hw);

std::string mesh_label(const ParallelConfig& pc);
std::string format_prediction(const Recipe& recipe, const HardwareProfile& hw, const Prediction& p);

}  // namespace vgen
