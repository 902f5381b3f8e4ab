// `vgen plan --predict` for the Cosmos 3 family on the config-only copies of recipes/models/cosmos3-*:
// the prompt prefill priced once per prompt and branch in place of the text encoder (its FLOPs by
// formula), the generation tower attending its video queries to the prompt's K/V in place of a
// cross-attention, the Wan 2.2 VAE priced exactly as the Wan family prices it, the understanding
// tower reported resident, and the shipped Cosmos 3 recipes (the NVL72 Super one included) priced.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plan/mesh_ranking.h"

using namespace vgen;

namespace {

const std::string kSrc = VGEN_SOURCE_DIR;

Recipe recipe_for(const std::string& model, const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"model=" + kSrc + "/recipes/models/" + model, "device=cuda", "precision=bf16",
                                  "generation.height=704", "generation.width=1280", "generation.num_frames=121",
                                  "generation.num_inference_steps=35", "generation.guidance_scale=6.0",
                                  "generation.max_sequence_length=1024"};
  all.insert(all.end(), sets.begin(), sets.end());
  return parse_recipe("{}", "test", all);
}

HardwareProfile h200() { return load_hardware_profile(kSrc + "/recipes/hardware/h200.yaml"); }

Prediction run(const Recipe& r, int world) {
  return predict(r, make_plan(r, world, read_plan_model_configs(r), false), h200());
}

double part(const Prediction& p, const std::string& name) {
  for (const auto& [what, s] : p.forward_parts)
    if (what == name) return s;
  return -1;
}

TEST(PredictCosmos3, PrefillPerPromptAndBranch) {
  const HardwareProfile hw = h200();
  const Recipe r = recipe_for("cosmos3-nano", {});
  const PlanModel md = read_plan_model_configs(r);
  ASSERT_TRUE(md.prompt_prefix.has_value());
  const PlanPromptPrefix& pp = *md.prompt_prefix;
  EXPECT_EQ(pp.tokens, 1024);
  EXPECT_EQ(pp.kv_heads, 8);
  // Nano: 36 layers of q (32×128), k and v (8×128), o, and the SwiGLU MLP (12288) on hidden 4096.
  const double D = 4096, F = 12288, q = 32 * 128, kv = 8 * 128;
  EXPECT_DOUBLE_EQ(pp.prefill_flops_per_token, 36 * (2 * D * (2 * q + 2 * kv) + 2 * D * F * 3));
  const double P = 1024, one = (P * pp.prefill_flops_per_token + 36 * 2 * P * P * D) /
                               (hw.bf16_tflops * 1e12 * hw.gemm.at(P));
  const Prediction cfg_on = run(r, 1);  // guidance 6 on one GPU: the prompt and the negative prompt
  EXPECT_EQ(cfg_on.text_what, "prompt prefill");
  EXPECT_NEAR(cfg_on.text_s, hw.text_fixed_s + 2 * one, 1e-12);
  const Prediction no_cfg = run(recipe_for("cosmos3-nano", {"generation.guidance_scale=1.0"}), 1);
  EXPECT_NEAR(no_cfg.text_s, hw.text_fixed_s + one, 1e-12);
  const Prediction cfg2 = run(recipe_for("cosmos3-nano", {"parallel_config.cfg_size=2"}), 2);
  EXPECT_NEAR(cfg2.text_s, hw.text_fixed_s + one, 1e-12);  // each CFG rank prefills its own branch
}

TEST(PredictCosmos3, PromptPrefixAttentionReplacesCrossAttention) {
  const Prediction p = run(recipe_for("cosmos3-nano", {}), 1);
  EXPECT_GT(part(p, "prompt-prefix attention"), 0);
  EXPECT_EQ(part(p, "cross-attention"), -1);
  EXPECT_GT(part(p, "self-attention"), 10 * part(p, "prompt-prefix attention"));
  // A longer prompt bound costs more prefix attention; the video's self-attention does not change.
  const Prediction longer = run(recipe_for("cosmos3-nano", {"generation.max_sequence_length=4096"}), 1);
  EXPECT_GT(part(longer, "prompt-prefix attention"), 3 * part(p, "prompt-prefix attention"));
  EXPECT_DOUBLE_EQ(part(longer, "self-attention"), part(p, "self-attention"));
  EXPECT_GT(part(longer, "elementwise"), part(p, "elementwise"));  // the GQA repeat of the prompt's K/V
  // Ulysses 4: each rank attends a quarter of the heads to the same prompt.
  const Prediction u4 = run(recipe_for("cosmos3-nano", {"parallel_config.ulysses_size=4"}), 4);
  EXPECT_LT(part(u4, "prompt-prefix attention"), 0.5 * part(p, "prompt-prefix attention"));
}

