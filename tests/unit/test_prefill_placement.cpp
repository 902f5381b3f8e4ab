// text.device for Cosmos 3's understanding tower (plan/prefill_placement.h): the value parsed and
// refused by the family it is not for, the rule of `auto` on small numbers, the choice on the
// config-only Super copy against an 80 GB H100 (streamed) and an H200 (resident), the memory estimate
// of a streamed tower (only what sits on the GPU), the prefill's host-to-device copies priced under
// its compute, and vgen run's resolution of auto into the recipe.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/json.h"
#include "io/diffusers_dir.h"
#include "model/registry.h"
#include "plan/plan_fit.h"
#include "plan/prefill_placement.h"
#include "plan/time_model.h"

using namespace vgen;

namespace {

const std::string kSrc = VGEN_SOURCE_DIR;
constexpr double kGiB = double(1ull << 30);

Recipe recipe_for(const std::string& model, const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"model=" + kSrc + "/recipes/models/" + model, "device=cuda", "precision=bf16",
                                  "generation.height=720", "generation.width=1280", "generation.num_frames=189",
                                  "generation.num_inference_steps=35", "generation.guidance_scale=6.0",
                                  "generation.max_sequence_length=1024"};
  all.insert(all.end(), sets.begin(), sets.end());
  return parse_recipe("{}", "test", all);
}

HardwareProfile profile(const std::string& name) {
  return load_hardware_profile(kSrc + "/recipes/hardware/" + name + ".yaml");
}

