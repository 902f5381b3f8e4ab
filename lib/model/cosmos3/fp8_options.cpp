#include "model/cosmos3/fp8_options.h"

#include <iterator>

#include "io/recipe.h"

namespace vgen {

Cosmos3Fp8Options cosmos3_fp8_options(const Recipe& recipe) {
  Cosmos3Fp8Options o;
  if (!recipe.is_fp8()) return o;
  const Fp8Config& f = recipe.fp8;
  o.gemm = f.gemm;
  o.attention = f.attention;
  o.qk_int8 = f.qk_int8();
  // As the Wan DiT: the CPU's format (a GPU that would run a block-scaled one is refused before the load).
  o.gemm_format = f.gemm_format_on(0);
  o.keep_weights = !recipe.is_cuda() || f.has_bf16_steps();
  o.bf16_blocks = f.bf16_blocks;
  o.bf16_gemm_blocks = f.bf16_gemm_blocks;
  o.bf16_linears = cosmos3_bf16_linear_mask(f.bf16_linears);
  return o;
}

uint8_t cosmos3_bf16_linear_mask(const std::vector<std::string>& names) {
  uint8_t mask = 0;
  for (size_t j = 0; j < names.size(); ++j) {
    size_t k = 0;
    while (k < std::size(kCosmos3GenLinearNames) && names[j] != kCosmos3GenLinearNames[k]) ++k;
    if (k == std::size(kCosmos3GenLinearNames)) {
      std::string known;
      for (const char* n : kCosmos3GenLinearNames) known += (known.empty() ? "" : ", ") + std::string(n);
      VGEN_THROW(ExitCode::kRecipe, "fp8_config.bf16_linears[{}] is '{}', not a generation-tower linear of Cosmos 3; "
                 "one of {}", j, names[j], known);
    }
    mask = uint8_t(mask | (1u << k));
  }
  return mask;
}

}  // namespace vgen
