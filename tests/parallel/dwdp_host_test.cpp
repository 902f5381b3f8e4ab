// DWDP on the host (parallel/dwdp.h, MPI one-sided): the tiny golden DiT stretched to 5 blocks
// (blocks 2-4 are scaled copies of 0 and 1, so every block differs) split over a dwdp group of all
// ranks gives the same prediction, bit for bit, as the whole model, over 3 prompts (each rank its
// own inputs, as cfg/dp ranks have); 5 blocks refill the two staging slots every pass.
// Usage: mpirun -np N dwdp_host_test (the dwdp group is the whole world).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "dist/communicator.h"
#include "io/safetensors.h"
#include "dwdp_test_util.h"
#include "mesh_test_main.h"
#include "model/wan/dit/transformer.h"
#include "parallel/local_attention.h"
#include "model/dit_step.h"

namespace vgen {
namespace {

using dwdp_test::predict;
using dwdp_test::expect_identical;
using dwdp_test::random_host;

// Deep copies of the loaded weights with `blocks` blocks: block i >= 2 is block i % 2 scaled.
WanTransformerWeights stretched(const WanTransformerWeights& w, int blocks) {
  WanTransformerWeights out = w;
  out.blocks.resize(size_t(blocks));
  for (int i = 0; i < blocks; ++i) {
    WanBlockWeights b = w.blocks[size_t(i % 2)];
    const float scale = 1.0f + 0.05f * float(i);
    for_each_block_tensor(b, [&](Tensor& t) {
      if (!t.defined()) return;
      Tensor c = t.to(DType::kF32).clone();
      for (int64_t k = 0; k < c.numel(); ++k) c.f32()[k] *= scale;
      t = c;
    });
    out.blocks[size_t(i)] = b;
  }
  return out;
}

int run(int, char**, const DistEnv& env) {
  ParallelConfig pc;
  pc.dp_size = env.world_size;
  pc.dwdp_size = env.world_size;
  validate_mesh(pc, env.world_size, 0);
  Mesh mesh = make_mesh(pc, env);
  const std::string dir = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/transformer";
  WanTransformerConfig cfg = WanTransformerConfig::load(dir);
  const WanTransformerWeights loaded = load_wan_transformer_weights(WeightStore::open(dir), cfg);
  cfg.num_layers = 5;
  WanTransformer whole(cfg, stretched(loaded, 5));
  WanTransformer split(cfg, stretched(loaded, 5));
  split.enable_host_dwdp(env.world_size, *mesh.world);
  // Two ranks hold every other block whole (views of the window); more ranks, or forced small
  // slices (VGEN_DWDP_SLICE_BYTES), slice every block.
  int kept = 0;
  for (const auto& b : split.weights().blocks) kept += b.scale_shift_table.defined();
  const bool sliced = env.world_size > 2 || std::getenv("VGEN_DWDP_SLICE_BYTES") != nullptr;
  const int r = mesh.world->rank(), expected = sliced ? 0 : (5 - r + 1) / 2;
  if (kept != expected) fail(fmt::format("rank {} runs {} blocks in place, expected {}", r, kept, expected));
  for (int prompt = 0; prompt < 3; ++prompt) {
    const uint64_t s = uint64_t(env.world_rank) * 100 + uint64_t(prompt) * 10;
    Tensor x = random_host({1, cfg.in_channels, 2, 4, 6}, s + 1), ctx = random_host({1, 7, cfg.text_dim}, s + 2);
    Tensor t = Tensor::from_vector({float(900 - 300 * prompt)}, {1});
    Tensor a = predict(whole, x, t, ctx), b = predict(split, x, t, ctx);
    expect_identical(a.f32(), b.f32(), a.numel(), fmt::format("prompt {}", prompt));
  }
  mesh.world->barrier();
  if (env.world_rank == 0) std::printf("host dwdp parity OK (%d ranks, 5 blocks)\n", env.world_size);
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
