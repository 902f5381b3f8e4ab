// `vgen plan`: the recipe's LoRA adapters, read as far as their headers and checked against the
// transformer configs the way the load checks them (dit/lora.h).
#include <filesystem>

#include "io/diffusers_dir.h"
#include "model/wan/dit/lora.h"
#include "model/wan/family.h"

namespace vgen {
namespace fs = std::filesystem;

std::vector<PlanLora> WanFamily::plan_loras(const Recipe& recipe) const {
  std::vector<PlanLora> out;
  if (recipe.lora.empty()) return out;
  DiffusersDir dir(recipe.model);
  const bool two = dir.has_component("transformer_2");
  for (size_t i = 0; i < recipe.lora.size(); ++i) {
    const LoraEntry& e = recipe.lora[i];
    VGEN_CHECK(two || e.target != LoraTarget::kSecondExpert, ExitCode::kRecipe,
               "lora[{}].target: transformer_2, but the model has no transformer_2 ({})", i, e.path);
    for (int expert = 0; expert < (two ? 2 : 1); ++expert) {
      if (!lora_targets_expert(e.target, expert)) continue;
      const char* component = expert ? "transformer_2" : "transformer";
      const WanTransformerConfig cfg = WanTransformerConfig::load(dir.component_path(component));
      const LoraAdapter a = load_lora(e.path, e.scale, cfg, recipe.lora_strict, /*with_data=*/false);
      out.push_back({int(i), e.path, e.scale, component, a.num_tensors(), a.max_rank(), a.skipped_keys});
    }
  }
  return out;
}

}  // namespace vgen
