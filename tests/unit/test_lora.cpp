// LoRA adapters (model/wan/dit/lora.h): key names of both formats, the merge arithmetic against a
// direct computation, several adapters adding up, strict and non-strict errors naming key and
// file, the recipe's lora section, and the two golden fixture files holding one adapter.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "io/recipe.h"
#include "io/safetensors.h"
#include "model/wan/dit/lora.h"
#include "model/wan/dit/transformer.h"
#include "plan/plan.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

const std::string kTiny = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/transformer";
const std::string kLoraDir = std::string(VGEN_SOURCE_DIR) + "/tests/golden/lora";

Tensor randn(const Shape& s, uint32_t seed, float sd = 0.3f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(size_t(shape_numel(s)));
  for (auto& x : v) x = d(rng);
  return Tensor::from_vector(v, s);
}

Tensor scalar(float v) { return Tensor::from_vector({v}, {}); }

std::string temp_file(const std::string& name) {
  return (fs::temp_directory_path() / fmt::format("vgen_lora_{}_{}.safetensors", getpid(), name)).string();
}

std::string write(const std::string& name, const std::vector<std::pair<std::string, Tensor>>& ts) {
  const std::string p = temp_file(name);
  save_safetensors(p, ts);
  return p;
}

LoraKey key(const std::string& k, bool wan) {
  std::optional<LoraKey> lk = parse_lora_key(k, wan);
  EXPECT_TRUE(lk.has_value()) << k;
  return lk.value_or(LoraKey{});
}

// Expects f() to throw `code` with every fragment in the message.
template <typename F> void expect_error(F&& f, ExitCode code, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(code)) << e.message();
    for (auto& s : fragments) EXPECT_NE(e.message().find(s), std::string::npos) << "'" << s << "' not in: " << e.message();
  }
}

// W0 + Σ factor·(B·A) in double, the direct computation the merge must match.
std::vector<double> direct(const Tensor& w0, const std::vector<std::tuple<Tensor, Tensor, double>>& terms) {
  std::vector<double> out(w0.f32(), w0.f32() + w0.numel());
  const int64_t in = w0.dim(1);
  for (auto& [b, a, f] : terms) {
    const int64_t r = a.dim(0);
    for (int64_t o = 0; o < w0.dim(0); ++o)
      for (int64_t i = 0; i < in; ++i) {
        double s = 0;
        for (int64_t k = 0; k < r; ++k) s += double(b.f32()[o * r + k]) * a.f32()[k * in + i];
        out[size_t(o * in + i)] += f * s;
      }
  }
  return out;
}

void expect_near_all(const Tensor& got, const std::vector<double>& ref, const std::string& what) {
  ASSERT_EQ(size_t(got.numel()), ref.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    if (!(std::fabs(got.f32()[i] - ref[i]) <= 1e-6 * (1.0 + std::fabs(ref[i]))) && ++bad <= 3)
      ADD_FAILURE() << what << "[" << i << "] = " << got.f32()[i] << ", expected " << ref[i];
}

}  // namespace

TEST(LoraNames, DiffusersAndPeftNames) {
  EXPECT_FALSE(lora_file_uses_wan_names({"transformer.blocks.0.attn1.to_q.lora_A.weight"}));
  LoraKey k = key("transformer.blocks.3.attn1.to_q.lora_A.weight", false);
  EXPECT_EQ(k.module, "blocks.3.attn1.to_q");
  EXPECT_EQ(k.part, LoraPart::kDown);
  k = key("blocks.3.attn2.to_out.0.lora_B.weight", false);  // no prefix
  EXPECT_EQ(k.module, "blocks.3.attn2.to_out.0");
  EXPECT_EQ(k.part, LoraPart::kUp);
  k = key("base_model.model.blocks.0.ffn.net.0.proj.lora_A.weight", false);
  EXPECT_EQ(k.module, "blocks.0.ffn.net.0.proj");
  EXPECT_EQ(key("transformer.blocks.1.ffn.net.2.alpha", false).part, LoraPart::kAlpha);
  EXPECT_EQ(key("transformer.proj_out.lora_B.bias", false).part, LoraPart::kUpBias);
  EXPECT_EQ(key("transformer.condition_embedder.time_proj.lora_A.weight", false).module,
            "condition_embedder.time_proj");
  // diffusers' norm2 is the cross-attention norm: kept as is.
  EXPECT_EQ(key("transformer.blocks.0.norm2.diff", false).module, "blocks.0.norm2");
  EXPECT_FALSE(parse_lora_key("transformer.blocks.0.attn1.to_q.weight", false).has_value());
}

