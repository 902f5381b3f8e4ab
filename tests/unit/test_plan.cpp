// `vgen plan` without weights: a fake 14B directory (model_index.json + transformer/config.json only)
// on the NVL72 mesh, groups consistent with the rank algebra, exact parameter formulas, padding.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "io/safetensors.h"
#include "plan/plan.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

struct FakeModel {
  fs::path dir;
  explicit FakeModel(bool two_experts = false) {
    dir = fs::temp_directory_path() / ("vgen_fake14b_" + std::to_string(getpid()) + (two_experts ? "_2" : ""));
    fs::create_directories(dir / "transformer");
    std::ofstream(dir / "model_index.json")
        << R"({"_class_name": "WanPipeline", "scheduler": ["diffusers", "UniPCMultistepScheduler"],
 "text_encoder": ["transformers", "UMT5EncoderModel"], "tokenizer": ["transformers", "T5TokenizerFast"],
 "transformer": ["diffusers", "WanTransformer3DModel"], "vae": ["diffusers", "AutoencoderKLWan"])"
        << (two_experts ? R"(, "transformer_2": ["diffusers", "WanTransformer3DModel"], "boundary_ratio": 0.875)" : "")
        << "}";
    std::ofstream(dir / "transformer" / "config.json")
        << R"({"_class_name": "WanTransformer3DModel", "attention_head_dim": 128, "ffn_dim": 13824, "freq_dim": 256,
 "in_channels": 16, "num_attention_heads": 40, "num_layers": 40, "out_channels": 16, "patch_size": [1, 2, 2],
 "text_dim": 4096, "qk_norm": "rms_norm_across_heads"})";
  }
  ~FakeModel() { fs::remove_all(dir); }
};

Recipe nvl72(const std::string& model, std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {"model=" + model};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/nvl72-14b.yaml", sets);
}

}  // namespace

TEST(Plan, Nvl72MeshFromConfigOnly) {
  FakeModel fake;
  Recipe r = nvl72(fake.dir.string());
  Plan p = make_plan(r, 72);
  ASSERT_EQ(p.ranks.size(), 72u);
  std::set<std::tuple<int, int, int, int, int>> coords;
  for (auto& pr : p.ranks) {
    const MeshCoord& c = pr.coord;
    coords.insert({c.dp, c.cfg, c.row, c.col, c.u});
    EXPECT_EQ(mesh_rank_of(p.shape, c), pr.rank);
    // Every group holds the rank itself at the index of its own coordinate.
    EXPECT_EQ(pr.cfg.size(), 2u);
    EXPECT_EQ(pr.cfg[c.cfg], pr.rank);
    EXPECT_EQ(pr.ulysses.size(), 4u);
    EXPECT_EQ(pr.ulysses[c.u], pr.rank);
    EXPECT_EQ(pr.row.size(), 3u);
    EXPECT_EQ(pr.row[c.col], pr.rank);
    EXPECT_EQ(pr.col.size(), 3u);
    EXPECT_EQ(pr.col[c.row], pr.rank);
    EXPECT_EQ(pr.cp.size(), 9u);
    EXPECT_EQ(pr.cp[c.row * 3 + c.col], pr.rank);
    EXPECT_EQ(pr.seq.size(), 36u);
    EXPECT_EQ(pr.seq[pr.seq_rank], pr.rank);
    // Ulysses innermost: one Ulysses group is 4 consecutive ranks.
    EXPECT_EQ(pr.ulysses.back() - pr.ulysses.front(), 3);
    // VAE group: seq ranks 0..3 of the cfg-0 group.
    if (c.cfg == 0 && pr.seq_rank < 4) {
      EXPECT_EQ(pr.vae, (std::vector<int>{0, 1, 2, 3}));
    } else {
      EXPECT_TRUE(pr.vae.empty());
    }
  }
  EXPECT_EQ(coords.size(), 72u);
  // 720×1280×81 → 21·45·80 = 75600 tokens, divisible by 36.
  EXPECT_EQ(p.tokens.tokens, 75600);
  EXPECT_EQ(p.tokens.padded, 75600);
  EXPECT_EQ(p.tokens.per_rank, 2100);
  // Parameter count from config math matches the spec's 14,288,491,584 exactly.
  EXPECT_EQ(p.model.dit_params, 14288491584LL);
  EXPECT_EQ(p.model.dit_source, "config math");
  EXPECT_EQ(p.model.te_params, 5680910336LL);  // umt5-xxl defaults
  // bf16 weights with the fp32 keep-list are a bit more than 2 bytes/param.
  EXPECT_GT(p.model.dit_bytes, 2 * p.model.dit_params);
  EXPECT_LT(p.model.dit_bytes, 2 * p.model.dit_params + 400'000'000LL);
  std::set<std::string> comm;
  for (auto& c : p.comm) {
    comm.insert(c.what);
    EXPECT_GT(c.bytes_per_step, 0) << c.what;
  }
  EXPECT_EQ(comm, (std::set<std::string>{"ulysses all-to-all", "attention2d", "proj_out gather", "cfg all-gather"}));
  // Ulysses: 4 all-to-alls × 40 layers of [2100, 5120] bf16, 3/4 leaving the rank.
  for (auto& c : p.comm) {
    if (c.what == "ulysses all-to-all") {
      EXPECT_DOUBLE_EQ(c.bytes_per_step, 40.0 * 4 * 2100 * 5120 * 2 * 3 / 4);
    }
  }
  std::string text = format_plan(r, p);
  EXPECT_NE(text.find("valid for 72 ranks"), std::string::npos);
  EXPECT_NE(text.find("memory estimate per GPU"), std::string::npos);
}

