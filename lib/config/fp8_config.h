// Plain data of the recipe's fp8_config, read by io/recipe.cpp; beside the other plain configs so
// code that only carries the settings needs no recipe parser.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/named.h"

namespace vgen {

// The format of the block linears' GEMMs. Under precision fp8 (fp8_config.gemm_format), with
// per-token activation and per-output-channel weight scales: e4m3 (cuBLASLt's FP8 GEMM, 3 mantissa
// bits a value) or INT8 (127 steps over each row's range). Block-scaled (Blackwell's tensor cores,
// kernels/blockscale/): MXFP8 (fp8_config.scaling block: e4m3 with a power-of-two scale per 32
// values along K) and NVFP4 (precision fp4: E2M1 with an e4m3 scale per 16 values and one per
// tensor); the recipe names only e4m3 and int8 as gemm_format.
enum class GemmFormat : uint8_t { kE4m3, kInt8, kMxfp8, kNvfp4 };
inline constexpr Named<GemmFormat> kGemmFormatNames[] = {{GemmFormat::kE4m3, "e4m3"}, {GemmFormat::kInt8, "int8"}};
inline constexpr Named<GemmFormat> kAllGemmFormatNames[] = {
    {GemmFormat::kE4m3, "e4m3"}, {GemmFormat::kInt8, "int8"}, {GemmFormat::kMxfp8, "mxfp8"}, {GemmFormat::kNvfp4, "nvfp4"}};
inline const char* gemm_format_name(GemmFormat f) { return name_in(kAllGemmFormatNames, f); }
inline bool gemm_format_block_scaled(GemmFormat f) { return f == GemmFormat::kMxfp8 || f == GemmFormat::kNvfp4; }

// fp8_config.scaling: how the fp8 GEMMs scale their operands. tensor: per token and per output
// channel (gemm_format); block: MXFP8 (one power-of-two scale per 32 values along K, Blackwell's
// block-scaled tensor cores; on the CPU its emulation); auto: block on compute capability 10.x and
// 12.x unless gemm_format e4m3 asks for cuBLASLt's per-token e4m3 GEMM there, tensor elsewhere (the
// CPU included).
enum class Fp8Scaling : uint8_t { kAuto, kTensor, kBlock };
inline constexpr Named<Fp8Scaling> kFp8ScalingNames[] = {
    {Fp8Scaling::kAuto, "auto"}, {Fp8Scaling::kTensor, "tensor"}, {Fp8Scaling::kBlock, "block"}};

// How the fp8 self-attention stores Q and K for Q·Kᵀ (fp8_config.attention_qk).
enum class QkFormat : uint8_t { kE4m3, kInt8 };
inline constexpr Named<QkFormat> kQkFormatNames[] = {{QkFormat::kInt8, "int8"}, {QkFormat::kE4m3, "e4m3"}};

// fp8_config (docs/fp8.md): which parts of the DiT run in FP8 e4m3 with precision fp8 (bf16
// elsewhere; norms, modulation and softmax statistics fp32). Ignored, with a warning, under another
// precision (so `--set precision=bf16` renders the same recipe in bf16 for a comparison).
struct Fp8Config {
  bool attention = true;     // self-attention in fp8 (cross-attention stays bf16: 512 text keys)
  bool gemm = true;          // the blocks' linears attn1 q/k/v/o, attn2 q/o, ffn1, ffn2 in fp8
  // How the fp8 self-attention stores Q and K for Q·Kᵀ: "e4m3" (3 mantissa bits per value; the
  // faster kernel) or "int8" (7 bits over each 128-token block's range, as SageAttention: closer
  // where the scores spread, docs/fp8.md). P·V is e4m3 either way.
  QkFormat attention_qk = QkFormat::kE4m3;
  bool qk_int8() const { return attention_qk == QkFormat::kInt8; }
  // The linears' GEMMs (with `gemm`): "int8" (the own INT8 W8A8 kernel: 127 steps over each token's
  // and each output channel's range) or "e4m3" (cuBLASLt's FP8 GEMM, 3 mantissa bits). Per-token and
  // per-channel scales either way. int8 by default: on the H200 one 720p forward is 1.92% from bf16
  // against e4m3's 3.71%, and 2.6% faster (docs/fp8.md "INT8 GEMMs").
  GemmFormat gemm_format = GemmFormat::kInt8;
  Fp8Scaling scaling = Fp8Scaling::kAuto;  // fp8_config.scaling (above)
  bool gemm_int8() const { return gemm_format == GemmFormat::kInt8; }
  // The format the linears run in on a device of compute capability cc (0: the CPU): block scaling
  // makes fp8 MXFP8.
  GemmFormat gemm_format_on(int cc) const {
    const bool blackwell = cc / 10 == 10 || cc / 10 == 12;
    if (gemm_format == GemmFormat::kNvfp4) return gemm_format;
    const bool auto_block = scaling == Fp8Scaling::kAuto && blackwell && gemm_format != GemmFormat::kE4m3;
    return scaling == Fp8Scaling::kBlock || auto_block ? GemmFormat::kMxfp8 : gemm_format;
  }
  const char* gemm_label() const {  // the format as plans print it (auto: as on the CPU)
    if (gemm_format == GemmFormat::kNvfp4) return "NVFP4";
    if (scaling == Fp8Scaling::kBlock) return "MXFP8";
    return gemm_int8() ? "INT8" : "e4m3";
  }
  int bf16_first_steps = 0;  // the first N denoising steps run wholly in bf16
  int bf16_last_steps = 0;   // the last N denoising steps run wholly in bf16
  // Transformer blocks run wholly in bf16 at every step (their linears keep their bf16 weights, no
  // e4m3 copy): indices from 0, negative ones from the end (-1 the last block); checked against the
  // model's block count when it loads.
  std::vector<int> bf16_blocks{};
  // Transformer blocks whose linears run in bf16 at every step (no e4m3 copy) while their
  // self-attention stays as `attention` says: the GEMMs carry most of fp8's error, so this buys
  // accuracy for less time than bf16_blocks, the less the longer the sequence (docs/fp8.md
  // "Switches"). Same indices and check as bf16_blocks.
  std::vector<int> bf16_gemm_blocks{};
  // Block linears that run in bf16 in every block, by their module names in the checkpoint
  // ("attn2.to_q", "ffn.net.2", ...: kWanFp8LinearNames, checked when the model loads): for
  // accuracy where one kind of linear carries more of the error than its share of the time.
  std::vector<std::string> bf16_linears{};
  // Whether denoising step `index` (0-based) of `total` runs in fp8 (not one of the bf16 steps).
  bool step_in_fp8(int index, int total) const {
    return index >= bf16_first_steps && index < total - bf16_last_steps;
  }
  // Some step of a `total`-step loop runs in bf16 (the bf16 weights are needed beside the fp8 ones).
  bool has_bf16_steps() const { return bf16_first_steps > 0 || bf16_last_steps > 0; }
};

// precision fp4's switches (fp4_config, docs/fp8.md "Block scaling"): the fp8 ones less attention,
// attention_qk, gemm_format and scaling; NVFP4 block linears, self-attention in bf16, and the first
// and last denoising steps wholly in bf16 by default (the steps where the latents carry the most
// structure, set either to 0 for fp4 throughout).
inline Fp8Config fp4_config_defaults() {
  Fp8Config f;
  f.attention = false;
  f.gemm_format = GemmFormat::kNvfp4;
  f.bf16_first_steps = 1;
  f.bf16_last_steps = 1;
  return f;
}

}  // namespace vgen
