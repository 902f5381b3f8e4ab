// The Cosmos 3 transformer on the host in fp32 against tests/golden-cosmos3 (made with diffusers):
// mRoPE ids and tables, the understanding tower's per-layer K/V, and one forward with cond and
// uncond prompts of different lengths (every frame noisy, and a clean first frame), for the Qwen3
// style and the Edge style checkpoints. Tolerances: tests/golden-cosmos3/README.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/json.h"
#include "io/safetensors.h"
#include "model/cosmos3/mrope.h"
#include "model/cosmos3/transformer.h"

namespace vgen {
namespace {

const std::string kRoot = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3";

struct Case {
  Json params;
  WeightStore tensors;
  explicit Case(const std::string& name)
      : params(read_json_file(kRoot + "/cases/" + name + ".json", ExitCode::kInput)),
        tensors(WeightStore::open(kRoot + "/cases/" + name + ".safetensors")) {}
  Tensor f32(const std::string& n) const { return tensors.get_f32(n); }
  std::vector<int64_t> ids(const std::string& n) const {
    const Tensor t = tensors.get(n);
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  }
  std::string transformer_dir() const { return kRoot + "/" + params["model_dir"].get<std::string>() + "/transformer"; }
};

double rel_l2(const Tensor& out, const Tensor& ref) {
  EXPECT_EQ(out.numel(), ref.numel()) << out.str() << " vs " << ref.str();
  const Tensor a = out.to(DType::kF32), b = ref.to(DType::kF32);
  double num = 0, den = 0;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i) {
    const double d = double(a.f32()[i]) - double(b.f32()[i]);
    num += d * d;
    den += double(b.f32()[i]) * double(b.f32()[i]);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

// Records and prints the metric, so a run shows how close each output is.
void expect_rel_l2(const std::string& what, const Tensor& out, const Tensor& ref, double tol) {
  const double e = rel_l2(out, ref);
  std::printf("  %-28s rel-l2 %.3e (tol %.0e)\n", what.c_str(), e, tol);
  EXPECT_LE(e, tol) << what;
}

double max_abs(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.numel(), b.numel());
  double m = 0;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i)
    m = std::max(m, std::fabs(double(a.f32()[i]) - double(b.f32()[i])));
  return m;
}

// diffusers' table layout cat(f(angles), f(angles)) [N, Dh] from angles [N, Dh/2].
Tensor half_layout(const Tensor& angles, bool cosine) {
  const int64_t N = angles.dim(0), half = angles.dim(1);
  Tensor t = Tensor::empty({N, 2 * half}, DType::kF32);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < half; ++j) {
      const double a = angles.f32()[n * half + j];
      t.f32()[n * 2 * half + j] = t.f32()[n * 2 * half + half + j] = float(cosine ? std::cos(a) : std::sin(a));
    }
  return t;
}

void check_mrope(const std::string& name) {
  SCOPED_TRACE(name);
  const Case c(name);
  const Cosmos3Config cfg = Cosmos3Config::load(c.transformer_dir());
  const auto& g = c.params["grid"];
  const Tensor ids = mrope_position_ids(cfg, c.params["prompt_len"].get<int64_t>(),
                                        {g[0].get<int64_t>(), g[1].get<int64_t>(), g[2].get<int64_t>()},
                                        c.params["fps"].get<double>(), c.params["temporal_compression"].get<int>());
  EXPECT_EQ(max_abs(ids, c.f32("position_ids")), 0.0);
  const std::vector<float> inv = mrope_inv_freq(cfg);
  EXPECT_EQ(max_abs(Tensor::from_vector(inv, {int64_t(inv.size())}), c.f32("inv_freq")), 0.0);
  const Tensor ang = mrope_angles(cfg, ids);
  const double ec = max_abs(half_layout(ang, true), c.f32("cos")), es = max_abs(half_layout(ang, false), c.f32("sin"));
  std::printf("  cos max-abs %.3e, sin max-abs %.3e (tol 1e-5)\n", ec, es);
  EXPECT_LE(ec, 1e-5);
  EXPECT_LE(es, 1e-5);
}

TEST(GoldenCosmos3, MropeVideo) { check_mrope("mrope_video"); }
TEST(GoldenCosmos3, MropeImage) { check_mrope("mrope_image"); }
TEST(GoldenCosmos3, MropeVideoEdge) { check_mrope("mrope_video_edge"); }

void check_und_kv(const std::string& name) {
  SCOPED_TRACE(name);
  const Case c(name);
  const Cosmos3Transformer model = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  const Cosmos3PromptKv kv = model.prefill(c.ids("input_ids"));
  const int64_t layers = c.params["num_layers"].get<int64_t>();
  ASSERT_EQ(int64_t(kv.k.size()), layers);
  for (int64_t i = 0; i < layers; ++i) {
    // The keys are kept in the rope_ pair layout: permute the reference the same way.
    const Tensor k_ref = c.f32("k_" + std::to_string(i));
    const Tensor k_pairs = permute_rope_rows(k_ref.reshape({k_ref.numel(), 1}), model.config().head_dim);
    expect_rel_l2("k_" + std::to_string(i), kv.k[size_t(i)], k_pairs, 1e-4);
    expect_rel_l2("v_" + std::to_string(i), kv.v[size_t(i)], c.f32("v_" + std::to_string(i)), 1e-4);
  }
}

TEST(GoldenCosmos3, UndKv) { check_und_kv("und_kv"); }
TEST(GoldenCosmos3, UndKvEdge) { check_und_kv("und_kv_edge"); }

void check_forward(const std::string& name) {
  SCOPED_TRACE(name);
  const Case c(name);
  const Cosmos3Transformer model = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  const std::vector<int64_t> cond = c.ids("input_ids_cond"), uncond = c.ids("input_ids_uncond");
  ASSERT_NE(cond.size(), uncond.size());
  const Cosmos3PromptKv kv_cond = model.prefill(cond), kv_uncond = model.prefill(uncond);
  for (const char* mode : {"t2v", "i2v"}) {
    Cosmos3VideoInput in;
    in.latents = c.f32("latents");
    in.timestep = c.params["timestep"].get<float>();
    in.fps = c.params["fps"].get<double>();
    in.noisy_frames = c.params["noisy_frames"][mode].get<std::vector<int64_t>>();
    for (const auto& [which, kv] : {std::pair{"cond", &kv_cond}, std::pair{"uncond", &kv_uncond}}) {
      const Tensor v = model.forward(*kv, in);
      const std::string what = std::string("velocity_") + mode + "_" + which;
      expect_rel_l2(what, v, c.f32(what), 1e-4);
    }
  }
}

TEST(GoldenCosmos3, TransformerForward) { check_forward("transformer_forward"); }
TEST(GoldenCosmos3, TransformerForwardEdge) { check_forward("transformer_forward_edge"); }

}  // namespace
}  // namespace vgen
