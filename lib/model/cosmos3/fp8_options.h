// precision fp8 of Cosmos 3 (docs/fp8.md): the generation tower (every denoising step's work) runs
// its linears through per-output-channel quantised copies made at load and, with
// fp8_config.attention, its attention over [prompt | video] in fp8; the understanding tower (once
// per prompt), the patch and time embeddings and the output projection stay in the compute dtype.
// The host emulates (ops/fp8.h: the quantisation, then fp32 math).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/fp8_config.h"
#include "ops/fp8.h"

namespace vgen {

struct Recipe;  // io/recipe.h

// The generation tower's linears by their module names in the checkpoint, in the order of the bits
// of Cosmos3Fp8Options::bf16_linears (the vocabulary of fp8_config.bf16_linears for this family).
inline constexpr const char* kCosmos3GenLinearNames[] = {
    "add_q_proj", "add_k_proj", "add_v_proj", "to_add_out",
    "mlp_moe_gen.gate_proj", "mlp_moe_gen.up_proj", "mlp_moe_gen.down_proj"};
// fp8_config.bf16_linears → that mask; kRecipe naming an unknown name and the known ones.
uint8_t cosmos3_bf16_linear_mask(const std::vector<std::string>& names);

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
  // fp8_config.bf16_linears: bit k keeps kCosmos3GenLinearNames[k] in the compute dtype in every layer.
  uint8_t bf16_linears = 0;
  bool any() const { return gemm || attention; }
  Fp8BlockLists blocks() const& { return {bf16_blocks, bf16_gemm_blocks}; }
  Fp8BlockLists blocks() && = delete;  // a view: not of a temporary
};

// The options of the recipe's fp8_config under precision fp8 (none otherwise).
Cosmos3Fp8Options cosmos3_fp8_options(const Recipe& recipe);

}  // namespace vgen
