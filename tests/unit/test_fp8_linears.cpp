// fp8_config.bf16_linears (docs/fp8.md "Switches") on the CPU: the names and their mask, the recipe
// key, and the CPU emulation's wiring (the listed linears keep their fp32 weights, no e4m3 copy, in
// every block; all eight listed is the attention-only forward bit for bit).
#include <gtest/gtest.h>

#include "dit_test_util.h"
#include "model/wan/dit/transformer_weights.h"
#include "model/wan/dit/fp8_options.h"
#include "pipeline/precision.h"

namespace vgen {
namespace {

std::string tiny_dir() { return test::golden_dir() + "/wan21-tiny/transformer"; }

const std::vector<std::string> kAll = {"attn1.to_q",     "attn1.to_k",     "attn1.to_v",     "attn1.to_out.0",
                                       "attn2.to_q",     "attn2.to_out.0", "ffn.net.0.proj", "ffn.net.2"};

void expect_recipe_error(const std::function<void()>& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(ExitCode::kRecipe)) << e.message();
    for (auto& s : fragments) EXPECT_NE(e.message().find(s), std::string::npos) << "'" << s << "' not in: " << e.message();
  }
}

TEST(Fp8Linears, NamesAndMask) {
  EXPECT_EQ(wan_fp8_linear_mask({}), 0);
  EXPECT_EQ(wan_fp8_linear_mask(kAll), 0xff);
  EXPECT_EQ(wan_fp8_linear_mask({"attn2.to_out.0"}), 1 << kLinCrossO);
  EXPECT_EQ(wan_fp8_linear_mask({"ffn.net.2", "attn1.to_q", "ffn.net.2"}), (1 << kLinFfn2) | (1 << kLinSelfQ));
  // The order is for_each_fp8_linear's: bit i is the i-th linear it visits.
  WanBlockWeights b;
  std::vector<const WanLinear*> seen;
  for_each_fp8_linear(b, [&](WanLinear& l, int i) {
    EXPECT_EQ(i, int(seen.size()));
    seen.push_back(&l);
  });
  const std::vector<const WanLinear*> want = {&b.attn1.q, &b.attn1.k, &b.attn1.v, &b.attn1.o,
                                              &b.attn2.q, &b.attn2.o, &b.ffn1,    &b.ffn2};
  EXPECT_EQ(seen, want);
  // The text K/V projections are no block linear (computed once per prompt, never fp8); nor is a
  // name without its module suffix.
  expect_recipe_error([] { wan_fp8_linear_mask({"attn2.to_q", "attn2.to_k"}); },
                      {"fp8_config.bf16_linears[1] is 'attn2.to_k', not a block linear", "ffn.net.0.proj"});
  expect_recipe_error([] { wan_fp8_linear_mask({"attn1.to_out"}); }, {"fp8_config.bf16_linears[0]", "attn1.to_out.0"});
}

TEST(Fp8Linears, RecipeKey) {
  Recipe d = parse_recipe("precision: fp8\n", "r.yaml", {});
  EXPECT_TRUE(d.fp8.bf16_linears.empty());
  EXPECT_EQ(wan_fp8_options(d).bf16_linears, 0);
  Recipe r = parse_recipe("precision: fp8\nfp8_config:\n  bf16_linears: [attn2.to_q, attn2.to_out.0]\n", "r.yaml", {});
  EXPECT_EQ(r.fp8.bf16_linears, (std::vector<std::string>{"attn2.to_q", "attn2.to_out.0"}));
  EXPECT_EQ(wan_fp8_options(r).bf16_linears, (1 << kLinCrossQ) | (1 << kLinCrossO));
  EXPECT_EQ(r.resolved.at("fp8_config").at("bf16_linears"), (Json{"attn2.to_q", "attn2.to_out.0"}));
  // One name alone without brackets, from --set.
  EXPECT_EQ(parse_recipe("precision: fp8\n", "r.yaml", {"fp8_config.bf16_linears=ffn.net.2"}).fp8.bf16_linears,
            (std::vector<std::string>{"ffn.net.2"}));
  expect_recipe_error([] { parse_recipe("precision: fp8\nfp8_config:\n  bf16_linears: {a: 1}\n", "r.yaml", {}); },
                      {"fp8_config.bf16_linears", "list of strings"});
  expect_recipe_error([] { parse_recipe("precision: fp8\nfp8_config:\n  bf16_linears: [[x]]\n", "r.yaml", {}); },
                      {"fp8_config.bf16_linears[0]", "string"});
  // An unknown name: the options of the model refuse it (t2v checks it before reading a weight).
  Recipe bad = parse_recipe("precision: fp8\n", "r.yaml", {"fp8_config.bf16_linears=[ffn.net.1]"});
  expect_recipe_error([&] { wan_fp8_options(bad); }, {"fp8_config.bf16_linears[0] is 'ffn.net.1'"});
}

