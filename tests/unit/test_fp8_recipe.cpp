// precision fp8's recipe keys (docs/fp8.md, docs/recipe.md): defaults, good and bad values (each
// error names its key), the per-step switch, the block lists and their checks, and fp8_config
// under another precision. The rest of precision fp8 on the CPU is test_fp8.cpp.
#include <gtest/gtest.h>

#include "core/error.h"
#include "io/recipe.h"
#include "ops/fp8.h"
#include "model/wan/dit/fp8_options.h"
#include "pipeline/precision.h"

namespace vgen {
namespace {

void expect_error(const std::string& yaml, const std::vector<std::string>& sets,
                  const std::vector<std::string>& fragments) {
  try {
    parse_recipe(yaml, "r.yaml", sets);
    FAIL() << "no error for:\n" << yaml;
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(ExitCode::kRecipe)) << e.message();
    for (auto& f : fragments) EXPECT_NE(e.message().find(f), std::string::npos) << "'" << f << "' not in: " << e.message();
  }
}

TEST(Fp8Recipe, KeysAndDefaults) {
  Recipe d = parse_recipe("precision: fp8\n", "r.yaml", {});
  EXPECT_TRUE(d.is_fp8());
  EXPECT_TRUE(d.fp8.attention);
  EXPECT_TRUE(d.fp8.gemm);
  EXPECT_EQ(d.fp8.bf16_first_steps, 0);
  EXPECT_EQ(d.fp8.bf16_last_steps, 0);
  EXPECT_EQ(d.fp8.attention_qk, QkFormat::kE4m3);
  EXPECT_FALSE(wan_fp8_options(d).qk_int8);
  EXPECT_EQ(d.fp8.gemm_format, GemmFormat::kInt8);
  EXPECT_EQ(wan_fp8_options(d).gemm_format, GemmFormat::kInt8);
  EXPECT_EQ(wan_fp8_options(parse_recipe("precision: fp8\nfp8_config: {gemm_format: e4m3}\n", "r.yaml", {})).gemm_format,
            GemmFormat::kE4m3);
  EXPECT_EQ(d.compute_dtype(), DType::kF32);  // the CPU emulates fp8 in fp32
  Recipe r = parse_recipe(R"(device: cuda
precision: fp8
fp8_config:
  attention: false
  gemm: true
  attention_qk: int8
  gemm_format: int8
  bf16_first_steps: 2
  bf16_last_steps: 3
generation: {num_inference_steps: 10}
)",
                          "r.yaml", {});
  EXPECT_EQ(r.compute_dtype(), DType::kBF16);  // bf16 around the fp8 ops on the GPU
  EXPECT_FALSE(r.fp8.attention);
  EXPECT_TRUE(r.fp8.gemm);
  EXPECT_EQ(r.fp8.bf16_first_steps, 2);
  EXPECT_EQ(r.fp8.bf16_last_steps, 3);
  EXPECT_TRUE(r.fp8.has_bf16_steps());
  EXPECT_EQ(r.fp8.attention_qk, QkFormat::kInt8);
  EXPECT_TRUE(wan_fp8_options(r).qk_int8);
  EXPECT_EQ(wan_fp8_options(r).gemm_format, GemmFormat::kInt8);
  const Json& j = r.resolved.at("fp8_config");  // timing.json's resolved recipe
  EXPECT_EQ(j.at("attention"), false);
  EXPECT_EQ(j.at("bf16_last_steps"), 3);
  EXPECT_EQ(j.at("attention_qk"), "int8");
  EXPECT_EQ(j.at("gemm_format"), "int8");
  Recipe s = parse_recipe("precision: fp8\n", "r.yaml", {"fp8_config.gemm=false", "fp8_config.bf16_last_steps=1"});
  EXPECT_FALSE(s.fp8.gemm);
  EXPECT_EQ(s.fp8.bf16_last_steps, 1);
}

TEST(Fp8Recipe, StepSwitch) {
  Fp8Config f;
  f.bf16_first_steps = 2;
  f.bf16_last_steps = 1;
  std::vector<bool> got;
  for (int i = 0; i < 6; ++i) got.push_back(f.step_in_fp8(i, 6));
  EXPECT_EQ(got, (std::vector<bool>{false, false, true, true, true, false}));
  EXPECT_FALSE(f.step_in_fp8(0, 3));
  EXPECT_FALSE(f.step_in_fp8(2, 3));
  EXPECT_TRUE(Fp8Config{}.step_in_fp8(0, 1));
  EXPECT_FALSE(Fp8Config{}.has_bf16_steps());
}