double comm_bytes(const Plan& p, const std::string& what) {
  for (const PlanComm& c : p.comm)
    if (c.what == what) return c.bytes_per_step;
  return -1;
}

// Grouped K/V heads move through the collectives with their own heads: Ulysses with lcm(KVH, U)
// (Nano: 8 K/V heads of 128), Ring's blocks and Attention2D's gathers with those per rank.
TEST(PredictCosmos3, GroupedKvHeadsInTheCollectives) {
  const PlanModel md = read_plan_model_configs(recipe_for("cosmos3-nano", {}));
  EXPECT_EQ(md.kv_heads, 8);
  EXPECT_EQ(md.self_kv_heads(), 8);
  const double L = 36, D = 4096, hd = 128, b = 2, fwd = 2;  // CFG as two forwards on the rank
  for (int U : {2, 4, 8, 16}) {
    const Recipe r = recipe_for("cosmos3-nano", {"parallel_config.ulysses_size=" + std::to_string(U)});
    const Plan p = make_plan(r, U, md, false);
    const double s = double(p.tokens.per_rank), R = U == 16 ? 16 : 8;  // 16 does not divide 8: repeated
    EXPECT_DOUBLE_EQ(comm_bytes(p, "ulysses all-to-all"), fwd * L * 2 * s * (D + R * hd) * b * (U - 1) / U) << U;
  }
  const Recipe ring = recipe_for("cosmos3-nano", {"parallel_config.ulysses_size=2", "parallel_config.ring_size=2"});
  const Plan pr = make_plan(ring, 4, md, false);
  const double cp_tokens = double(pr.tokens.padded) / 2;
  EXPECT_DOUBLE_EQ(comm_bytes(pr, "ring K/V exchange"), fwd * L * 1 * 2 * cp_tokens * (8.0 / 2 * hd) * b);
  // Wan (no grouping) keeps four [s, D] tensors per layer.
  const Recipe wan = recipe_for("wan2.2-ti2v-5b", {"parallel_config.ulysses_size=4"});
  const PlanModel wmd = read_plan_model_configs(wan);
  EXPECT_EQ(wmd.self_kv_heads(), wmd.heads);
  const Plan pw = make_plan(wan, 4, wmd, false);
  EXPECT_DOUBLE_EQ(comm_bytes(pw, "ulysses all-to-all"),
                   fwd * wmd.layers * 4 * double(pw.tokens.per_rank) * wmd.dim() * b * 3 / 4);
}

TEST(PredictCosmos3, WanVaeAsTheWanFamilyPricesIt) {
  // Cosmos 3 decodes with the Wan 2.2 VAE of Wan2.2-TI2V-5B: the same clip costs the same decode.
  for (const char* pvs : {"1", "4"}) {
    const std::string set = std::string("parallel_config.parallel_vae_size=") + pvs;
    const Prediction c = run(recipe_for("cosmos3-nano", {"parallel_config.ulysses_size=4", set}), 4);
    const Prediction w = run(recipe_for("wan2.2-ti2v-5b", {"parallel_config.ulysses_size=4", set}), 4);
    EXPECT_GT(c.vae_decode_s, 0) << pvs;
    EXPECT_DOUBLE_EQ(c.vae_decode_s, w.vae_decode_s) << pvs;
    EXPECT_DOUBLE_EQ(c.vae_s, w.vae_s) << pvs;
    EXPECT_GT(c.image_s, w.image_s) << pvs;  // an image line: Cosmos 3 encodes every frame, TI2V the first
  }
}

