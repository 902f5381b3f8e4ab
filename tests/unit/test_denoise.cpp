// The denoising loop: CFG, the Wan 2.2 expert/guidance switch, CFG-parallel and sequence-parallel
// meshes (threads as ranks) against a hand-written single-rank loop; the first-block cache (off,
// always, sometimes; meshes decide as one rank); latent helpers.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "core/random.h"
#include "dit_test_util.h"
#include "io/diffusers_dir.h"
#include "io/safetensors.h"
#include "ops/elementwise.h"
#include "pipeline/denoise.h"
#include "model/latents.h"
#include "model/wan/vae/vae_config.h"

namespace vgen {
namespace {
namespace fs = std::filesystem;

// A first-block cache threshold at which the tiny model's 8-step loop below skips some later blocks
// and runs others (cache_hits strictly between 0 and all).
constexpr double kMeshThreshold = 0.1;

struct Inputs {
  Tensor cond, uncond, latents;
};
Inputs inputs(int64_t T, int64_t H, int64_t W, uint64_t seed) {
  return {randn({1, 16, 32}, seed), randn({1, 16, 32}, seed + 1), randn({1, 16, T, H, W}, seed + 2)};
}

std::unique_ptr<Scheduler> scheduler(const std::string& model) {
  DiffusersDir dir(test::golden_dir() + "/" + model);
  return make_scheduler(dir.component_config("scheduler"));
}

// Straightforward single-rank loop (wan_spec.md §0).
Tensor manual_loop(const DenoiseModels& m, Scheduler& s, const Inputs& in, const DenoiseSettings& st,
                   std::vector<int>* experts = nullptr) {
  s.set_timesteps(st.num_inference_steps);
  Tensor x = in.latents.clone();
  for (double t : s.timesteps()) {
    const bool low = m.schedule.boundary_ratio && t < *m.schedule.boundary_ratio * 1000.0;
    const auto& model = dynamic_cast<const WanTransformer&>(*m.experts[low ? 1 : 0]);
    const double g = low ? st.guidance_scale_2.value_or(st.guidance_scale) : st.guidance_scale;
    Tensor tv = Tensor::from_vector({float(t)}, {1});
    Tensor v = model.forward(x, tv, in.cond);
    if (st.guidance_scale > 1.0) v = cfg_combine(v, model.forward(x, tv, in.uncond), float(g));
    x = s.step(v, x);
    if (experts) experts->push_back(low ? 1 : 0);
  }
  return x;
}

TEST(Denoise, SingleExpertWithAndWithoutCfg) {
  auto m = WanTransformer::load(test::golden_dir() + "/wan21-tiny/transformer");
  DenoiseModels models{{m.get()}, {}};
  Inputs in = inputs(3, 4, 6, 10);
  Mesh mesh = test::single_rank_mesh();
  for (double g : {5.0, 1.0}) {
    DenoiseSettings st;
    st.num_inference_steps = 4;
    st.guidance_scale = g;
    auto s1 = scheduler("wan21-tiny"), s2 = scheduler("wan21-tiny");
    Tensor want = manual_loop(models, *s1, in, st);
    int calls = 0;
    DenoiseResult r = denoise(models, *s2, in.cond, g > 1 ? in.uncond : Tensor(), in.latents, st, mesh, nullptr,
                              [&](const DenoiseStepInfo& info, const Tensor& lat) {
                                EXPECT_EQ(info.index, calls++);
                                EXPECT_EQ(info.total, 4);
                                EXPECT_EQ(lat.shape(), in.latents.shape());
                              });
    EXPECT_EQ(calls, 4);
    ASSERT_EQ(r.steps.size(), 4u);
    EXPECT_EQ(r.steps[0].timestep, 999.0);
    EXPECT_EQ(r.steps[1].guidance, g > 1 ? g : 1.0);
    EXPECT_TRUE(test::bitwise_equal(r.latents, want)) << "guidance " << g;
  }
}

TEST(Denoise, Wan22ExpertAndGuidanceSwitch) {
  auto hi = WanTransformer::load(test::golden_dir() + "/wan22-tiny/transformer");
  auto lo = WanTransformer::load(test::golden_dir() + "/wan22-tiny/transformer_2");
  DenoiseModels models{{hi.get(), lo.get()}, {}};
  Inputs in = inputs(2, 4, 4, 20);
  DenoiseSettings st;
  st.num_inference_steps = 6;
  st.guidance_scale = 4.0;
  st.guidance_scale_2 = 3.0;
  models.schedule.boundary_ratio = 0.9;  // wan22-tiny model_index.json
  auto s1 = scheduler("wan22-tiny"), s2 = scheduler("wan22-tiny");
  std::vector<int> experts;
  Tensor want = manual_loop(models, *s1, in, st, &experts);
  Mesh mesh = test::single_rank_mesh();
  DenoiseResult r = denoise(models, *s2, in.cond, in.uncond, in.latents, st, mesh, nullptr);
  EXPECT_TRUE(test::bitwise_equal(r.latents, want));
  int switched = 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    EXPECT_EQ(r.steps[i].expert, experts[i]);
    EXPECT_EQ(r.steps[i].expert, r.steps[i].timestep < 900.0 ? 1 : 0);
    EXPECT_EQ(r.steps[i].guidance, r.steps[i].expert ? 3.0 : 4.0);
    switched += r.steps[i].expert;
  }
  EXPECT_GT(switched, 0);
  EXPECT_LT(switched, 6);
  models.schedule.boundary_ratio = std::nullopt;  // no boundary: the high-noise expert throughout
  r = denoise(models, *s2, in.cond, in.uncond, in.latents, st, mesh, nullptr);
  for (auto& s : r.steps) EXPECT_EQ(s.expert, 0);
  DenoiseModels only_one{{hi.get()}, {}};
  only_one.schedule.boundary_ratio = 0.9;
  EXPECT_THROW(denoise(only_one, *s2, in.cond, in.uncond, in.latents, st, mesh, nullptr), Error);
}

// Runs denoise on cfg × seq thread-ranks (rank = cfg·seq + s); returns every rank's result.
std::vector<DenoiseResult> run_mesh(const DenoiseModels& models, const Inputs& in, const DenoiseSettings& st, int cfg,
                             int seq) {
  const int n = cfg * seq;
  std::vector<std::shared_ptr<test::ThreadGroup>> cfg_groups, seq_groups;
  for (int s = 0; s < seq; ++s) cfg_groups.push_back(std::make_shared<test::ThreadGroup>(cfg));
  for (int c = 0; c < cfg; ++c) seq_groups.push_back(std::make_shared<test::ThreadGroup>(seq));
  std::vector<DenoiseResult> out(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank)
    threads.emplace_back([&, rank] {
      const int c = rank / seq, s = rank % seq;
      Mesh mesh = test::single_rank_mesh();
      mesh.shape.cfg = cfg;
      mesh.shape.ulysses = seq;
      mesh.coord.cfg = c;
      mesh.coord.u = s;
      mesh.world_rank = rank;
      if (cfg > 1) mesh.cfg = std::make_shared<test::ThreadComm>(cfg_groups[size_t(s)], c);
      if (seq > 1) mesh.seq = mesh.ulysses = std::make_shared<test::ThreadComm>(seq_groups[size_t(c)], s);
      auto sched = scheduler("wan21-tiny");
      SeqAttentionFactory factory = [](Mesh& m) -> std::unique_ptr<SeqAttention> {
        if (m.seq->size() == 1) return make_local_attention();
        return std::make_unique<test::GatherKvAttention>(m.seq);
      };
      out[size_t(rank)] = denoise(models, *sched, in.cond, in.uncond, in.latents, st, mesh, factory);
    });
  for (auto& t : threads) t.join();
  return out;
}

TEST(Denoise, CfgAndSequenceParallelMatchSingleRank) {
  auto m = WanTransformer::load(test::golden_dir() + "/wan21-tiny/transformer");
  DenoiseModels models{{m.get()}, {}};
  Inputs in = inputs(3, 2, 6, 30);  // 9 tokens: padded on 2 and 4 ranks
  DenoiseSettings st;
  st.num_inference_steps = 3;
  st.guidance_scale = 5.0;
  Mesh mesh = test::single_rank_mesh();
  auto s = scheduler("wan21-tiny");
  Tensor want = denoise(models, *s, in.cond, in.uncond, in.latents, st, mesh, nullptr).latents;
  // CFG parallel alone computes exactly what one rank does.
  for (const DenoiseResult& r : run_mesh(models, in, st, 2, 1)) EXPECT_TRUE(test::bitwise_equal(r.latents, want));
  for (auto [cfg, seq] : {std::pair{1, 2}, std::pair{2, 2}, std::pair{1, 4}}) {
    std::vector<DenoiseResult> got = run_mesh(models, in, st, cfg, seq);
    for (size_t r = 0; r < got.size(); ++r) {
      EXPECT_LT(test::rel_l2(got[r].latents, want), 1e-5) << "cfg " << cfg << " seq " << seq << " rank " << r;
      EXPECT_TRUE(test::bitwise_equal(got[r].latents, got[0].latents)) << "ranks diverged";  // lock-step
    }
  }
}

// First-block cache (cache_config.first_block_threshold). Off (0) and a threshold no step can meet
// change nothing, bit for bit, though the second runs the whole decision every forward; a threshold
// every step meets runs the first forward of each stream in full and cuts every later one short.
TEST(FirstBlockCache, OffAndUnreachableThresholdChangeNothing) {
  auto m = WanTransformer::load(test::golden_dir() + "/wan21-tiny/transformer");
  DenoiseModels models{{m.get()}, {}};
  Inputs in = inputs(3, 4, 6, 50);
  Mesh mesh = test::single_rank_mesh();
  DenoiseSettings st;
  st.num_inference_steps = 5;
  st.guidance_scale = 5.0;
  auto s = scheduler("wan21-tiny");
  const DenoiseResult plain = denoise(models, *s, in.cond, in.uncond, in.latents, st, mesh, nullptr);
  EXPECT_EQ(plain.cache_forwards, 0);
  st.first_block_threshold = 1e-30;
  const DenoiseResult tiny = denoise(models, *s, in.cond, in.uncond, in.latents, st, mesh, nullptr);
  EXPECT_TRUE(test::bitwise_equal(tiny.latents, plain.latents));
  EXPECT_EQ(tiny.cache_forwards, 2 * 5);  // both streams, every step
  EXPECT_EQ(tiny.cache_hits, 0);
  st.first_block_threshold = 1e30;
  const DenoiseResult all = denoise(models, *s, in.cond, in.uncond, in.latents, st, mesh, nullptr);
  EXPECT_EQ(all.cache_hits, 2 * 5 - 2);  // the first forward of each stream has no reference
  for (size_t i = 0; i < all.steps.size(); ++i) EXPECT_EQ(all.steps[i].cache_hits, i == 0 ? 0 : 2) << "step " << i;
  EXPECT_EQ(all.cache_step_hits, (std::vector<int64_t>{0, 2, 2, 2, 2}));
  EXPECT_TRUE(plain.cache_step_hits.empty());
  EXPECT_GT(test::rel_l2(all.latents, plain.latents), 1e-4);  // the skips really changed the result
}

// A skipped forward adds the later blocks' update of the reference step to block 0's output: on
// the same inputs it reproduces the full forward (up to the fp32 rounding of x1 + (x − x1)).
TEST(FirstBlockCache, SkippedForwardReusesTheReferenceUpdate) {
  auto m = WanTransformer::load(test::golden_dir() + "/wan21-tiny/transformer");
  Inputs in = inputs(3, 4, 6, 60);
  const int64_t S = m->num_tokens(in.latents.shape());
  TextContext text = m->prepare_text(in.cond);
  auto attention = make_local_attention();
  const SeqLayout layout = SeqLayout::make(S, 1, 0);
  Tensor tv = Tensor::from_vector({700.0f}, {1});
  FirstBlockCache cache(1e30);
  Tensor full = m->forward_local(in.latents, tv, text, layout, *attention, &cache);
  EXPECT_EQ(cache.hits(), 0);
  EXPECT_EQ(cache.last_change(), -1.0);
  Tensor again = m->forward_local(in.latents, tv, text, layout, *attention, &cache);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.last_change(), 0.0);  // the same block-0 update
  EXPECT_LT(test::rel_l2(again, full), 1e-6);
  // Another timestep: block 0 changes, the later blocks are still skipped (threshold 1e30).
  Tensor other = m->forward_local(in.latents, Tensor::from_vector({300.0f}, {1}), text, layout, *attention, &cache);
  EXPECT_EQ(cache.hits(), 2);
  EXPECT_GT(cache.last_change(), 0.0);
  FirstBlockCache off;
  Tensor want = m->forward_local(in.latents, Tensor::from_vector({300.0f}, {1}), text, layout, *attention, &off);
  EXPECT_GT(test::rel_l2(other, want), 1e-6);  // an approximation, not the full forward
}