TEST(Fp8Recipe, BadValuesNameTheKey) {
  expect_error("precision: fp8\nfp8_config:\n  attention: 1\n", {}, {"r.yaml:3", "fp8_config.attention", "true or false"});
  expect_error("precision: fp8\nfp8_config:\n  gemm: \"yes\"\n", {}, {"fp8_config.gemm", "true or false"});
  expect_error("precision: fp8\nfp8_config:\n  bf16_first_steps: -1\n", {}, {"fp8_config.bf16_first_steps", ">= 0"});
  expect_error("precision: fp8\nfp8_config:\n  bf16_last_steps: 1.5\n", {}, {"fp8_config.bf16_last_steps", "integer"});
  expect_error("precision: fp8\nfp8_config:\n  attention_qk: int4\n", {}, {"fp8_config.attention_qk", "int8 | e4m3"});
  expect_error("precision: fp8\nfp8_config:\n  gemm_format: fp16\n", {}, {"fp8_config.gemm_format", "e4m3 | int8"});
  expect_error("precision: fp8\nfp8_config:\n  gem: true\n", {}, {"fp8_config.gem", "did you mean 'gemm'"});
  expect_error("precision: fp8\nfp8_config: [1]\n", {}, {"fp8_config", "expected a mapping"});
  expect_error("precision: fp8\n", {"fp8_config.bf16_steps=2"}, {"--set fp8_config.bf16_steps=2", "unknown key"});
  expect_error("precision: fp16\n", {}, {"precision", "fp32 | bf16 | fp8"});
  // The device DWDP holds block slices without e4m3 copies: fp8 GEMMs are refused there.
  expect_error("device: cuda\nprecision: fp8\nparallel_config: {dwdp_size: 2}\n", {},
               {"fp8_config.gemm", "dwdp_size 2", "device cuda"});
  EXPECT_NO_THROW(parse_recipe("device: cuda\nprecision: fp8\nfp8_config: {gemm: false}\nparallel_config: {dwdp_size: 2}\n",
                               "r.yaml", {}));
  EXPECT_NO_THROW(parse_recipe("device: cpu\nprecision: fp8\nparallel_config: {dwdp_size: 2}\n", "r.yaml", {}));
}

TEST(Fp8Recipe, Bf16Blocks) {
  Recipe r = parse_recipe("precision: fp8\nfp8_config: {bf16_blocks: [0, -1]}\n", "r.yaml", {});
  EXPECT_EQ(r.fp8.bf16_blocks, (std::vector<int>{0, -1}));
  EXPECT_EQ(wan_fp8_options(r).bf16_blocks, (std::vector<int>{0, -1}));
  EXPECT_EQ(r.resolved.at("fp8_config").at("bf16_blocks"), (Json{0, -1}));
  EXPECT_EQ(parse_recipe("precision: fp8\nfp8_config: {bf16_blocks: 3}\n", "r.yaml", {}).fp8.bf16_blocks,
            (std::vector<int>{3}));
  EXPECT_EQ(parse_recipe("precision: fp8\n", "r.yaml", {"fp8_config.bf16_blocks=[1, 2]"}).fp8.bf16_blocks,
            (std::vector<int>{1, 2}));
  EXPECT_TRUE(parse_recipe("precision: fp8\n", "r.yaml", {}).fp8.bf16_blocks.empty());
  EXPECT_TRUE(parse_recipe("precision: fp8\nfp8_config: {bf16_blocks: [2]}\n", "r.yaml", {"precision=bf16"})
                  .fp8.bf16_blocks.empty());  // ignored with another precision, as the other keys
  expect_error("precision: fp8\nfp8_config: {bf16_blocks: [0, x]}\n", {}, {"fp8_config.bf16_blocks[1]", "integer"});
  expect_error("precision: fp8\nfp8_config: {bf16_blocks: {a: 1}}\n", {},
               {"fp8_config.bf16_blocks", "list of block indices"});
  // Resolved against the model's block count: negative indices from the end, the rest an error.
  const std::vector<int> b = {0, -1, 2};
  std::vector<bool> listed;
  for (int64_t i = 0; i < 4; ++i) listed.push_back(fp8_bf16_block(b, i, 4));
  EXPECT_EQ(listed, (std::vector<bool>{true, false, true, true}));
  EXPECT_NO_THROW(fp8_check_bf16_blocks({-4, 3}, 4));
  for (const std::vector<int>& bad : {std::vector<int>{0, 4}, std::vector<int>{0, -5}}) {
    try {
      fp8_check_bf16_blocks(bad, 4);
      FAIL() << bad[1];
    } catch (const Error& e) {
      EXPECT_EQ(int(e.code()), int(ExitCode::kRecipe));
      EXPECT_NE(e.message().find("fp8_config.bf16_blocks[1] is " + std::to_string(bad[1])), std::string::npos)
          << e.message();
      EXPECT_NE(e.message().find("4 transformer blocks"), std::string::npos) << e.message();
    }
  }
}

