// The model registry (model/registry.h): a checkpoint's family from model_index.json, its traits
// from the configs, and the refusal of a pipeline no family renders (kModel, naming the class).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "model/registry.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& name) { return std::string(VGEN_SOURCE_DIR) + "/tests/golden/" + name; }

TEST(Registry, WanCheckpointsAreTheWanFamily) {
  const DiffusersDir one(golden("wan21-tiny")), two(golden("wan22-tiny"));
  EXPECT_EQ(model_family(one).name(), "wan");
  EXPECT_EQ(model_family(two).name(), "wan");
  const ModelTraits t1 = model_family(one).traits(one), t2 = model_family(two).traits(two);
  EXPECT_EQ(t1.family, "wan");
  EXPECT_EQ(t1.num_experts, 1);
  EXPECT_EQ(t2.num_experts, 2);
  EXPECT_EQ(t1.native_fps, 16);
  EXPECT_EQ(t1.latent_channels, 16);
  EXPECT_EQ(t1.scale_spatial, 8);
  EXPECT_EQ(t1.scale_temporal, 4);
  EXPECT_GT(t1.prompt_dim, 0);
  EXPECT_EQ(t1.latent_shape(1, 9, 32, 48), (Shape{1, 16, 3, 4, 6}));
  EXPECT_EQ(model_family(one).check_configs(one), t1.attention_heads);
}

TEST(Registry, AnUnknownPipelineIsRefusedByName) {
  const fs::path dir = fs::temp_directory_path() / ("vgen_registry_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "model_index.json") << R"({"_class_name": "FooVideoPipeline", "transformer": ["diffusers", "X"]})";
  try {
    model_family(DiffusersDir(dir.string()));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find("FooVideoPipeline"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("wan: WanPipeline"), std::string::npos) << e.message();
  }
  fs::remove_all(dir);
}

// An I2V checkpoint is the Wan family's (WanImageToVideoPipeline), for `vgen run` and `vgen plan` as
// for the goldens; its latents keep the VAE's channels though its transformer takes 36.
TEST(Registry, ImageToVideoCheckpointsAreWan) {
  for (const char* d : {"wan21-i2v-tiny", "wan21-flf2v-tiny", "wan22-i2v-tiny"}) {
    const DiffusersDir dir(std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/" + d);
    EXPECT_EQ(model_family(dir).name(), "wan") << d;
    const ModelTraits t = model_family(dir).traits(dir);
    EXPECT_EQ(t.latent_channels, 16) << d;
    EXPECT_EQ(t.native_fps, 16) << d;
  }
  EXPECT_NE(model_family(DiffusersDir(golden("wan21-tiny"))).pipeline_classes().find("WanImageToVideoPipeline"),
            std::string::npos);
}

// The images a checkpoint takes, from its configs (docs/batch.md "Image inputs"): WanPipeline none;
// TI2V (expand_timesteps) an optional first frame; WanImageToVideoPipeline a required first frame
// and an optional last one (not under expand_timesteps).
TEST(Registry, ImageConditioningFollowsThePipelineConfigs) {
  const std::string i2v = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/";
  struct Case {
    std::string dir;
    ImageConditioning conditioning;
    bool last_image;
  };
  for (const Case& c : {Case{golden("wan21-tiny"), ImageConditioning::kNone, false},
                        Case{golden("wan22-tiny"), ImageConditioning::kNone, false},
                        Case{i2v + "wan22-ti2v-tiny", ImageConditioning::kOptional, false},
                        Case{i2v + "wan21-i2v-tiny", ImageConditioning::kRequired, false},
                        Case{i2v + "wan21-flf2v-tiny", ImageConditioning::kRequired, true},
                        Case{i2v + "wan22-i2v-tiny", ImageConditioning::kRequired, true}}) {
    const DiffusersDir dir(c.dir);
    const ImageInputs in = component_family(dir).image_inputs(dir);
    EXPECT_EQ(in.conditioning, c.conditioning) << c.dir << ": " << image_conditioning_name(in.conditioning);
    EXPECT_EQ(in.last_image, c.last_image) << c.dir;
    // FLF2V's image positions come in pairs: only it needs the last frame.
    EXPECT_EQ(in.last_image_required, c.dir.find("flf2v") != std::string::npos) << c.dir;
  }
  EXPECT_STREQ(image_conditioning_name(ImageConditioning::kOptional), "optional");
  // The traits carry them (the TI2V VAE is refused by the traits' config parse, so not read here).
  for (const std::string& d : {golden("wan21-tiny"), i2v + "wan21-i2v-tiny"}) {
    const DiffusersDir dir(d);
    const ModelTraits t = component_family(dir).traits(dir);
    EXPECT_EQ(t.images.conditioning, component_family(dir).image_inputs(dir).conditioning) << d;
    EXPECT_EQ(t.images.last_image, component_family(dir).image_inputs(dir).last_image) << d;
  }
  const DiffusersDir i2v21(i2v + "wan21-i2v-tiny");
  EXPECT_EQ(component_family(i2v21).traits(i2v21).images.conditioning, ImageConditioning::kRequired);
}

}  // namespace
