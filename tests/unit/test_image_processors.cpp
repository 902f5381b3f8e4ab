// The two image processors (model/image/) against the reference tensors: CLIPImageProcessor's
// pixel_values of the clip_image_encode case and VaeImageProcessor's image_preprocessed /
// last_image_preprocessed of the image-to-video pipeline cases (tests/golden-i2v), and the
// processors' outputs over more sizes and configs made with transformers and Pillow (tests/images).
#include <gtest/gtest.h>

#include <cmath>

#include "image_test_util.h"
#include "io/diffusers_dir.h"
#include "io/image_reader.h"
#include "model/image/clip_image_processor.h"
#include "model/image/vae_image_processor.h"

using namespace vgen;

namespace {

double rel_l2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = double(a.f32()[i]) - double(b.f32()[i]);
    num += d * d;
    den += double(b.f32()[i]) * b.f32()[i];
  }
  return std::sqrt(num / den);
}

Json golden_case(const std::string& name) {
  return read_json_file(test::golden_i2v_dir() + "/cases/" + name + ".json", ExitCode::kInput);
}

}  // namespace

TEST(ClipImageProcessor, PixelValuesOfTheClipCase) {
  VGEN_SKIP_WITHOUT_DECODERS();
  const Json c = golden_case("clip_image_encode");
  const ClipImageProcessorConfig cfg =
      read_clip_image_processor_config(test::golden_i2v_dir() + "/" + c["model_dir"].get<std::string>() +
                                       "/image_processor");
  const Tensor img = read_image(test::golden_i2v_dir() + "/" + c["image"].get<std::string>());
  const Tensor got = clip_image_preprocess(img, cfg);  // [3, 32, 32]
  const WeightStore ws = WeightStore::open(test::golden_i2v_dir() + "/cases/clip_image_encode.safetensors");
  const Tensor want = ws.get_f32("pixel_values", {1, 3, 32, 32}).reshape({3, 32, 32});
  const double d = test::max_abs_diff(got, want);
  RecordProperty("max_abs_diff", std::to_string(d));
  EXPECT_LE(rel_l2(got, want), 1e-6);
  EXPECT_EQ(d, 0.0);
}

TEST(VaeImageProcessor, ConditionImagesOfThePipelineCases) {
  VGEN_SKIP_WITHOUT_DECODERS();
  const std::pair<const char*, const char*> images[] = {
      {"pipeline_i2v_wan21", "image"}, {"pipeline_flf2v_wan21", "image"}, {"pipeline_flf2v_wan21", "last_image"},
      {"pipeline_i2v_wan22", "image"}, {"pipeline_ti2v_i2v", "image"}};
  for (auto [name, key] : images) {
    const Json c = golden_case(name);
    const DiffusersDir dir(test::golden_i2v_dir() + "/" + c["model_dir"].get<std::string>());
    const int64_t vsf = json_get_or<int64_t>(dir.component_config("vae"), "scale_factor_spatial", 8);
    const Tensor img = read_image(test::golden_i2v_dir() + "/" + c[key].get<std::string>());
    const int64_t h = c["height"].get<int64_t>(), w = c["width"].get<int64_t>();
    const Tensor got = vae_image_preprocess(img, h, w, vsf);  // [3, h, w]
    const WeightStore ws = WeightStore::open(test::golden_i2v_dir() + "/cases/" + name + ".safetensors");
    const Tensor want = ws.get_f32(std::string(key) + "_preprocessed", {1, 3, h, w}).reshape({3, h, w});
    const double d = test::max_abs_diff(got, want);
    EXPECT_EQ(d, 0.0) << name << " " << key;
    EXPECT_LE(rel_l2(got, want), 1e-6) << name << " " << key;
  }
}

TEST(ClipImageProcessor, EqualsTransformersOverSizesAndConfigs) {
  const Json& cases = test::image_cases()["clip"];
  double worst = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const ClipImageProcessorConfig cfg = clip_image_processor_config(cases[i]["config"], "case");
    const Tensor in = test::expected_images().get(fmt::format("clip_{}_in", i));
    const Tensor want = test::expected_images().get(fmt::format("clip_{}", i));
    const Tensor got = clip_image_preprocess(in, cfg);
    const double d = test::max_abs_diff(got, want);
    EXPECT_EQ(d, 0.0) << "case " << i << " " << cases[i]["config"].dump() << ": " << got.str() << " vs "
                      << want.str();
    worst = std::max(worst, d);
  }
  RecordProperty("max_abs_diff", std::to_string(worst));
}

TEST(VaeImageProcessor, EqualsDiffusersStepsOverSizes) {
  const Json& cases = test::image_cases()["vae"];
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases[i];
    const Tensor in = test::expected_images().get(fmt::format("vae_{}_in", i));
    const Tensor want = test::expected_images().get(fmt::format("vae_{}", i));
    const Tensor got = vae_image_preprocess(in, c["height"].get<int64_t>(), c["width"].get<int64_t>(),
                                            c["vae_scale_factor"].get<int64_t>());
    EXPECT_EQ(test::max_abs_diff(got, want), 0.0) << "case " << i << ": " << got.str() << " vs " << want.str();
  }
}

TEST(ClipImageProcessor, ConfigForms) {
  ClipImageProcessorConfig a = clip_image_processor_config(Json::parse(R"({"size": 224, "crop_size": 200})"), "t");
  EXPECT_EQ(a.shortest_edge, 224);
  EXPECT_EQ(a.crop_height, 200);
  EXPECT_EQ(a.crop_width, 200);
  EXPECT_EQ(a.resample, ResampleFilter::kBicubic);
  ClipImageProcessorConfig b = clip_image_processor_config(
      Json::parse(R"({"size": {"height": 30, "width": 20}, "resample": 2, "image_mean": 0.5})"), "t");
  EXPECT_EQ(b.shortest_edge, 0);
  EXPECT_EQ((clip_resize_size(100, 50, b)), (std::array<int64_t, 2>{30, 20}));
  EXPECT_EQ(b.image_mean[2], 0.5f);
  EXPECT_EQ((clip_resize_size(37, 53, a)), (std::array<int64_t, 2>{224, 320}));  // int(224 * 53 / 37)
  for (const char* bad : {R"({"image_processor_type": "SiglipImageProcessor"})", R"({"image_mean": [0.5, 0.5]})",
                          R"({"size": {"longest_edge": 10}})", R"({"resample": 0})", R"({"crop_size": -3})"}) {
    try {
      clip_image_processor_config(Json::parse(bad), "cfg.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kModel) << bad;
      EXPECT_NE(e.message().find("cfg.json"), std::string::npos) << e.message();
    }
  }
}