TEST(LoraNames, OriginalWanNames) {
  EXPECT_TRUE(lora_file_uses_wan_names({"diffusion_model.blocks.0.self_attn.q.lora_down.weight"}));
  EXPECT_TRUE(lora_file_uses_wan_names({"blocks.0.cross_attn.k.lora_A.weight"}));  // no prefix
  struct Case { const char* key; const char* module; LoraPart part; };
  const Case cases[] = {
      {"diffusion_model.blocks.2.self_attn.q.lora_down.weight", "blocks.2.attn1.to_q", LoraPart::kDown},
      {"diffusion_model.blocks.2.self_attn.k.lora_up.weight", "blocks.2.attn1.to_k", LoraPart::kUp},
      {"diffusion_model.blocks.2.self_attn.v.alpha", "blocks.2.attn1.to_v", LoraPart::kAlpha},
      {"diffusion_model.blocks.2.self_attn.o.lora_A.weight", "blocks.2.attn1.to_out.0", LoraPart::kDown},
      {"diffusion_model.blocks.2.cross_attn.o.lora_B.weight", "blocks.2.attn2.to_out.0", LoraPart::kUp},
      {"diffusion_model.blocks.2.cross_attn.norm_q.diff", "blocks.2.attn2.norm_q", LoraPart::kDiff},
      {"diffusion_model.blocks.2.ffn.0.lora_down.weight", "blocks.2.ffn.net.0.proj", LoraPart::kDown},
      {"diffusion_model.blocks.2.ffn.2.diff_b", "blocks.2.ffn.net.2", LoraPart::kDiffBias},
      {"diffusion_model.blocks.2.norm3.diff", "blocks.2.norm2", LoraPart::kDiff},
      {"diffusion_model.blocks.2.modulation.diff", "blocks.2.scale_shift_table", LoraPart::kDiff},
      {"diffusion_model.text_embedding.0.lora_down.weight", "condition_embedder.text_embedder.linear_1",
       LoraPart::kDown},
      {"diffusion_model.text_embedding.2.lora_up.weight", "condition_embedder.text_embedder.linear_2", LoraPart::kUp},
      {"diffusion_model.time_embedding.0.alpha", "condition_embedder.time_embedder.linear_1", LoraPart::kAlpha},
      {"diffusion_model.time_embedding.2.lora_down.weight", "condition_embedder.time_embedder.linear_2",
       LoraPart::kDown},
      {"diffusion_model.time_projection.1.lora_up.weight", "condition_embedder.time_proj", LoraPart::kUp},
      {"diffusion_model.head.head.lora_down.weight", "proj_out", LoraPart::kDown},
      {"diffusion_model.head.head.diff_b", "proj_out", LoraPart::kDiffBias},
      {"blocks.0.self_attn.q.lora_down.weight", "blocks.0.attn1.to_q", LoraPart::kDown},  // no prefix
  };
  for (const Case& c : cases) {
    LoraKey k = key(c.key, true);
    EXPECT_EQ(k.module, c.module) << c.key;
    EXPECT_EQ(int(k.part), int(c.part)) << c.key;
  }
  // Wan's norm2 is the FFN norm, which has no weights: it maps to nothing.
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  EXPECT_FALSE(lora_target_shape(cfg, key("diffusion_model.blocks.0.norm2.diff", true).module).has_value());
}

TEST(LoraNames, TargetShapes) {
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  const int64_t D = cfg.dim();
  auto s = lora_target_shape(cfg, "blocks.1.ffn.net.0.proj");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->weight, (Shape{cfg.ffn_dim, D}));
  EXPECT_TRUE(s->low_rank);
  EXPECT_EQ(lora_target_shape(cfg, "condition_embedder.text_embedder.linear_1")->weight, (Shape{D, cfg.text_dim}));
  EXPECT_EQ(lora_target_shape(cfg, "proj_out")->weight, (Shape{16 * 4, D}));
  EXPECT_FALSE(lora_target_shape(cfg, "blocks.2.attn1.to_q"));  // 2 layers
  EXPECT_FALSE(lora_target_shape(cfg, "blocks.0.attn1.to_x"));
  EXPECT_FALSE(lora_target_shape(cfg, "patch_embedding"));  // a convolution
  EXPECT_FALSE(lora_target_shape(cfg, "blocks.0.attn1.norm_q")->low_rank);
}