TEST(Fp8Recipe, Bf16GemmBlocks) {
  Recipe r = parse_recipe("precision: fp8\nfp8_config: {bf16_gemm_blocks: [1, -1], bf16_blocks: 0}\n", "r.yaml", {});
  EXPECT_EQ(r.fp8.bf16_gemm_blocks, (std::vector<int>{1, -1}));
  EXPECT_EQ(wan_fp8_options(r).bf16_gemm_blocks, (std::vector<int>{1, -1}));
  EXPECT_EQ(r.resolved.at("fp8_config").at("bf16_gemm_blocks"), (Json{1, -1}));
  EXPECT_EQ(parse_recipe("precision: fp8\n", "r.yaml", {"fp8_config.bf16_gemm_blocks=3"}).fp8.bf16_gemm_blocks,
            (std::vector<int>{3}));
  EXPECT_TRUE(parse_recipe("precision: fp8\n", "r.yaml", {}).fp8.bf16_gemm_blocks.empty());
  expect_error("precision: fp8\nfp8_config: {bf16_gemm_blocks: [x]}\n", {},
               {"fp8_config.bf16_gemm_blocks[0]", "integer"});
  // What of each block runs in fp8: block 0 wholly bf16, 1 and 3 (-1) their linears, 2 all fp8.
  const WanFp8Options o = wan_fp8_options(r);
  std::vector<int> gemm, attn;
  for (int64_t i = 0; i < 4; ++i) {
    gemm.push_back(o.blocks().gemm_in_fp8(i, 4));
    attn.push_back(o.blocks().attention_in_fp8(i, 4));
  }
  EXPECT_EQ(gemm, (std::vector<int>{0, 0, 1, 0}));
  EXPECT_EQ(attn, (std::vector<int>{0, 1, 1, 1}));
  const Fp8Switches s = o.block_switches(1, 4, {true, true, true});
  EXPECT_TRUE(s.attention && !s.gemm && s.qk_int8);
  // The check names the key of the bad index.
  const std::vector<int> whole = {0}, gemm_bad = {1, 4};
  try {
    Fp8BlockLists{whole, gemm_bad}.check(4);
    FAIL() << "block 4 of 4 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(ExitCode::kRecipe));
    EXPECT_NE(e.message().find("fp8_config.bf16_gemm_blocks[1] is 4"), std::string::npos) << e.message();
  }
}

TEST(Fp8Recipe, IgnoredWithAnotherPrecision) {
  // Ignored (with a warning), so `--set precision=bf16` renders an fp8 recipe in bf16 unchanged.
  Recipe r = parse_recipe("precision: fp8\nfp8_config: {attention: false, bf16_first_steps: 3}\n", "r.yaml",
                          {"precision=bf16"});
  EXPECT_FALSE(r.is_fp8());
  EXPECT_TRUE(r.fp8.attention);  // back to the defaults
  EXPECT_EQ(r.fp8.bf16_first_steps, 0);
  EXPECT_EQ(r.resolved.at("fp8_config").at("bf16_first_steps"), 0);
  // ...but a wrong value is still an error.
  expect_error("precision: bf16\nfp8_config: {attention: maybe}\n", {}, {"fp8_config.attention"});
}

}  // namespace
}  // namespace vgen