TEST(Plan, RejectsWrongWorldAndHeads) {
  FakeModel fake;
  try {
    make_plan(nvl72(fake.dir.string()), 71);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    EXPECT_NE(e.message().find("world size 71"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("72"), std::string::npos) << e.message();
  }
  // 40 heads are not divisible by Ulysses 3.
  try {
    make_plan(nvl72(fake.dir.string(), {"parallel_config.ulysses_size=3"}), 54);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    EXPECT_NE(e.message().find("ulysses_size 3"), std::string::npos) << e.message();
  }
  // Missing model directory.
  try {
    make_plan(nvl72("/nonexistent/vgen/model"), 72);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
  }
}

TEST(Plan, PaddingRingAndTwoExperts) {
  FakeModel fake(true);
  // 480×832×81 → 21·30·52 = 32760 tokens; ring 5 × ulysses 8 = 40 → padded to 32760 (divisible).
  Recipe r = nvl72(fake.dir.string(), {"generation.height=480", "generation.width=832",
                                       "parallel_config.attn2d_size=[1,1]", "parallel_config.ring_size=5",
                                       "parallel_config.ulysses_size=8", "parallel_config.cfg_size=1"});
  Plan p = make_plan(r, 40);
  EXPECT_EQ(p.tokens.tokens, 32760);
  EXPECT_EQ(p.tokens.padded, 32760);
  EXPECT_EQ(p.model.experts, 2);
  // 77 frames → T 20 → 20·30·52 = 31200, padded to a multiple of 40 → 31200; 73 frames → 19·1560 = 29640.
  Recipe r2 = nvl72(fake.dir.string(), {"generation.height=480", "generation.width=832", "generation.num_frames=73",
                                        "parallel_config.attn2d_size=[1,1]", "parallel_config.ring_size=7",
                                        "parallel_config.ulysses_size=1", "parallel_config.cfg_size=1"});
  Plan p2 = make_plan(r2, 7);
  EXPECT_EQ(p2.tokens.tokens, 29640);
  EXPECT_EQ(p2.tokens.padded, 29645);  // next multiple of 7
  EXPECT_EQ(p2.tokens.per_rank, 4235);
  bool ring = false;
  for (auto& c : p2.comm) ring = ring || c.what == "ring K/V exchange";
  EXPECT_TRUE(ring);
  // The first-block cache's tensors appear in the memory table only when it is on: here two streams
  // (CFG on, cfg 1) of 4235 tokens × 5120 in bf16 → (2·2 + 3) · 4235 · 5120 · 2 bytes.
  auto cache_bytes = [](const Plan& pl) {
    double v = -1;
    for (auto& item : pl.memory)
      if (item.first.rfind("first-block cache", 0) == 0) v = item.second;
    return v;
  };
  EXPECT_EQ(cache_bytes(p2), -1.0);
  r2.cache.first_block_threshold = 0.05;
  EXPECT_DOUBLE_EQ(cache_bytes(make_plan(r2, 7)), (2 * 2 + 3) * 4235.0 * 5120 * 2);
}

TEST(Plan, TinyModelUsesHeaders) {
  Recipe r = load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/demo-cpu.yaml",
                         {"model=" + std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny"});
  Plan p = make_plan(r, 4);
  EXPECT_EQ(p.model.dit_source, "safetensors headers");
  WeightStore ws = WeightStore::open(std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/transformer");
  int64_t n = 0;
  for (auto& name : ws.names()) n += ws.get(name).numel();
  EXPECT_EQ(p.model.dit_params, n);
  EXPECT_EQ(p.model.dit_bytes, n * 4);  // fp32 run
  EXPECT_EQ(p.model.heads, 2);
  EXPECT_EQ(p.tokens.tokens, 3 * 2 * 3);  // 9 frames, 32×48 px
  // The UMT5 formula on the tiny config equals the tensor count of its file.
  EXPECT_EQ(p.model.te_source, "text_encoder/config.json");
  WeightStore te = WeightStore::open(std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/text_encoder");
  int64_t nte = 0;
  for (auto& name : te.names()) nte += te.get(name).numel();
  EXPECT_EQ(p.model.te_params, nte);
  // Config math on the tiny transformer config (no weights) equals the header count too.
  fs::path cfg_only = fs::temp_directory_path() / ("vgen_tinycfg_" + std::to_string(getpid()));
  fs::create_directories(cfg_only / "transformer");
  fs::copy_file(std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/model_index.json", cfg_only / "model_index.json");
  fs::copy_file(std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/transformer/config.json",
                cfg_only / "transformer" / "config.json");
  Recipe rc = load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/demo-cpu.yaml", {"model=" + cfg_only.string()});
  Plan pc = make_plan(rc, 4);
  EXPECT_EQ(pc.model.dit_source, "config math");
  EXPECT_EQ(pc.model.dit_params, n);
  EXPECT_EQ(pc.model.dit_bytes, n * 4);
  fs::remove_all(cfg_only);
  EXPECT_THROW(make_plan(r, 4 + 1), Error);
  EXPECT_EQ(format_rank_list({0, 4, 8, 12, 16}), "[0,4,...,16]");
  EXPECT_EQ(format_rank_list({4, 5, 6, 7}), "[4-7]");
  EXPECT_EQ(format_rank_list({1, 37}), "[1,37]");
  EXPECT_EQ(format_rank_list({}), "-");
}