TEST(LoraMerge, MatchesDirectComputationAndAddsUp) {
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  const int64_t D = cfg.dim(), F = cfg.ffn_dim;
  // Adapter 1, diffusers names, no alpha (factor 1): q of block 0 and ffn.net.0.proj of block 1.
  Tensor a1 = randn({4, D}, 1), b1 = randn({D, 4}, 2), a1f = randn({4, D}, 3), b1f = randn({F, 4}, 4);
  const std::string p1 = write("one", {{"transformer.blocks.0.attn1.to_q.lora_A.weight", a1},
                                       {"transformer.blocks.0.attn1.to_q.lora_B.weight", b1},
                                       {"blocks.1.ffn.net.0.proj.lora_A.weight", a1f},
                                       {"blocks.1.ffn.net.0.proj.lora_B.weight", b1f}});
  // Adapter 2, Wan names, rank 3 with alpha 6 (factor 2), on the same q, plus a bias difference.
  Tensor a2 = randn({3, D}, 5), b2 = randn({D, 3}, 6), db = randn({D}, 7);
  const std::string p2 = write("two", {{"diffusion_model.blocks.0.self_attn.q.lora_down.weight", a2},
                                       {"diffusion_model.blocks.0.self_attn.q.lora_up.weight", b2},
                                       {"diffusion_model.blocks.0.self_attn.q.alpha", scalar(6.0f)},
                                       {"diffusion_model.blocks.0.self_attn.q.diff_b", db}});
  std::unique_ptr<WanTransformer> base = WanTransformer::load(kTiny);
  std::unique_ptr<WanTransformer> model = WanTransformer::load(kTiny);
  std::vector<LoraAdapter> ad = {load_lora(p1, 0.7, cfg, true), load_lora(p2, -0.5, cfg, true)};
  EXPECT_EQ(ad[0].num_tensors(), 2);
  EXPECT_EQ(ad[1].num_tensors(), 2);  // q's weight and bias
  EXPECT_EQ(ad[1].max_rank(), 3);
  merge_lora(*model, ad);

  const WanTransformerWeights &w0 = base->weights(), &w = model->weights();
  expect_near_all(w.blocks[0].attn1.q.w, direct(w0.blocks[0].attn1.q.w, {{b1, a1, 0.7}, {b2, a2, -0.5 * 6.0 / 3.0}}),
                  "q (two adapters)");
  expect_near_all(w.blocks[1].ffn1.w, direct(w0.blocks[1].ffn1.w, {{b1f, a1f, 0.7}}), "ffn1 (one adapter)");
  std::vector<double> bias(w0.blocks[0].attn1.q.b.f32(), w0.blocks[0].attn1.q.b.f32() + D);
  for (int64_t i = 0; i < D; ++i) bias[size_t(i)] += -0.5 * db.f32()[i];  // diff_b: times scale only
  expect_near_all(w.blocks[0].attn1.q.b, bias, "q bias");
  // Untouched weights keep their bits.
  EXPECT_EQ(0, std::memcmp(w.blocks[0].attn1.k.w.raw(), w0.blocks[0].attn1.k.w.raw(), w0.blocks[0].attn1.k.w.nbytes()));
  EXPECT_EQ(0, std::memcmp(w.blocks[1].attn1.q.w.raw(), w0.blocks[1].attn1.q.w.raw(), w0.blocks[1].attn1.q.w.nbytes()));
  fs::remove(p1);
  fs::remove(p2);
}

