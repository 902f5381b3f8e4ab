// WanTransformer: config parsing and validation, weight loading (shape errors, zero-copy f32,
// bf16 conversion), and the sequence-sharded forward (threads as ranks) against a single rank.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "dit_test_util.h"
#include "io/safetensors.h"
#include "model/wan/dit/transformer.h"
#include "model/wan/dit/transformer_block.h"
#include "model/dit_step.h"

namespace vgen {
namespace {
namespace fs = std::filesystem;

std::string tiny_dir() { return test::golden_dir() + "/wan21-tiny/transformer"; }

fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("vgen_test_dit_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write_json(const fs::path& p, const Json& j) { std::ofstream(p) << j.dump(1); }

TEST(DitConfig, DefaultsAndFixture) {
  auto d = WanTransformerConfig::from_json(Json::object(), "test");
  EXPECT_EQ(d.dim(), 5120);
  EXPECT_EQ(d.num_layers, 40);
  EXPECT_EQ(d.ffn_dim, 13824);
  EXPECT_EQ(d.rope_t_dim(), 44);
  EXPECT_EQ(d.rope_h_dim(), 42);
  EXPECT_EQ(d.rope_w_dim(), 42);
  EXPECT_EQ(d.out_channels, 16);
  auto c = WanTransformerConfig::load(tiny_dir());
  EXPECT_EQ(c.dim(), 24);
  EXPECT_EQ(c.num_layers, 2);
  EXPECT_EQ(c.ffn_dim, 48);
  EXPECT_EQ(c.text_dim, 32);
  EXPECT_EQ(c.rope_t_dim(), 4);
  EXPECT_EQ(c.rope_h_dim(), 4);
  EXPECT_EQ((c.patch_size), (std::array<int, 3>{1, 2, 2}));
  auto ch = WanTransformerConfig::from_json(Json{{"in_channels", 48}}, "test");
  EXPECT_EQ(ch.out_channels, 48);  // out_channels defaults to in_channels
}

void expect_config_error(const Json& j, const std::string& key) {
  try {
    WanTransformerConfig::from_json(j, "cfg.json");
    FAIL() << "no error for " << j.dump();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find(key), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("cfg.json"), std::string::npos) << e.message();
  }
}

TEST(DitConfig, ValidationNamesTheKey) {
  expect_config_error(Json{{"qk_norm", "rms_norm"}}, "qk_norm");
  expect_config_error(Json{{"attention_head_dim", 13}}, "attention_head_dim");
  expect_config_error(Json{{"attention_head_dim", 4}}, "attention_head_dim");
  expect_config_error(Json{{"patch_size", {1, 2}}}, "patch_size");
  expect_config_error(Json{{"patch_size", {1, 0, 2}}}, "patch_size");
  // The image path: image_dim and added_kv_proj_dim together, the latter = heads·head_dim (5120 here).
  expect_config_error(Json{{"image_dim", 1280}}, "added_kv_proj_dim");
  expect_config_error(Json{{"added_kv_proj_dim", 5120}}, "image_dim");
  expect_config_error(Json{{"image_dim", 1280}, {"added_kv_proj_dim", 4096}}, "added_kv_proj_dim");
  expect_config_error(Json{{"pos_embed_seq_len", 514}}, "pos_embed_seq_len");
  expect_config_error(Json{{"image_dim", 1280}, {"added_kv_proj_dim", 5120}, {"pos_embed_seq_len", 513}},
                      "pos_embed_seq_len");
  const auto i2v = WanTransformerConfig::from_json(
      Json{{"image_dim", 1280}, {"added_kv_proj_dim", 5120}, {"pos_embed_seq_len", 514}}, "flf2v");
  EXPECT_TRUE(i2v.has_image());
  EXPECT_EQ(*i2v.pos_embed_seq_len, 514);
  expect_config_error(Json{{"num_layers", "forty"}}, "num_layers");
  expect_config_error(Json{{"freq_dim", 255}}, "freq_dim");
}

TEST(DitWeights, ShapeMismatchNamesTensorAndShapes) {
  fs::path d = scratch("shape");
  Json cfg = read_json_file(tiny_dir() + "/config.json", ExitCode::kModel);
  cfg["ffn_dim"] = 50;
  write_json(d / "config.json", cfg);
  fs::create_symlink(fs::path(tiny_dir()) / "diffusion_pytorch_model.safetensors",
                     d / "diffusion_pytorch_model.safetensors");
  try {
    WanTransformer::load(d.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find("blocks.0.ffn.net.0.proj.weight"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[48,24]"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("[50,24]"), std::string::npos) << e.message();
  }
  cfg["ffn_dim"] = 48;
  cfg["num_layers"] = 3;
  write_json(d / "config.json", cfg);
  try {
    WanTransformer::load(d.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find("blocks.2."), std::string::npos) << e.message();
  }
  fs::remove_all(d);
}

struct FixtureInputs {
  Tensor x, t, ctx, ref;
};
FixtureInputs fixture(const std::string& suffix) {
  WeightStore ws = WeightStore::open(test::golden_dir() + "/cases/dit_forward.safetensors");
  return {ws.get_f32("hidden_states" + suffix), ws.get_f32("timestep" + suffix),
          ws.get_f32("encoder_hidden_states" + suffix), ws.get_f32("output" + suffix)};
}

TEST(DitWeights, F32ZeroCopyAndBf16Conversion) {
  auto f32 = WanTransformer::load(tiny_dir());
  EXPECT_EQ(f32->weights().converted_bytes, 0u);  // mmap views
  EXPECT_EQ(f32->weights().bytes, WeightStore::open(tiny_dir()).total_bytes());

  // The same weights stored as bf16, and as f32 holding the bf16-rounded values: identical forwards.
  fs::path bf = scratch("bf16"), rounded = scratch("rounded");
  WeightStore ws = WeightStore::open(tiny_dir());
  std::vector<std::pair<std::string, Tensor>> as_bf16, as_rounded;
  for (auto& name : ws.names()) {
    Tensor b = ws.get(name).to(DType::kBF16);
    as_bf16.push_back({name, b});
    as_rounded.push_back({name, b.to(DType::kF32)});
  }
  save_safetensors((bf / "diffusion_pytorch_model.safetensors").string(), as_bf16);
  save_safetensors((rounded / "diffusion_pytorch_model.safetensors").string(), as_rounded);
  fs::copy_file(fs::path(tiny_dir()) / "config.json", bf / "config.json");
  fs::copy_file(fs::path(tiny_dir()) / "config.json", rounded / "config.json");
  auto mb = WanTransformer::load(bf.string());
  auto mr = WanTransformer::load(rounded.string());
  EXPECT_EQ(mb->weights().converted_bytes, mb->weights().bytes);
  EXPECT_EQ(mb->weights().bytes, f32->weights().bytes);
  FixtureInputs in = fixture("_b2");
  Tensor yb = mb->forward(in.x, in.t, in.ctx), yr = mr->forward(in.x, in.t, in.ctx);
  EXPECT_TRUE(test::bitwise_equal(yb, yr));
  EXPECT_GT(test::rel_l2(yb, in.ref), 0.0);  // rounding the weights changed something
  EXPECT_LT(test::rel_l2(yb, in.ref), 3e-2);
  fs::remove_all(bf);
  fs::remove_all(rounded);
}

TEST(DitForward, MatchesFixtureAndRejectsBadInputs) {
  auto m = WanTransformer::load(tiny_dir());
  for (std::string s : {"", "_b2"}) {
    FixtureInputs in = fixture(s);
    Tensor y = m->forward(in.x, in.t, in.ctx);
    EXPECT_EQ(y.shape(), in.ref.shape());
    EXPECT_LT(test::rel_l2(y, in.ref), 1e-5) << "batch " << s;
  }
  FixtureInputs in = fixture("");
  EXPECT_THROW(m->forward(in.x.reshape({1, 8, 6, 8, 8}), in.t, in.ctx), Error);   // channels
  EXPECT_THROW(m->forward(in.x.reshape({1, 16, 3, 4, 16}).narrow(0, 1), in.t, in.ctx.reshape({1, 32, 16})), Error);
  EXPECT_THROW(m->forward(in.x, Tensor::from_vector({1.f, 2.f}, {2}), in.ctx), Error);  // timestep batch
}

// forward_local on n thread-ranks, gathered by dit_predict, equals the single-rank forward.
void check_sharded(const WanTransformer& m, const FixtureInputs& in, int n) {
  Tensor want = m.forward(in.x, in.t, in.ctx);
  TextContext text = m.prepare_text(in.ctx);
  auto group = std::make_shared<test::ThreadGroup>(n);
  std::vector<Tensor> got(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      auto comm = std::make_shared<test::ThreadComm>(group, r);
      test::GatherKvAttention attn(comm);
      got[size_t(r)] = dit_predict(m, in.x, in.t, text, *comm, attn);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(got[size_t(r)].shape(), want.shape());
    EXPECT_LT(test::rel_l2(got[size_t(r)], want), 1e-6) << "degree " << n << " rank " << r;
    EXPECT_TRUE(test::bitwise_equal(got[size_t(r)], got[0]));  // every rank holds the same prediction
  }
}

TEST(DitForward, SequenceShardedEqualsSingleRank) {
  auto m = WanTransformer::load(tiny_dir());
  FixtureInputs in = fixture("_b2");  // 48 tokens, two samples with different timesteps
  for (int n : {2, 5, 7}) check_sharded(*m, in, n);  // 7: 49 padded, the last rank holds 6 real tokens
  // A grid whose token count is odd: 3·1·3 = 9 tokens over 2 and 4 ranks.
  FixtureInputs small = in;
  small.x = Tensor::empty({2, 16, 3, 2, 6}, DType::kF32);
  for (int64_t i = 0; i < small.x.numel(); ++i) small.x.f32()[i] = in.x.f32()[i];
  for (int n : {2, 4, 11}) check_sharded(*m, small, n);  // 11 > 9: ranks with no real token
}

// Per-token timesteps [B, S] (Wan 2.2 TI2V): with every token at its sample's t the host forward is
// the per-sample one bit for bit (the same values embedded, the same modulation per token); i64
// timesteps read as f32; the first frame's tokens at 0 change the output; other shapes are refused.
TEST(DitForward, PerTokenTimesteps) {
  auto m = WanTransformer::load(tiny_dir());
  FixtureInputs in = fixture("_b2");  // 48 tokens (3 frames of 16), two samples with different timesteps
  const int64_t B = 2, S = m->num_tokens(in.x.shape());
  const Tensor want = m->forward(in.x, in.t, in.ctx);
  EXPECT_TRUE(test::bitwise_equal(m->forward(in.x, test::per_token_timesteps(in.t, S), in.ctx), want));
  const Tensor i2v = test::per_token_timesteps(in.t, S, 16);  // [B, S]
  Tensor i64 = Tensor::empty({B, S}, DType::kI64);
  for (int64_t i = 0; i < B * S; ++i) i64.data<int64_t>()[i] = int64_t(i2v.f32()[i]);
  const Tensor y = m->forward(in.x, i2v, in.ctx);
  EXPECT_TRUE(test::bitwise_equal(m->forward(in.x, i64, in.ctx), y));
  EXPECT_GT(test::rel_l2(y, want), 1e-3);
  EXPECT_THROW(m->forward(in.x, test::per_token_timesteps(in.t, S - 1), in.ctx), Error);  // tokens
  EXPECT_THROW(m->forward(in.x, test::per_token_timesteps(in.t.narrow(0, 1), S), in.ctx), Error);  // batch
  EXPECT_THROW(m->forward(in.x, i2v.reshape({B, S, 1}), in.ctx), Error);                            // rank
}

// Per-token timesteps shard with the tokens: every degree, with padding and with ranks that hold
// padding only, equals the single rank.
TEST(DitForward, PerTokenTimestepsShardWithTheTokens) {
  auto m = WanTransformer::load(tiny_dir());
  FixtureInputs in = fixture("_b2");
  in.t = test::per_token_timesteps(in.t, 48, 16);  // [2, 48]: the first frame at 0
  for (int n : {2, 5, 7}) check_sharded(*m, in, n);
  FixtureInputs small = in;  // 3·1·3 = 9 tokens, the first frame's 3 at 0
  small.x = Tensor::empty({2, 16, 3, 2, 6}, DType::kF32);
  for (int64_t i = 0; i < small.x.numel(); ++i) small.x.f32()[i] = in.x.f32()[i];
  small.t = test::per_token_timesteps(fixture("_b2").t, 9, 3);
  for (int n : {2, 4, 11}) check_sharded(*m, small, n);
}

}  // namespace
}  // namespace vgen

// The device DiT's gate fold (transformer_block.cpp gated_linear_add): a gated copy of a [N, K] weight
// pays when the rows exceed K per distinct gate.
TEST(DitModel, DeviceGateFoldRule) {
  EXPECT_TRUE(vgen::folds_gate(75600, 13824, 1));    // 720p, one GPU
  EXPECT_TRUE(vgen::folds_gate(2 * 75600, 5120, 2));  // two CFG samples of their own gates
  EXPECT_FALSE(vgen::folds_gate(8190, 13824, 1));    // 480p over 4 ranks: FFN2 left to the norm
  EXPECT_TRUE(vgen::folds_gate(8190, 5120, 1));
  EXPECT_FALSE(vgen::folds_gate(384, 384, 1));
}