void expect_recipe_error(const std::function<void()>& fn, const std::string& text) {
  try {
    fn();
    FAIL() << "no error; expected " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(PrefillPlacement, RecipeValue) {
  Recipe r = parse_recipe("device: cuda\ntext:\n  device: stream\n", "r.yaml", {});
  EXPECT_EQ(r.text.device, TextDevice::kStream);
  EXPECT_EQ(r.resolved["text"]["device"], "stream");
  EXPECT_EQ(parse_recipe("", "r.yaml", {"text.device=stream"}).text.device, TextDevice::kStream);
}

// cpu is Wan's, stream Cosmos 3's: each family refuses the other's by its key (exit 3), in the
// preflight's check_recipe and in `vgen plan`.
TEST(PrefillPlacement, EachFamilyRefusesTheOthersValue) {
  const Recipe cosmos_cpu = recipe_for("cosmos3-nano", {"text.device=cpu"});
  const DiffusersDir cosmos(cosmos_cpu.model);
  expect_recipe_error([&] { model_family(cosmos).check_recipe(cosmos_cpu, cosmos); }, "text.device cpu");
  expect_recipe_error([&] { read_plan_model_configs(cosmos_cpu); }, "text.device cpu");
  const Recipe wan_stream = recipe_for("wan2.1-t2v-14b", {"text.device=stream", "generation.num_frames=81"});
  const DiffusersDir wan(wan_stream.model);
  expect_recipe_error([&] { model_family(wan).check_recipe(wan_stream, wan); }, "text.device stream");
  expect_recipe_error([&] { read_plan_model_configs(wan_stream); }, "text.device stream");
  // The values each family takes pass.
  model_family(cosmos).check_recipe(recipe_for("cosmos3-nano", {"text.device=stream"}), cosmos);
  model_family(wan).check_recipe(recipe_for("wan2.1-t2v-14b", {"text.device=cpu"}), wan);
}

// Stream only when the resident estimate exceeds 95% of the GPU and the streamed one does not.
TEST(PrefillPlacement, AutoRule) {
  EXPECT_FALSE(prefill_should_stream(90, 50, 100));   // fits resident (90 ≤ 95)
  EXPECT_FALSE(prefill_should_stream(95, 50, 100));   // exactly the budget still fits
  EXPECT_TRUE(prefill_should_stream(96, 50, 100));    // only the streamed one fits
  EXPECT_TRUE(prefill_should_stream(200, 95, 100));
  EXPECT_FALSE(prefill_should_stream(200, 96, 100));  // neither fits: resident, the memory check says so
}

TEST(PrefillPlacement, SuperOnH100StreamsOnH200StaysResident) {
  const Recipe r = recipe_for("cosmos3-super", {});
  for (const char* hw : {"h100-hgx8", "h200"}) {
    const HardwareProfile p = profile(hw);
    PlanModel md = read_plan_model_configs(r);
    ASSERT_TRUE(md.prompt_prefix.has_value());
    EXPECT_FALSE(md.prompt_prefix->streamed);  // auto before it is weighed
    const PrefillPlacement c = place_prefill(r, 1, md, p.memory_gib * kGiB, p.name);
    EXPECT_TRUE(c.decided) << hw;
    const bool h100 = std::string(hw) == "h100-hgx8";
    EXPECT_EQ(c.streamed, h100) << hw << ": " << c.why;
    EXPECT_EQ(md.prompt_prefix->streamed, h100) << hw;
    EXPECT_NE(md.prompt_prefix->why.find("text.device auto"), std::string::npos) << md.prompt_prefix->why;
    const Plan plan = make_plan(r, 1, md, false);
    EXPECT_LE(plan_memory_total(plan), 0.95 * p.memory_gib * kGiB) << hw;  // it fits either way
    const std::string text = format_plan(r, plan);
    EXPECT_NE(text.find(h100 ? "understanding tower: streamed" : "understanding tower: resident"), std::string::npos)
        << text;
    if (h100) {
      EXPECT_GT(c.resident_bytes, 0.95 * p.memory_gib * kGiB);  // both towers would not fit
    }
  }
}

// Nano fits an H100 with both towers: auto keeps it resident. stream is taken as asked, and device
// cpu (the host holds every weight) or a weighing without a GPU leaves the family's placement.
TEST(PrefillPlacement, OnlyAutoOnTheGpuIsWeighed) {
  const double h100 = profile("h100-hgx8").memory_gib * kGiB;
  PlanModel nano = read_plan_model_configs(recipe_for("cosmos3-nano", {}));
  EXPECT_FALSE(place_prefill(recipe_for("cosmos3-nano", {}), 1, nano, h100, "h100").streamed);
  const Recipe stream = recipe_for("cosmos3-nano", {"text.device=stream"});
  PlanModel md = read_plan_model_configs(stream);
  EXPECT_TRUE(md.prompt_prefix->streamed);
  EXPECT_FALSE(place_prefill(stream, 1, md, h100, "h100").decided);
  EXPECT_TRUE(md.prompt_prefix->streamed);
  const Recipe cpu = recipe_for("cosmos3-nano", {"device=cpu", "precision=fp32"});
  md = read_plan_model_configs(cpu);
  EXPECT_FALSE(md.prompt_prefix->streamed);
  EXPECT_FALSE(place_prefill(cpu, 1, md, h100, "h100").decided);
  md = read_plan_model_configs(recipe_for("cosmos3-nano", {}));
  EXPECT_FALSE(place_prefill(recipe_for("cosmos3-nano", {}), 1, md, 0, "none").decided);
}

// Streamed, the GPU holds the transformer less the understanding tower's layers (the embedding
// table is a host view in either mode) and two of its layers; the prefill copies every layer once per prompt at the loader's
// host-to-device rate, hidden under the compute where that is longer.
TEST(PrefillPlacement, MemoryAndPrefillPrice) {
  const Recipe resident = recipe_for("cosmos3-super", {});
  const Recipe streamed = recipe_for("cosmos3-super", {"text.device=stream"});
  const PlanModel a = read_plan_model_configs(resident), b = read_plan_model_configs(streamed);
  const PlanPromptPrefix& pp = *b.prompt_prefix;
  EXPECT_GT(pp.layer_bytes, 0);
  EXPECT_EQ(pp.layer_bytes * a.layers, pp.tower_bytes);  // the layers alone: the embedding table is a host view
  const Plan pa = make_plan(resident, 1, a, false), pb = make_plan(streamed, 1, b, false);
  EXPECT_NEAR(plan_memory_total(pa) - plan_memory_total(pb), double(pp.tower_bytes) - 2.0 * pp.layer_bytes, 1.0);
  const HardwareProfile hw = profile("h200");
  const Prediction ra = predict(resident, pa, hw), rb = predict(streamed, pb, hw);
  const double copies = double(pp.layer_bytes) * a.layers / (hw.loader_gbps * 1e9);
  const int prefills = 2;  // CFG on one rank: the prompt and the negative prompt
  EXPECT_GE(rb.text_s, ra.text_s);
  EXPECT_GE(rb.text_s, hw.text_fixed_s + prefills * copies);
  EXPECT_LE(rb.text_s, ra.text_s + prefills * (copies + copies / a.layers) + 1e-9);
  EXPECT_NE(rb.text_note.find("streamed for it"), std::string::npos) << rb.text_note;
  EXPECT_DOUBLE_EQ(rb.denoise_s, ra.denoise_s);  // the loop reads only the generation tower
}

// vgen run's choice before the preflight (no GPU here: the recipe's hardware profile stands for it):
// stream sets text.device and both choices land in the resolved recipe (timing.json); a Wan recipe, a
// host run and an explicit value are left as they are.
TEST(PrefillPlacement, RunResolvesAuto) {
  const std::string hw = "hardware=" + kSrc + "/recipes/hardware/";
  Recipe h100 = recipe_for("cosmos3-super", {hw + "h100-hgx8.yaml"});
  resolve_prefill_placement(h100, 1, 0);
  EXPECT_EQ(h100.text.device, TextDevice::kStream);
  const Json& c = h100.resolved["text"]["device_choice"];
  EXPECT_EQ(c["understanding_tower"], "stream");
  EXPECT_GT(c["estimate_resident_bytes"].get<double>(), 0.95 * c["device_bytes"].get<double>());
  EXPECT_LE(c["estimate_streamed_bytes"].get<double>(), 0.95 * c["device_bytes"].get<double>());
  EXPECT_EQ(h100.resolved["text"]["device"], "auto");  // what the recipe asked
  Recipe h200 = recipe_for("cosmos3-super", {hw + "h200.yaml"});
  resolve_prefill_placement(h200, 1, 0);
  EXPECT_EQ(h200.text.device, TextDevice::kAuto);
  EXPECT_EQ(h200.resolved["text"]["device_choice"]["understanding_tower"], "resident");
  for (Recipe r : {recipe_for("wan2.1-t2v-14b", {hw + "h100-hgx8.yaml", "generation.num_frames=81"}),
                   recipe_for("cosmos3-super", {hw + "h100-hgx8.yaml", "device=cpu", "precision=fp32"}),
                   recipe_for("cosmos3-super", {hw + "h200.yaml", "text.device=stream"})}) {
    const TextDevice before = r.text.device;
    resolve_prefill_placement(r, 1, 0);
    EXPECT_EQ(r.text.device, before);
    EXPECT_FALSE(r.resolved["text"].contains("device_choice")) << r.model;
  }
}

// From the safetensors headers (the tiny checkpoint): the largest layer of the understanding tower,
// every layer alike; the embedding table (a host view) counted neither in the tower nor on the GPU.
TEST(PrefillPlacement, LayerBytesFromHeaders) {
  const Recipe r = parse_recipe("{}", "test", {"model=" + kSrc + "/tests/golden-cosmos3/cosmos3-tiny", "device=cuda",
                                               "precision=bf16", "generation.height=64", "generation.width=64",
                                               "generation.num_frames=5", "generation.max_sequence_length=64"});
  const PlanModel md = read_plan_model(r);
  ASSERT_EQ(md.dit_source, "safetensors headers");
  const PlanPromptPrefix& pp = *md.prompt_prefix;
  EXPECT_GT(pp.layer_bytes, 0);
  EXPECT_EQ(pp.tower_bytes, pp.layer_bytes * md.layers);
  bool table_fact = false;
  for (const std::string& f : md.facts) table_fact |= f.rfind("prompt embedding table: ", 0) == 0;
  EXPECT_TRUE(table_fact) << "vgen plan says where the table is";
}