// The image path's adapters (Wan 2.1 I2V LoRAs): original names k_img / v_img / norm_k_img /
// img_emb.proj.1 / .3 map as diffusers' converter maps them, and merge into the image K/V
// projections and the image embedder.
TEST(LoraMerge, ImageToVideoKeys) {
  const std::string i2v = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/wan21-i2v-tiny/transformer";
  const WanTransformerConfig cfg = WanTransformerConfig::load(i2v);
  const int64_t D = cfg.dim(), I = *cfg.image_dim, A = *cfg.added_kv_proj_dim;
  EXPECT_EQ(key("diffusion_model.blocks.1.cross_attn.k_img.lora_down.weight", true).module, "blocks.1.attn2.add_k_proj");
  EXPECT_EQ(key("diffusion_model.blocks.1.cross_attn.norm_k_img.diff", true).module, "blocks.1.attn2.norm_added_k");
  EXPECT_EQ(key("diffusion_model.img_emb.proj.3.lora_up.weight", true).module,
            "condition_embedder.image_embedder.ff.net.2");
  EXPECT_EQ(lora_target_shape(cfg, "blocks.0.attn2.add_v_proj")->weight, (Shape{D, A}));
  EXPECT_EQ(lora_target_shape(cfg, "condition_embedder.image_embedder.ff.net.0.proj")->weight, (Shape{I, I}));
  EXPECT_FALSE(lora_target_shape(WanTransformerConfig::load(kTiny), "blocks.0.attn2.add_k_proj"));  // no image path
  Tensor ak = randn({2, A}, 11), bk = randn({D, 2}, 12), ae = randn({2, I}, 13), be = randn({D, 2}, 14);
  const std::string p = write("i2v", {{"diffusion_model.blocks.1.cross_attn.k_img.lora_down.weight", ak},
                                      {"diffusion_model.blocks.1.cross_attn.k_img.lora_up.weight", bk},
                                      {"diffusion_model.img_emb.proj.3.lora_down.weight", ae},
                                      {"diffusion_model.img_emb.proj.3.lora_up.weight", be}});
  std::unique_ptr<WanTransformer> base = WanTransformer::load(i2v), model = WanTransformer::load(i2v);
  std::vector<LoraAdapter> ad = {load_lora(p, 0.5, cfg, true)};
  EXPECT_EQ(ad[0].num_tensors(), 2);
  merge_lora(*model, ad);
  const WanTransformerWeights &w0 = base->weights(), &w = model->weights();
  expect_near_all(w.blocks[1].image.k.w, direct(w0.blocks[1].image.k.w, {{bk, ak, 0.5}}), "add_k_proj");
  expect_near_all(w.image_embedder.ff2.w, direct(w0.image_embedder.ff2.w, {{be, ae, 0.5}}), "image_embedder ff2");
  EXPECT_EQ(0, std::memcmp(w.blocks[1].image.v.w.raw(), w0.blocks[1].image.v.w.raw(), w0.blocks[1].image.v.w.nbytes()));
  fs::remove(p);
}

TEST(LoraMerge, OrderOfOneAdapterIsTheSumOfTwoHalves) {
  // scale 1 once equals scale 0.5 twice (the sum is formed in fp32 and added once).
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  std::unique_ptr<WanTransformer> one = WanTransformer::load(kTiny), two = WanTransformer::load(kTiny);
  const std::string path = kLoraDir + "/diffusers_format.safetensors";
  merge_lora(*one, {load_lora(path, 1.0, cfg, true)});
  merge_lora(*two, {load_lora(path, 0.5, cfg, true), load_lora(path, 0.5, cfg, true)});
  const Tensor &x = one->weights().blocks[1].attn2.v.w, &y = two->weights().blocks[1].attn2.v.w;
  std::vector<double> ref(x.f32(), x.f32() + x.numel());
  expect_near_all(y, ref, "attn2.v");
}

TEST(LoraMerge, GoldenFormatsHoldTheSameAdapter) {
  // diffusers_format: no alpha (factor 1); wan_format: alpha 2 at rank 4 with lora_up doubled.
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  LoraAdapter d = load_lora(kLoraDir + "/diffusers_format.safetensors", 0.7, cfg, true);
  LoraAdapter w = load_lora(kLoraDir + "/wan_format.safetensors", 0.7, cfg, true);
  ASSERT_EQ(d.updates.size(), size_t(cfg.num_layers * 10));  // q k v o of both attentions, two FFN
  ASSERT_EQ(w.updates.size(), d.updates.size());
  for (size_t i = 0; i < d.updates.size(); ++i) {
    EXPECT_EQ(d.updates[i].module, w.updates[i].module);
    EXPECT_FLOAT_EQ(d.updates[i].factor, 0.7f);
    EXPECT_FLOAT_EQ(w.updates[i].factor, 0.35f);
  }
  std::unique_ptr<WanTransformer> m1 = WanTransformer::load(kTiny), m2 = WanTransformer::load(kTiny);
  merge_lora(*m1, {d});
  merge_lora(*m2, {w});
  const Tensor &x = m1->weights().blocks[0].ffn2.w, &y = m2->weights().blocks[0].ffn2.w;
  std::vector<double> ref(x.f32(), x.f32() + x.numel());
  expect_near_all(y, ref, "ffn2");
}

