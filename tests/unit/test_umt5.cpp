// UMT5 / T5 encoder: padded rows do not change the real rows, T5's shared layer-0 bias, BF16
// weights converted at load, config defaults and parameter count, errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "io/safetensors.h"
#include "model/wan/text/text_encoder.h"
#include "model/wan/text/umt5.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {
const std::string kModel = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny";
const std::string kTE = kModel + "/text_encoder";

double rel_l2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double d = double(a.f32()[i]) - b.f32()[i];
    num += d * d;
    den += double(b.f32()[i]) * b.f32()[i];
  }
  return std::sqrt(num / den);
}

// A copy of the fixture text encoder with its tensors transformed by `edit` and its config by `cfg_edit`.
template <typename Edit, typename CfgEdit>
std::string make_variant(const std::string& name, Edit edit, CfgEdit cfg_edit) {
  fs::path d = fs::temp_directory_path() / ("vgen_test_umt5_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(d);
  WeightStore ws = WeightStore::open(kTE);
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& n : ws.names()) {
    Tensor t = edit(n, ws.get(n).clone(), ws);
    if (t.defined()) out.push_back({n, t});
  }
  save_safetensors((d / "model.safetensors").string(), out);
  Json cfg = read_json_file(kTE + "/config.json", ExitCode::kModel);
  cfg_edit(cfg);
  std::ofstream(d / "config.json") << cfg.dump();
  return d.string();
}

std::vector<Umt5Sequence> some_sequences() {
  return {{{37, 5, 99, 1}, 4}, {{1}, 1}, {{12, 400, 7, 3, 250, 6, 1}, 7}};
}
}  // namespace

TEST(Umt5, PaddedRowsDoNotChangeRealRows) {
  TextEncoder enc(kModel);
  std::vector<std::string> prompts = {"dance monkey", "", "A cat walks on the grass, realistic style."};
  TextEncoding a = enc.encode(prompts, 16, false), b = enc.encode(prompts, 16, true);
  EXPECT_FALSE(a.last_hidden_state.defined());
  ASSERT_TRUE(b.last_hidden_state.defined());
  EXPECT_EQ(b.last_hidden_state.shape(), (Shape{3, 16, 32}));
  EXPECT_LT(rel_l2(a.prompt_embeds, b.prompt_embeds), 1e-6);
  // prompt_embeds = last_hidden_state on real rows, exact zeros after.
  for (int64_t p = 0; p < 3; ++p)
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t c = 0; c < 32; ++c) {
        float e = b.prompt_embeds.f32()[(p * 16 + r) * 32 + c], h = b.last_hidden_state.f32()[(p * 16 + r) * 32 + c];
        if (r < b.lengths[size_t(p)]) EXPECT_EQ(e, h);
        else EXPECT_EQ(e, 0.0f);
      }
}

TEST(Umt5, T5SharesLayerZeroBias) {
  const std::string b1 = "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight";
  const std::string b0 = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight";
  // UMT5 whose layer-1 bias is a copy of layer 0's, and T5 without a layer-1 bias: same function.
  std::string umt5 = make_variant(
      "copybias", [&](const std::string& n, Tensor t, const WeightStore& ws) { return n == b1 ? ws.get(b0).clone() : t; },
      [](Json&) {});
  std::string t5 = make_variant(
      "t5", [&](const std::string& n, Tensor t, const WeightStore&) { return n == b1 ? Tensor() : t; },
      [](Json& c) { c["model_type"] = "t5"; });
  Tensor x = Umt5Encoder::load(umt5).forward(some_sequences());
  Tensor y = Umt5Encoder::load(t5).forward(some_sequences());
  ASSERT_EQ(x.shape(), y.shape());
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(x.f32()[i], y.f32()[i]) << i;
  // And the per-layer bias matters for UMT5 (the fixture's layer-1 bias differs from layer 0's).
  Tensor z = Umt5Encoder::load(kTE).forward(some_sequences());
  EXPECT_GT(rel_l2(z, x), 1e-4);
  fs::remove_all(umt5);
  fs::remove_all(t5);
}

TEST(Umt5, Bf16WeightsAreConvertedAtLoad) {
  std::string bf = make_variant(
      "bf16", [](const std::string&, Tensor t, const WeightStore&) { return t.to(DType::kBF16); }, [](Json&) {});
  std::string rounded = make_variant(
      "rounded", [](const std::string&, Tensor t, const WeightStore&) { return t.to(DType::kBF16).to(DType::kF32); },
      [](Json&) {});
  Tensor x = Umt5Encoder::load(bf).forward(some_sequences());
  Tensor y = Umt5Encoder::load(rounded).forward(some_sequences());
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(x.f32()[i], y.f32()[i]) << i;
  Tensor z = Umt5Encoder::load(kTE).forward(some_sequences());
  EXPECT_LT(rel_l2(x, z), 3e-2);
  fs::remove_all(bf);
  fs::remove_all(rounded);
}

TEST(Umt5, XxlConfigParameterCount) {
  Json cfg = {{"model_type", "umt5"}, {"d_model", 4096}, {"d_kv", 64}, {"num_heads", 64}, {"d_ff", 10240},
              {"num_layers", 24}, {"vocab_size", 256384}, {"relative_attention_num_buckets", 32},
              {"relative_attention_max_distance", 128}, {"feed_forward_proj", "gated-gelu"},
              {"layer_norm_epsilon", 1e-6}};
  Umt5Config c = Umt5Config::from_json(cfg, "xxl");
  EXPECT_EQ(c.num_params(), 5680910336LL);
  EXPECT_TRUE(c.gated);
  EXPECT_EQ(c.act, vgen::kern::T5Act::kGeluTanh);
  size_t bf16 = TextEncoder::estimate_bytes(cfg, DType::kBF16, 512);
  EXPECT_GE(bf16, size_t(5680910336LL) * 2);
  EXPECT_LT(bf16, size_t(5680910336LL) * 2 + (size_t(1) << 30));
  // T5 v1.0 style: relu, no gate, one shared bias.
  Umt5Config t5 = Umt5Config::from_json({{"model_type", "t5"}, {"d_model", 8}, {"d_kv", 2}, {"num_heads", 2},
                                         {"d_ff", 16}, {"num_layers", 3}, {"vocab_size", 10}}, "t5");
  EXPECT_FALSE(t5.gated);
  EXPECT_EQ(t5.act, vgen::kern::T5Act::kRelu);
  EXPECT_EQ(t5.num_params(), 10 * 8 + 3 * (4 * 8 * 4 + 2 * 8 + 2 * 8 * 16) + 32 * 2 + 8);
}

TEST(Umt5, ErrorsNameTheProblem) {
  const std::string wo = "encoder.block.1.layer.1.DenseReluDense.wo.weight";
  std::string d = make_variant(
      "missing", [&](const std::string& n, Tensor t, const WeightStore&) { return n == wo ? Tensor() : t; },
      [](Json&) {});
  try {
    Umt5Encoder::load(d);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find(wo), std::string::npos) << e.message();
  }
  fs::remove_all(d);
  EXPECT_THROW(Umt5Config::from_json({{"feed_forward_proj", "gated-mystery"}}, "x"), Error);
  Umt5Encoder enc = Umt5Encoder::load(kTE);
  EXPECT_THROW(enc.forward({{{5000, 1}, 2}}), Error);  // id outside the embedding
}
