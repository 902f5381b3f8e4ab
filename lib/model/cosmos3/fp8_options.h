// precision fp8 of Cosmos 3 (docs/fp8.md): the generation tower (every denoising step's work) runs
// its linears through per-output-channel quantised copies made at load and, with
// fp8_config.attention, its attention over [prompt | video] in fp8; the understanding tower (once
// per prompt), the patch and time embeddings and the output projection stay in the compute dtype.
// The host emulates (ops/fp8.h: the quantisation, then fp32 math).
#pragma once
#include <cstdint>
#include <vector>

#include "config/fp8_config.h"
#include "ops/fp8.h"

namespace vgen {

struct Recipe;  // io/recipe.h

struct Cosmos3Fp8Options {
  bool gemm = false;       // the generation tower's linears (q, k, v, out, the MLP) in fp8
  bool attention = false;  // the generation tower's attention in fp8
  bool qk_int8 = false;    // its Q·Kᵀ in INT8 (else e4m3)
  GemmFormat gemm_format = GemmFormat::kE4m3;
  // Keep the compute-dtype weights beside the quantised copies (the bf16 steps of
  // bf16_first_steps / bf16_last_steps need them; the host always keeps its fp32 weights).
  bool keep_weights = true;
  // fp8_config.bf16_blocks / bf16_gemm_blocks over the generation tower's layers.
  std::vector<int> bf16_blocks{};
  std::vector<int> bf16_gemm_blocks{};
  bool any() const { return gemm || attention; }
  Fp8BlockLists blocks() const& { return {bf16_blocks, bf16_gemm_blocks}; }
  Fp8BlockLists blocks() && = delete;  // a view: not of a temporary
};

// The options of the recipe's fp8_config under precision fp8 (none otherwise). kRecipe for
// fp8_config.bf16_linears (its names are the Wan DiT's block linears).
Cosmos3Fp8Options cosmos3_fp8_options(const Recipe& recipe);

}  // namespace vgen