// The device merge's packing: every low-rank update's up and downᵀ, 128-element aligned, exact;
// f32 for the golden files' f32 factors, bf16 once every factor value is a bf16 value.
void expect_packed(const LoraSet& set, DType dt) {
  ASSERT_TRUE(set.packed.defined());
  ASSERT_EQ(set.packed.dtype(), dt);
  const Tensor p32 = set.packed.to(DType::kF32);  // exact for both
  const float* p = p32.f32();
  int packed = 0;
  for (const LoraAdapter& a : set.adapters)
    for (const LoraUpdate& u : a.updates) {
      if (!u.down.defined()) continue;
      ASSERT_GE(u.packed_up, 0);
      ASSERT_GE(u.packed_down_t, 0);
      EXPECT_EQ(u.packed_up % 128, 0);
      EXPECT_EQ(u.packed_down_t % 128, 0);
      for (int64_t i = 0; i < u.up.numel(); ++i) ASSERT_EQ(p[u.packed_up + i], u.up.f32()[i]) << u.module;
      const int64_t r = u.down.dim(0), in = u.down.dim(1);
      for (int64_t k = 0; k < r; ++k)
        for (int64_t j = 0; j < in; ++j)
          ASSERT_EQ(p[u.packed_down_t + j * r + k], u.down.f32()[k * in + j]) << u.module;
      ++packed;
    }
  EXPECT_EQ(packed, 2 * 20);
}

TEST(LoraMerge, PackHoldsUpAndDownTransposed) {
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  LoraSet set;
  set.adapters = {load_lora(kLoraDir + "/wan_format.safetensors", 0.7, cfg, true),
                  load_lora(kLoraDir + "/diffusers_format.safetensors", 0.4, cfg, true)};
  pack_lora_factors(set);
  expect_packed(set, DType::kF32);
  // The same factors rounded to bf16 values (as a bf16 file holds them): packed in bf16, exactly.
  for (LoraAdapter& a : set.adapters)
    for (LoraUpdate& u : a.updates)
      if (u.down.defined()) u.up = u.up.to(DType::kBF16).to(DType::kF32), u.down = u.down.to(DType::kBF16).to(DType::kF32);
  pack_lora_factors(set);
  expect_packed(set, DType::kBF16);
  // One value that bf16 cannot hold keeps the whole set in f32.
  set.adapters[1].updates.back().up.f32()[0] += 1e-6f;
  pack_lora_factors(set);
  expect_packed(set, DType::kF32);
}

