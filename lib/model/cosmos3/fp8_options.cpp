#include "model/cosmos3/fp8_options.h"

#include "io/recipe.h"

namespace vgen {

Cosmos3Fp8Options cosmos3_fp8_options(const Recipe& recipe) {
  Cosmos3Fp8Options o;
  if (!recipe.is_fp8()) return o;
  const Fp8Config& f = recipe.fp8;
  VGEN_CHECK(f.bf16_linears.empty(), ExitCode::kRecipe,
             "fp8_config.bf16_linears: names the Wan DiT's block linears; Cosmos 3 takes bf16_blocks and "
             "bf16_gemm_blocks over its generation layers");
  o.gemm = f.gemm;
  o.attention = f.attention;
  o.qk_int8 = f.qk_int8();
  // As the Wan DiT: the CPU's format (a GPU that would run a block-scaled one is refused before the load).
  o.gemm_format = f.gemm_format_on(0);
  o.keep_weights = !recipe.is_cuda() || f.has_bf16_steps();
  o.bf16_blocks = f.bf16_blocks;
  o.bf16_gemm_blocks = f.bf16_gemm_blocks;
  return o;
}

}  // namespace vgen
