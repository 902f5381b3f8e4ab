#include "model/wan/dit/fp8_options.h"

namespace vgen {

WanFp8Options wan_fp8_options(const Recipe& recipe) {
  WanFp8Options o;
  if (!recipe.is_quantised()) return o;
  o.attention = recipe.fp8.attention;
  o.gemm = recipe.fp8.gemm;
  o.qk_int8 = recipe.fp8.qk_int8();
  // As on the CPU (cc 0): a GPU runs a block-scaled format only where the path table allowed it,
  // and is refused before the load otherwise (pipeline/precision.cpp).
  o.gemm_format = recipe.fp8.gemm_format_on(0);
  o.bf16_blocks = recipe.fp8.bf16_blocks;
  o.bf16_gemm_blocks = recipe.fp8.bf16_gemm_blocks;
  o.bf16_linears = wan_fp8_linear_mask(recipe.fp8.bf16_linears);
  o.keep_weights = !recipe.is_cuda() || recipe.fp8.has_bf16_steps();
  return o;
}

}  // namespace vgen
