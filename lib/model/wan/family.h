// The Wan family behind the model seam (model/registry.h): WanPipeline checkpoints — Wan 2.1 T2V,
// Wan 2.2 T2V-A14B (two experts switched at model_index.json's boundary_ratio), Wan 2.2 TI2V — and
// WanImageToVideoPipeline ones (Wan 2.1 I2V / FLF2V, Wan 2.2 I2V-A14B). Its parts: the UMT5 prompt
// encoder (text/text_encoder.h), the DiT (dit/transformer.h), the VAE (vae/autoencoder.h), the image
// conditioning (image_condition.h).
#pragma once
#include <string>
#include <vector>

#include "model/registry.h"

namespace vgen {

class WanFamily final : public ModelFamily {
 public:
  std::string name() const override { return "wan"; }
  std::string pipeline_classes() const override { return "WanPipeline, WanImageToVideoPipeline"; }
  bool accepts(const DiffusersDir& dir) const override;
  ModelTraits traits(const DiffusersDir& dir) const override;
  // WanPipeline: none; with expand_timesteps (TI2V) an optional first frame; WanImageToVideoPipeline:
  // a first frame, and a last one unless expand_timesteps.
  ImageInputs image_inputs(const DiffusersDir& dir) const override;
  int check_configs(const DiffusersDir& dir) const override;
  void check_weights(const DiffusersDir& dir) const override;
  void check_recipe(const Recipe& recipe, const DiffusersDir& dir) const override;
  SizeLimits size_limits(const DiffusersDir& dir) const override;
  LoadedModel load(const Recipe& recipe, Mesh& mesh) const override;
  PlanModel plan_model(const Recipe& recipe, bool read_headers) const override;
  std::vector<PlanLora> plan_loras(const Recipe& recipe) const override;
  bool run_golden_case(const std::string& kind, GoldenCase& c) const override;
};

// The expert components of a Wan checkpoint in order: "transformer", then "transformer_2" when
// model_index.json lists it.
std::vector<std::string> wan_expert_components(const DiffusersDir& dir);
// Whether the checkpoint conditions on image tokens (Wan 2.1 I2V / FLF2V: a transformer with an
// image path in a WanImageToVideoPipeline): it then needs image_encoder/ and image_processor/.
bool wan_takes_image_tokens(const DiffusersDir& dir);
// What a user reads of the checkpoint (ModelTraits::variant, PlanModel::variant).
std::string wan_variant(const DiffusersDir& dir);

// text.device stream is Cosmos 3's (its understanding tower): kRecipe naming the key.
void check_wan_text_device(const Recipe& recipe);

// Golden case runners of the Wan components (tests/golden/README.md).
void golden_text_encode(GoldenCase& c);
void golden_dit_forward(GoldenCase& c);
void golden_vae_decode(GoldenCase& c);
void golden_vae_encode(GoldenCase& c);  // kinds vae_encode (Wan 2.1) and vae22_encode (Wan 2.2)

}  // namespace vgen