// The change is summed over the real tokens only: pad rows of the last rank (here huge, and
// different between the two forwards) do not enter it, so two ranks measure what one rank does.
TEST(FirstBlockCache, PadRowsDoNotCount) {
  const int64_t S = 5, D = 4;
  const Tensor x0 = randn({1, S, D}, 80), a1 = randn({1, S, D}, 81), a2 = randn({1, S, D}, 82);
  const Tensor done = randn({1, S, D}, 83);  // the other blocks' output at the first forward
  auto measure = [&](FirstBlockCache& c, const SeqLayout& l, float pad) {
    auto shard = [&](const Tensor& full, float fill) {  // this rank's rows, pad rows = fill
      Tensor t = Tensor::zeros({1, l.local(), D}, DType::kF32);
      for (int64_t r = 0; r < l.local(); ++r)
        for (int64_t d = 0; d < D; ++d)
          t.f32()[r * D + d] = l.begin() + r < S ? full.f32()[(l.begin() + r) * D + d] : fill * float(d + 1);
      return t;
    };
    const Tensor s0 = shard(x0, pad);
    c.begin(s0);
    Tensor x = shard(a1, 2 * pad);
    EXPECT_FALSE(c.try_skip(x, l));  // no reference yet
    c.end(shard(done, 3 * pad));
    c.begin(s0);
    x = shard(a2, -5 * pad);
    c.try_skip(x, l);
    return c.last_change();
  };
  FirstBlockCache one(1e-30);
  const double want = measure(one, SeqLayout::make(S, 1, 0), 0.0f);
  ASSERT_GT(want, 0.0);
  auto group = std::make_shared<test::ThreadGroup>(2);
  double got[2] = {0, 0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      test::ThreadComm comm(group, r);
      FirstBlockCache c(1e-30);
      c.set_group(&comm);
      got[r] = measure(c, SeqLayout::make(S, 2, r), 1e6f);  // rank 1: rows 3, 4 and one pad row
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(got[0], got[1]);
  EXPECT_NEAR(got[0], want, 1e-6 * want);
}

// Every mesh takes the decisions one rank takes (the change is summed over the real tokens of the
// whole sequence, pad rows excluded), so the cached result matches one rank's as the plain one does.
TEST(FirstBlockCache, MeshesDecideAsOneRank) {
  auto m = WanTransformer::load(test::golden_dir() + "/wan21-tiny/transformer");
  DenoiseModels models{{m.get()}, {}};
  Inputs in = inputs(3, 2, 6, 70);  // 9 tokens: padded on 2 and 4 ranks
  DenoiseSettings st;
  st.num_inference_steps = 8;
  st.guidance_scale = 5.0;
  st.first_block_threshold = kMeshThreshold;
  Mesh mesh = test::single_rank_mesh();
  auto s = scheduler("wan21-tiny");
  const DenoiseResult want = denoise(models, *s, in.cond, in.uncond, in.latents, st, mesh, nullptr);
  // Some forwards skip and some do not: the decisions are what is compared.
  ASSERT_GT(want.cache_hits, 0);
  ASSERT_LT(want.cache_hits, want.cache_forwards - 2);
  for (auto [cfg, seq] : {std::pair{2, 1}, std::pair{1, 2}, std::pair{2, 2}, std::pair{1, 4}}) {
    std::vector<DenoiseResult> got = run_mesh(models, in, st, cfg, seq);
    for (size_t r = 0; r < got.size(); ++r) {
      SCOPED_TRACE(::testing::Message() << "cfg " << cfg << " seq " << seq << " rank " << r);
      EXPECT_EQ(got[r].cache_hits, want.cache_hits);
      EXPECT_EQ(got[r].cache_forwards, want.cache_forwards);
      EXPECT_EQ(got[r].cache_step_hits, want.cache_step_hits);  // both streams, also under CFG parallel
      for (size_t i = 0; i < want.steps.size() && cfg == 1; ++i)
        EXPECT_EQ(got[r].steps[i].cache_hits, want.steps[i].cache_hits) << "step " << i;
      EXPECT_LT(test::rel_l2(got[r].latents, want.latents), 1e-5);
      EXPECT_TRUE(test::bitwise_equal(got[r].latents, got[0].latents)) << "ranks diverged";
    }
  }
}

TEST(Latents, ShapeNoiseFileAndDenormalize) {
  EXPECT_EQ(latent_shape(1, 16, 81, 480, 832, 4, 8), (Shape{1, 16, 21, 60, 104}));
  EXPECT_EQ(latent_shape(2, 48, 121, 704, 1280, 4, 16), (Shape{2, 48, 31, 44, 80}));
  Tensor a = make_initial_latents({1, 16, 2, 3, 4}, "", 7), b = make_initial_latents({1, 16, 2, 3, 4}, "", 7);
  EXPECT_TRUE(test::bitwise_equal(a, b));
  EXPECT_FALSE(test::bitwise_equal(a, make_initial_latents({1, 16, 2, 3, 4}, "", 8)));

  fs::path p = fs::temp_directory_path() / ("vgen_test_latents_" + std::to_string(::getpid()) + ".safetensors");
  save_safetensors(p.string(), {{"initial_latents", a}});
  EXPECT_TRUE(test::bitwise_equal(make_initial_latents({1, 16, 2, 3, 4}, p.string(), 0), a));
  try {
    make_initial_latents({1, 16, 2, 3, 5}, p.string(), 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInput);
  }
  fs::remove(p);
  EXPECT_THROW(make_initial_latents({1}, p.string(), 0), Error);  // missing file

  Json vae = read_json_file(test::golden_dir() + "/wan21-tiny/vae/config.json", ExitCode::kModel);
  const WanVaeConfig vcfg = parse_wan_vae_config(vae, "vae/config.json");
  const LatentStats st{vcfg.latents_mean, vcfg.latents_std};
  Tensor z = denormalize_latents(a, st);
  for (int64_t c = 0; c < 16; ++c)
    for (int64_t i = 0; i < 24; ++i) {
      const int64_t k = c * 24 + i;
      EXPECT_EQ(z.f32()[k], a.f32()[k] / (1.0f / st.std[size_t(c)]) + st.mean[size_t(c)]);
      EXPECT_NEAR(z.f32()[k], a.f32()[k] * st.std[size_t(c)] + st.mean[size_t(c)], 1e-5);
    }
}

}  // namespace
}  // namespace vgen
