// The CLIP vision tower (model/clip) on the GPU against its CPU forward: the tiny I2V fixture
// (gelu, head dim 8) and a random ViT-H-shaped checkpoint (quick_gelu, head dim 80, 257 tokens),
// in f32 (tight) and bf16 (the component tolerance of tests/golden/README.md); the gelu and
// quick_gelu device ops against their references.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/json.h"
#include "io/safetensors.h"
#include "kernels/activation/activation_ref.h"
#include "model/clip/clip_vision.h"
#include "ops/activation.h"

using namespace vgen;
using namespace vgen::testing;
namespace fs = std::filesystem;

namespace {

const std::string kEncoder = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/wan21-i2v-tiny/image_encoder";
const std::string kCase = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/cases/clip_image_encode.safetensors";

// A random CLIP vision checkpoint shaped like ViT-H/14's attention (head dim 80, 16×16 patches of
// 14 px + the class token), narrow and shallow.
std::string write_vith_like(uint32_t seed) {
  const fs::path d = fs::temp_directory_path() / ("vgen_test_clip_gpu_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  const int64_t D = 160, F = 640, C = 3, P = 14, S = 257, L = 3;
  std::vector<std::pair<std::string, Tensor>> t;
  auto add = [&](const std::string& n, const Shape& s, float lo, float hi) {
    t.push_back({n, Tensor::from_vector(random_vec(size_t(shape_numel(s)), ++seed, lo, hi), s)});
  };
  auto lin = [&](const std::string& n, int64_t out, int64_t in) {
    const float b = std::sqrt(3.0f / float(in));
    add(n + ".weight", {out, in}, -b, b);
    add(n + ".bias", {out}, -0.1f, 0.1f);
  };
  add("vision_model.embeddings.patch_embedding.weight", {D, C, P, P}, -0.05f, 0.05f);
  add("vision_model.embeddings.class_embedding", {D}, -1.0f, 1.0f);
  add("vision_model.embeddings.position_embedding.weight", {S, D}, -0.5f, 0.5f);
  add("vision_model.pre_layrnorm.weight", {D}, 0.5f, 1.5f);
  add("vision_model.pre_layrnorm.bias", {D}, -0.1f, 0.1f);
  for (int64_t l = 0; l < L; ++l) {
    const std::string p = "vision_model.encoder.layers." + std::to_string(l) + ".";
    for (const char* n : {"layer_norm1", "layer_norm2"}) {
      add(p + n + ".weight", {D}, 0.5f, 1.5f);
      add(p + n + ".bias", {D}, -0.1f, 0.1f);
    }
    for (const char* n : {"q_proj", "k_proj", "v_proj", "out_proj"}) lin(p + "self_attn." + n, D, D);
    lin(p + "mlp.fc1", F, D);
    lin(p + "mlp.fc2", D, F);
  }
  save_safetensors((d / "model.safetensors").string(), t);
  const Json cfg = {{"model_type", "clip_vision_model"},
                    {"hidden_size", D},
                    {"intermediate_size", F},
                    {"num_attention_heads", 2},
                    {"num_hidden_layers", L},
                    {"patch_size", P},
                    {"image_size", 224},
                    {"num_channels", C},
                    {"layer_norm_eps", 1e-5},
                    {"hidden_act", "quick_gelu"}};
  std::ofstream(d / "config.json") << cfg.dump();
  return d.string();
}

// The encoder in `dir` on the GPU in `dt` against the CPU forward, for `px`.
void compare_devices(const std::string& dir, const Tensor& px, DType dt, double tol) {
  SCOPED_TRACE(::testing::Message() << dir << " " << dtype_name(dt));
  const Tensor ref = ClipVisionEncoder::load(dir).penultimate_hidden_states(px);
  ClipVisionEncoder gpu = ClipVisionEncoder::load(dir);
  gpu.to_device(dt);
  const Tensor out = gpu.penultimate_hidden_states(px);
  EXPECT_FALSE(out.is_cpu());
  EXPECT_EQ(out.dtype(), dt);
  ASSERT_EQ(out.shape(), ref.shape());
  EXPECT_LE(rel_l2(out, ref), tol);
}

}  // namespace

TEST(ClipVisionGpu, TinyFixtureMatchesTheCpuAndTransformers) {
  VGEN_REQUIRE_GPU();
  const WeightStore cs = WeightStore::open(kCase);
  const Tensor px = cs.get_f32("pixel_values");
  compare_devices(kEncoder, px, DType::kF32, 1e-5);
  compare_devices(kEncoder, px, DType::kBF16, 3e-2);
  ClipVisionEncoder gpu = ClipVisionEncoder::load(kEncoder);
  gpu.to_device(DType::kBF16);
  EXPECT_LE(rel_l2(gpu.penultimate_hidden_states(px), cs.get_f32("penultimate_hidden_states")), 3e-2);
}

TEST(ClipVisionGpu, VitHShapedCheckpointMatchesTheCpu) {
  VGEN_REQUIRE_GPU();
  const std::string dir = write_vith_like(7);
  const Tensor px = Tensor::from_vector(random_vec(2 * 3 * 224 * 224, 99, -2.0f, 2.0f), {2, 3, 224, 224});
  compare_devices(dir, px, DType::kF32, 5e-5);  // K up to 640: cuBLAS and the CPU BLAS sum in other orders
  compare_devices(dir, px, DType::kBF16, 3e-2);
  fs::remove_all(dir);
}

TEST(ClipVisionGpu, GeluErfAndQuickGeluMatchTheirReferences) {
  VGEN_REQUIRE_GPU();
  const int64_t n = 1037;  // a vector body and a scalar tail
  const std::vector<float> xs = random_vec(size_t(n), 5, -6.0f, 6.0f);
  std::vector<float> g(xs.size()), q(xs.size());
  kern::gelu_erf_ref(xs.data(), g.data(), n);
  kern::quick_gelu_ref(xs.data(), q.data(), n);
  const Tensor host = Tensor::from_vector(xs, {n});
  Tensor dg = host.to(Device::kCUDA), dq = host.to(Device::kCUDA);
  gelu_erf_(dg);
  quick_gelu_(dq);
  const Tensor hg = dg.to(Device::kCPU), hq = dq.to(Device::kCPU);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(hg.f32()[i], g[size_t(i)], 1e-6f * (1.0f + std::fabs(g[size_t(i)]))) << xs[size_t(i)];
    EXPECT_NEAR(hq.f32()[i], q[size_t(i)], 1e-6f * (1.0f + std::fabs(q[size_t(i)]))) << xs[size_t(i)];
  }
}

#else
VGEN_GPU_TESTS_NEED_CUDA(ClipVisionGpu)
#endif
