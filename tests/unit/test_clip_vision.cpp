// CLIP vision tower (model/clip): the config's refusals, the tiny encoder of the I2V fixture on the
// CPU against transformers' hidden_states[-2], the `vision_model.` weight prefix of older
// checkpoints, a batch equal to its images one by one, and the gelu / quick_gelu ops it runs.
// The GPU twin: test_clip_vision_gpu.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/json.h"
#include "io/safetensors.h"
#include "model/clip/clip_vision.h"
#include "ops/activation.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

const std::string kI2v = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/wan21-i2v-tiny";
const std::string kEncoder = kI2v + "/image_encoder";
const std::string kCase = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/cases/clip_image_encode.safetensors";

Json tiny_config() { return read_json_file(kEncoder + "/config.json", ExitCode::kModel); }

double rel_l2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = double(a.f32()[i]) - b.f32()[i];
    num += d * d;
    den += double(b.f32()[i]) * b.f32()[i];
  }
  return std::sqrt(num / den);
}

// The kModel message of from_json(j), or "" when it parses.
std::string refusal(const Json& j) {
  try {
    ClipVisionConfig::from_json(j, "image_encoder/config.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    return e.message();
  }
  return "";
}

}  // namespace

TEST(ClipVisionConfig, ReadsTheTinyConfig) {
  const ClipVisionConfig c = ClipVisionConfig::load(kEncoder);
  EXPECT_EQ(c.hidden_size, 32);
  EXPECT_EQ(c.num_hidden_layers, 3);
  EXPECT_EQ(c.head_dim(), 8);
  EXPECT_EQ(c.num_positions(), 17);  // (32 / 8)² + the class token
  EXPECT_EQ(c.act, ClipActivation::kGelu);
}

TEST(ClipVisionConfig, RefusesAMissingKeyByName) {
  for (const char* key : {"hidden_size", "patch_size", "layer_norm_eps", "hidden_act"}) {
    Json j = tiny_config();
    j.erase(key);
    const std::string msg = refusal(j);
    EXPECT_NE(msg.find(std::string("'") + key + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("image_encoder/config.json"), std::string::npos) << msg;
  }
}

TEST(ClipVisionConfig, RefusesAnUnknownActivationByName) {
  Json j = tiny_config();
  j["hidden_act"] = "gelu_new";
  const std::string msg = refusal(j);
  EXPECT_NE(msg.find("gelu_new"), std::string::npos) << msg;
  j["hidden_act"] = "quick_gelu";
  EXPECT_EQ(refusal(j), "");
}

TEST(ClipVisionConfig, RefusesInconsistentSizes) {
  Json j = tiny_config();
  j["num_attention_heads"] = 5;  // 32 is not a multiple of 5
  EXPECT_NE(refusal(j).find("num_attention_heads"), std::string::npos);
  j = tiny_config();
  j["patch_size"] = 6;  // 32 is not a multiple of 6
  EXPECT_NE(refusal(j).find("patch_size"), std::string::npos);
  j = tiny_config();
  j["model_type"] = "clip";
  EXPECT_NE(refusal(j).find("'clip'"), std::string::npos);
}

TEST(ClipVision, TinyEncoderMatchesTransformersOnTheCpu) {
  const ClipVisionEncoder enc = ClipVisionEncoder::load(kEncoder);
  EXPECT_EQ(enc.num_layers_run(), 2);  // hidden_states[-2] of 3 layers
  const WeightStore cs = WeightStore::open(kCase);
  const Tensor out = enc.penultimate_hidden_states(cs.get_f32("pixel_values"));  // [1, 17, 32]
  const Tensor ref = cs.get_f32("penultimate_hidden_states");
  ASSERT_EQ(out.shape(), ref.shape());
  EXPECT_LE(rel_l2(out, ref), 1e-5);
}

TEST(ClipVision, BatchEqualsImagesOneByOne) {
  const ClipVisionEncoder enc = ClipVisionEncoder::load(kEncoder);
  const Tensor px = WeightStore::open(kCase).get_f32("pixel_values");  // [1, 3, 32, 32]
  Tensor two = Tensor::empty({2, 3, 32, 32}, DType::kF32);
  two[0].copy_from(px[0]);
  Tensor flipped = two[1];
  for (int64_t i = 0; i < px.numel(); ++i) flipped.f32()[i] = -0.5f * px.f32()[px.numel() - 1 - i];
  const Tensor both = enc.penultimate_hidden_states(two);  // [2, 17, 32]
  for (int64_t b = 0; b < 2; ++b) {
    const Tensor one = enc.penultimate_hidden_states(two.narrow(b, 1));  // [1, 17, 32]
    EXPECT_LE(rel_l2(both[b], one[0]), 1e-6) << "image " << b;
  }
}

TEST(ClipVision, ReadsTheVisionModelPrefix) {
  const fs::path d = fs::temp_directory_path() / ("vgen_test_clip_prefix_" + std::to_string(::getpid()));
  fs::create_directories(d);
  const WeightStore ws = WeightStore::open(kEncoder);
  std::vector<std::pair<std::string, Tensor>> renamed;
  for (const std::string& n : ws.names()) renamed.push_back({"vision_model." + n, ws.get(n).to(DType::kBF16)});
  save_safetensors((d / "model.safetensors").string(), renamed);
  fs::copy_file(kEncoder + "/config.json", d / "config.json");
  const Tensor px = WeightStore::open(kCase).get_f32("pixel_values");
  const ClipVisionEncoder bf16_file = ClipVisionEncoder::load(d.string());
  const Tensor ref = ClipVisionEncoder::load(kEncoder).penultimate_hidden_states(px);
  EXPECT_LE(rel_l2(bf16_file.penultimate_hidden_states(px), ref), 3e-2);  // bf16 weights, f32 compute
  fs::remove_all(d);
}

TEST(ClipVision, RefusesAMissingTensorAndAWrongImageSize) {
  const ClipVisionConfig c = ClipVisionConfig::load(kEncoder);
  const WeightStore ws = WeightStore::open(kI2v + "/vae");
  try {
    ClipVisionEncoder(c, ws, "vae");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find("embeddings.patch_embedding.weight"), std::string::npos) << e.message();
  }
  const ClipVisionEncoder enc = ClipVisionEncoder::load(kEncoder);
  EXPECT_THROW(enc.penultimate_hidden_states(Tensor::zeros({1, 3, 64, 64}, DType::kF32)), Error);
}

TEST(ClipVisionOps, GeluErfAndQuickGelu) {
  const std::vector<float> xs = {-6.0f, -1.5f, -0.25f, 0.0f, 0.3f, 1.0f, 4.0f};
  Tensor g = Tensor::from_vector(xs, {int64_t(xs.size())}), q = g.clone();
  gelu_erf_(g);
  quick_gelu_(q);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    EXPECT_NEAR(g.f32()[i], 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))), 1e-6) << x;
    EXPECT_NEAR(q.f32()[i], x / (1.0 + std::exp(-1.702 * x)), 1e-6) << x;
  }
}
