#include "model/wan/dit/fp8_options.h"

namespace vgen {

WanFp8Options wan_fp8_options(const Recipe& recipe) {
  WanFp8Options o;
  if (!recipe.is_fp8()) return o;
  o.attention = recipe.fp8.attention;
  o.gemm = recipe.fp8.gemm;
  o.qk_int8 = recipe.fp8.qk_int8();
  o.gemm_format = recipe.fp8.gemm_int8() ? GemmFormat::kInt8 : GemmFormat::kE4m3;
  o.bf16_blocks = recipe.fp8.bf16_blocks;
  o.bf16_gemm_blocks = recipe.fp8.bf16_gemm_blocks;
  o.bf16_linears = wan_fp8_linear_mask(recipe.fp8.bf16_linears);
  o.keep_weights = !recipe.is_cuda() || recipe.fp8.has_bf16_steps();
  return o;
}

}  // namespace vgen