TEST(Fp8Linears, EmulationWiring) {
  WeightStore ws = WeightStore::open(test::golden_dir() + "/cases/dit_forward.safetensors");
  const Tensor x = ws.get_f32("hidden_states_b2"), t = ws.get_f32("timestep_b2"),
               ctx = ws.get_f32("encoder_hidden_states_b2"), ref = ws.get_f32("output_b2");
  auto with = [&](uint8_t mask, bool gemm = true) {
    WanFp8Options o{true, gemm, true};
    o.bf16_linears = mask;
    auto m = WanTransformer::load(tiny_dir());
    m->enable_fp8(o);
    return m;
  };
  const Tensor y8 = with(0)->forward(x, t, ctx), ya = with(0, false)->forward(x, t, ctx);
  // Every linear listed: no e4m3 copy anywhere, the attention-only forward bit for bit.
  auto every = with(0xff);
  for (const WanBlockWeights& b : every->weights().blocks) {
    EXPECT_FALSE(b.attn1.q.w8.defined());
    EXPECT_FALSE(b.ffn2.w8.defined());
  }
  EXPECT_TRUE(test::bitwise_equal(every->forward(x, t, ctx), ya));
  // attn2.to_out.0 alone: its fp32 weight in every block, every other linear quantised; another
  // output than both, as close to diffusers.
  auto co = with(uint8_t(1 << kLinCrossO));
  for (const WanBlockWeights& b : co->weights().blocks) {
    EXPECT_FALSE(b.attn2.o.w8.defined());
    EXPECT_TRUE(b.attn2.q.w8.defined());
    EXPECT_TRUE(b.attn1.o.w8.defined());
    EXPECT_TRUE(b.ffn1.w8.defined());
  }
  const Tensor yco = co->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(yco, y8), 1e-5);
  EXPECT_GT(test::rel_l2(yco, ya), 1e-5);
  EXPECT_LT(test::rel_l2(yco, ref), 5e-2);
  // One of q/k/v (the device's mixed case): another output again.
  const Tensor yk = with(uint8_t(1 << kLinSelfK))->forward(x, t, ctx);
  EXPECT_GT(test::rel_l2(yk, y8), 1e-5);
  EXPECT_GT(test::rel_l2(yk, yco), 1e-5);
  // Beside bf16_gemm_blocks: a block listed there has no e4m3 copy at all, the other keeps its mask.
  WanFp8Options o{true, true, true};
  o.bf16_linears = uint8_t(1 << kLinCrossO);
  o.bf16_gemm_blocks = {0};
  auto both = WanTransformer::load(tiny_dir());
  both->enable_fp8(o);
  EXPECT_FALSE(both->weights().blocks[0].attn1.q.w8.defined());
  EXPECT_TRUE(both->weights().blocks[1].attn1.q.w8.defined());
  EXPECT_FALSE(both->weights().blocks[1].attn2.o.w8.defined());
}

}  // namespace
}  // namespace vgen