TEST(PredictCosmos3, UnderstandingTowerReportedResident) {
  for (const char* m : {"cosmos3-nano", "cosmos3-super", "cosmos3-edge"}) {
    const PlanModel md = read_plan_model_configs(recipe_for(m, {}));
    ASSERT_TRUE(md.prompt_prefix.has_value()) << m;
    EXPECT_FALSE(md.prompt_prefix->streamed) << m;
    EXPECT_GT(md.prompt_prefix->tower_bytes, md.dit_bytes / 3) << m;
    EXPECT_LT(md.prompt_prefix->tower_bytes, md.dit_bytes) << m;
    const std::string plan = format_plan(recipe_for(m, {}), make_plan(recipe_for(m, {}), 1, md, false));
    EXPECT_NE(plan.find("\n  understanding tower: resident ("), std::string::npos) << m;
    EXPECT_NE(plan.find("prompt K/V from the prefill"), std::string::npos) << m;
  }
}

// DWDP's blocks are the generation tower's layers (the understanding tower, embeddings and
// projections whole on every rank), on the host and on the GPU.
TEST(PredictCosmos3, DwdpSharesTheGenerationLayers) {
  const Recipe gpu = recipe_for("cosmos3-nano", {"parallel_config.cfg_size=2"});
  const PlanModel md = read_plan_model_configs(gpu);
  EXPECT_EQ(md.dwdp_shared_bytes, md.layers * md.dit_block_bytes);
  EXPECT_EQ(md.dit_block_bytes, md.prompt_prefix->layer_bytes);  // the two towers' layers have one shape
  EXPECT_LT(md.dwdp_shared_bytes + md.prompt_prefix->tower_bytes, md.dit_bytes);
  Recipe cpu = recipe_for("cosmos3-nano", {"device=cpu", "precision=fp32", "parallel_config.cfg_size=2",
                                           "parallel_config.dwdp_size=2"});
  const PlanModel mc = read_plan_model_configs(cpu);
  const Plan p = make_plan(cpu, 2, mc, false);
  ASSERT_FALSE(p.memory.empty());
  EXPECT_NE(p.memory[0].first.find("1/2 by DWDP, the rest whole"), std::string::npos) << p.memory[0].first;
  EXPECT_DOUBLE_EQ(p.memory[0].second, double(mc.dit_bytes) - double(mc.dwdp_shared_bytes) / 2);
  EXPECT_DOUBLE_EQ(p.memory[1].second, 2.0 * double(mc.dit_block_bytes));
  Recipe dev = gpu;  // the device: the same share, priced with the copies of the layers it lacks
  dev.parallel.dwdp_size = 2;
  const Plan pd = make_plan(dev, 2, md, false);
  EXPECT_DOUBLE_EQ(pd.memory[0].second, double(md.dit_bytes) - double(md.dwdp_shared_bytes) / 2);
  const Prediction with = predict(dev, pd, h200()), without = run(gpu, 2);
  EXPECT_GE(with.denoise_s, without.denoise_s);
  EXPECT_LT(with.memory_gib, without.memory_gib);
}

TEST(PredictCosmos3, ShippedRecipes) {
  struct Case {
    const char* recipe;
    const char* model;
    int world;
  };
  for (const Case& c : {Case{"1gpu-cosmos3-nano-720p", "cosmos3-nano", 1}, Case{"8gpu-cosmos3-nano-720p", "cosmos3-nano", 8},
                        Case{"nvl72-cosmos3-super", "cosmos3-super", 72}}) {
    const Recipe r =
        load_recipe(kSrc + "/recipes/" + c.recipe + ".yaml", {"model=" + kSrc + "/recipes/models/" + c.model});
    ASSERT_EQ(r.parallel.world_size(), c.world) << c.recipe;
    const Prediction p = predict(r, make_plan(r, c.world, read_plan_model_configs(r), false), h200());
    EXPECT_GT(p.denoise_s, p.text_s) << c.recipe;
    EXPECT_GT(p.vae_decode_s, 0) << c.recipe;
    EXPECT_EQ(p.text_what, "prompt prefill") << c.recipe;
    if (c.world == 72) {
      EXPECT_NE(p.mesh.find("cfg 2 × ulysses 4 × attn2d 3×3, vae 8"), std::string::npos) << p.mesh;
      const Prediction one = predict_one_gpu(r, read_plan_model_configs(r), h200());
      EXPECT_GT(one.denoise_s / p.denoise_s, 20) << "the 72-rank mesh's denoising speedup";
    }
  }
}

}  // namespace