TEST(LoraErrors, StrictNamesKeyAndFile) {
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  const int64_t D = cfg.dim();
  const std::string unmatched = write("unmatched", {{"transformer.blocks.7.attn1.to_q.lora_A.weight", randn({4, D}, 1)},
                                                    {"transformer.blocks.7.attn1.to_q.lora_B.weight", randn({D, 4}, 2)}});
  expect_error([&] { load_lora(unmatched, 1.0, cfg, true); }, ExitCode::kModel,
               {unmatched, "transformer.blocks.7.attn1.to_q.lora_", "matches no weight", "lora_strict"});
  const std::string shape = write("shape", {{"blocks.0.attn1.to_k.lora_A.weight", randn({4, D + 1}, 1)},
                                            {"blocks.0.attn1.to_k.lora_B.weight", randn({D, 4}, 2)}});
  expect_error([&] { load_lora(shape, 1.0, cfg, true); }, ExitCode::kModel,
               {shape, "blocks.0.attn1.to_k.lora_A.weight", fmt::format("[rank, {}]", D)});
  const std::string rank = write("rank", {{"blocks.0.attn1.to_k.lora_A.weight", randn({4, D}, 1)},
                                          {"blocks.0.attn1.to_k.lora_B.weight", randn({D, 2}, 2)}});
  expect_error([&] { load_lora(rank, 1.0, cfg, true); }, ExitCode::kModel, {rank, "to_k.lora_B.weight", "rank 4"});
  const std::string lone = write("lone", {{"diffusion_model.blocks.0.ffn.0.lora_down.weight", randn({4, D}, 1)}});
  expect_error([&] { load_lora(lone, 1.0, cfg, true); }, ExitCode::kModel,
               {lone, "diffusion_model.blocks.0.ffn.0.lora_down.weight", "no matching lora_B"});
  const std::string odd = write("odd", {{"transformer.blocks.0.attn1.to_q.weight", randn({D, D}, 1)}});
  expect_error([&] { load_lora(odd, 1.0, cfg, true); }, ExitCode::kModel,
               {odd, "transformer.blocks.0.attn1.to_q.weight", "not a LoRA tensor"});
  // A key renamed to fit no weight: named first, before the partner it left unpaired, and both named.
  const std::string renamed = write("renamed", {{"blocks.0.attn1.to_zz.lora_A.weight", randn({4, D}, 1)},
                                                {"blocks.0.attn1.to_q.lora_B.weight", randn({D, 4}, 2)}});
  try {
    load_lora(renamed, 1.0, cfg, true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.message();
    const size_t zz = m.find("blocks.0.attn1.to_zz.lora_A.weight"), q = m.find("blocks.0.attn1.to_q.lora_B.weight");
    EXPECT_NE(zz, std::string::npos) << m;
    EXPECT_NE(q, std::string::npos) << m;
    EXPECT_LT(zz, q) << m;
    EXPECT_NE(m.find("2 problem(s)"), std::string::npos) << m;
  }
  for (const auto& p : {unmatched, shape, rank, lone, odd, renamed}) fs::remove(p);
}

TEST(LoraErrors, NonStrictWarnsAndAppliesTheRest) {
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  const int64_t D = cfg.dim();
  const std::string p = write("mixed", {{"transformer.blocks.9.attn1.to_q.lora_A.weight", randn({4, D}, 1)},
                                        {"transformer.blocks.9.attn1.to_q.lora_B.weight", randn({D, 4}, 2)},
                                        {"transformer.blocks.0.attn1.to_v.lora_A.weight", randn({4, D}, 3)},
                                        {"transformer.blocks.0.attn1.to_v.lora_B.weight", randn({D, 4}, 4)}});
  LoraAdapter a = load_lora(p, 1.0, cfg, /*strict=*/false);
  EXPECT_EQ(a.skipped_keys, 2u);
  ASSERT_EQ(a.updates.size(), 1u);
  EXPECT_EQ(a.updates[0].module, "blocks.0.attn1.to_v");
  // The header-only read (vgen plan) agrees on what matches.
  LoraAdapter h = load_lora(p, 1.0, cfg, false, /*with_data=*/false);
  EXPECT_EQ(h.num_tensors(), 1);
  EXPECT_EQ(h.max_rank(), 4);
  fs::remove(p);
}

TEST(LoraErrors, TargetTransformer2NeedsASecondExpert) {
  Recipe r = parse_recipe("lora: [{path: " + kLoraDir + "/diffusers_format.safetensors, target: transformer_2}]",
                          "r.yaml", {});
  std::unique_ptr<WanTransformer> m = WanTransformer::load(kTiny);
  expect_error([&] { merge_recipe_lora(r, *m, nullptr); }, ExitCode::kRecipe, {"lora[0].target", "transformer_2"});
  EXPECT_TRUE(load_lora_for(r, "transformer", m->config()).empty());
  EXPECT_EQ(load_lora_for(r, "transformer_2", m->config()).size(), 1u);
}

TEST(LoraRecipe, ParsesListsShorthandsAndOverrides) {
  Recipe r = parse_recipe("lora:\n  - {path: a.safetensors, scale: 0.7}\n  - path: b.safetensors\n    target: "
                          "transformer\nlora_strict: false\n",
                          "r.yaml", {});
  ASSERT_EQ(r.lora.size(), 2u);
  EXPECT_EQ(r.lora[0].path, fs::absolute("a.safetensors").lexically_normal().string());
  EXPECT_DOUBLE_EQ(r.lora[0].scale, 0.7);
  EXPECT_EQ(r.lora[0].target, LoraTarget::kBoth);
  EXPECT_DOUBLE_EQ(r.lora[1].scale, 1.0);
  EXPECT_EQ(r.lora[1].target, LoraTarget::kFirstExpert);
  EXPECT_FALSE(r.lora_strict);
  EXPECT_EQ(r.resolved["lora"][0]["scale"].get<double>(), 0.7);
  EXPECT_FALSE(r.resolved["lora_strict"].get<bool>());
  Recipe d = parse_recipe("", "r.yaml", {});
  EXPECT_TRUE(d.lora.empty());
  EXPECT_TRUE(d.lora_strict);
  Recipe s = parse_recipe("", "r.yaml", {"lora=/x/distill.safetensors"});
  ASSERT_EQ(s.lora.size(), 1u);
  EXPECT_EQ(s.lora[0].path, "/x/distill.safetensors");
  Recipe l = parse_recipe("", "r.yaml", {"lora=[{path: /x/a.safetensors, scale: 0.5}, /x/b.safetensors]"});
  ASSERT_EQ(l.lora.size(), 2u);
  EXPECT_DOUBLE_EQ(l.lora[0].scale, 0.5);
  EXPECT_EQ(l.lora[1].path, "/x/b.safetensors");
}

TEST(LoraRecipe, ErrorsNameThePath) {
  auto parse = [](const std::string& y, std::vector<std::string> sets = {}) {
    return [=] { parse_recipe(y, "r.yaml", sets); };
  };
  expect_error(parse("lora:\n  - {path: a.safetensors, scael: 0.5}\n"), ExitCode::kRecipe,
               {"r.yaml:2:", "lora[0].scael", "did you mean 'scale'"});
  expect_error(parse("lora:\n  - {path: a.safetensors}\n  - {scale: 0.5}\n"), ExitCode::kRecipe,
               {"lora[1]", "missing key 'path'"});
  expect_error(parse("lora: [{path: a.safetensors, target: transformer_3}]\n"), ExitCode::kRecipe,
               {"lora[0].target", "transformer | transformer_2 | both"});
  expect_error(parse("lora: [{path: a.safetensors, scale: strong}]\n"), ExitCode::kRecipe,
               {"lora[0].scale", "expected a number"});
  expect_error(parse("lora: [[a.safetensors]]\n"), ExitCode::kRecipe, {"lora[0]", "expected {path, scale}"});
  expect_error(parse("lora_strict: maybe\n"), ExitCode::kRecipe, {"lora_strict", "true or false"});
  expect_error(parse("", {"lora=[{path: a.safetensors, scal: 1}]"}), ExitCode::kRecipe,
               {"--set lora=", "lora[0].scal", "did you mean 'scale'"});
  expect_error(parse("device: cuda\nparallel_config: {dwdp_size: 2}\nlora: [a.safetensors]\n"), ExitCode::kRecipe,
               {"lora", "parallel_config.dwdp_size 2"});
  // On the CPU the host DWDP runs after the merge: accepted.
  EXPECT_EQ(parse_recipe("parallel_config: {dwdp_size: 2}\nlora: [a.safetensors]\n", "r.yaml", {}).lora.size(), 1u);
}

TEST(LoraPlan, ListsAdaptersAndTheWeightsTheyChange) {
  const std::string root = std::string(VGEN_SOURCE_DIR) + "/tests/golden/";
  Recipe r = parse_recipe("model: " + root + "wan22-tiny\ngeneration: {height: 32, width: 48, num_frames: 9}\n"
                          "lora:\n  - {path: " + kLoraDir + "/wan_format.safetensors, scale: 0.7}\n"
                          "  - {path: " + kLoraDir + "/diffusers_format.safetensors, target: transformer_2}\n",
                          "r.yaml", {});
  Plan p = make_plan(r, 1);
  ASSERT_EQ(p.loras.size(), 3u);  // lora[0] on both experts, lora[1] on transformer_2
  EXPECT_EQ(p.loras[0].component, "transformer");
  EXPECT_EQ(p.loras[1].component, "transformer_2");
  EXPECT_EQ(p.loras[2].index, 1);
  EXPECT_EQ(p.loras[2].component, "transformer_2");
  for (const PlanLora& l : p.loras) {
    EXPECT_EQ(l.tensors, 20);
    EXPECT_EQ(l.max_rank, 4);
  }
  const std::string text = format_plan(r, p);
  EXPECT_NE(text.find("lora[0]: " + kLoraDir + "/wan_format.safetensors scale 0.7 -> transformer: 20 weight(s)"),
            std::string::npos)
      << text;
  Recipe bad = parse_recipe("model: " + root + "wan21-tiny\nlora: [{path: " + kLoraDir +
                                "/wan_format.safetensors, target: transformer_2}]\n",
                            "r.yaml", {});
  expect_error([&] { make_plan(bad, 1); }, ExitCode::kRecipe, {"lora[0].target"});
}
