// The Cosmos 3 family behind the model seam (model/registry.h): Cosmos3OmniPipeline checkpoints
// rendering video (text to video, or image to video from a first frame) with diffusers' defaults. Its parts: the prompt renderer and
// tokenizer (prompt.h) as the prompt side, the joint transformer (transformer.h) as the denoiser
// (denoiser.h), the image condition (image_condition.h), and the Wan 2.2 VAE, lent by the registry so that this family includes no other.
// precision fp8 runs the generation tower's linears (and attention) in fp8 (fp8_options.h). The
// pipeline's own sigmas (use_native_flow_schedule, a distilled checkpoint's distilled_sigmas) reach
// the scheduler through its config (cosmos3_scheduler_config). Refused by name: quantized
// transformers, fp4, LoRA, the first-block cache, fp8 GEMMs with DWDP on the GPU, a last frame on a
// prompt line. DWDP shares the generation tower's layers (transformer.h, weights.h).
#pragma once
#include <memory>
#include <string>

#include "model/registry.h"
#include "sched/pipeline_sigmas.h"

namespace vgen {

// Loads the checkpoint's `vae` component (a Wan 2.2 VAE) for the ranks that decode, its weights
// through a weight stream, collective over the world like a family's load; null on the other
// ranks. `encodes`: the ranks that decode also get its encoder.
using LentAutoencoderLoader = std::unique_ptr<VideoAutoencoder> (*)(const Recipe& recipe, Mesh& mesh,
                                                                    int64_t latent_channels, bool encodes);

// Fills the plan facts of the checkpoint's `vae` component (model/plan_facts.h: scale factors, decoder
// work, bytes with `headers`, encoder FLOPs), priced as its own family prices it.
using LentAutoencoderPlanner = void (*)(const DiffusersDir& dir, PlanModel& m, bool headers);

class Cosmos3Family final : public ModelFamily {
 public:
  explicit Cosmos3Family(LentAutoencoderLoader vae, LentAutoencoderPlanner vae_plan = nullptr)
      : vae_(vae), vae_plan_(vae_plan) {}
  std::string name() const override { return "cosmos3"; }
  std::string pipeline_classes() const override { return "Cosmos3OmniPipeline"; }
  bool accepts(const DiffusersDir& dir) const override;
  ModelTraits traits(const DiffusersDir& dir) const override;
  // Text to video, or image to video with a first frame (diffusers' `image`): optional.
  ImageInputs image_inputs(const DiffusersDir& dir) const override;
  int check_configs(const DiffusersDir& dir) const override;
  void check_weights(const DiffusersDir& dir) const override;
  void check_recipe(const Recipe& recipe, const DiffusersDir& dir) const override;
  SizeLimits size_limits(const DiffusersDir& dir) const override;
  LoadedModel load(const Recipe& recipe, Mesh& mesh) const override;
  PlanModel plan_model(const Recipe& recipe, bool read_headers) const override;
  // tests/golden-cosmos3's component cases: mrope_*, und_kv*, transformer_forward* (golden.cpp).
  bool run_golden_case(const std::string& kind, GoldenCase& c) const override;

 private:
  LentAutoencoderLoader vae_;
  LentAutoencoderPlanner vae_plan_;
};

// text.device cpu is Wan's (its text encoder on the host): kRecipe naming the key.
void check_cosmos3_text_device(const Recipe& r);

// What a user reads of the checkpoint (ModelTraits::variant): the transformer's style from its config.
std::string cosmos3_variant(const DiffusersDir& dir);

// The sigmas the pipeline hands its scheduler: model_index.json's use_native_flow_schedule →
// linspace(1 − 1/N, 0, steps + 1)[:-1]; a distilled checkpoint's distilled_sigmas (model_index.json
// or modular_model_index.json) → that fixed list; else none. Malformed or contradictory keys: kModel.
PipelineSigmas cosmos3_pipeline_sigmas(const DiffusersDir& dir);
// scheduler/scheduler_config.json with those sigmas (sched/pipeline_sigmas.h), for make_scheduler.
Json cosmos3_scheduler_config(const DiffusersDir& dir);

}  // namespace vgen
