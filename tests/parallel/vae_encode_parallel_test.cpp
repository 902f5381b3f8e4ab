// MPI parity test of the parallel VAE encode against the single-rank encode (the tiny Wan 2.1 and
// Wan 2.2 VAEs of tests/golden-i2v, random videos). Usage: mpirun -np N vae_encode_parallel_test --pvs P
// The mesh is ring_size = N with parallel_vae_size = P (P <= N), so ranks P..N-1 sit outside the VAE
// group and must stay out of its collectives. Both split dims, latent extents that divide and that
// do not (first ranks get one more row/col), down to one latent row/col per rank.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "dist/bootstrap.h"
#include "mesh_test_main.h"
#include "model/wan/vae/vae_encoder_parallel.h"

namespace vgen {
namespace {

constexpr double kTol = 1e-5;

Tensor random_video(const Shape& s, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(size_t(shape_numel(s)));
  for (auto& x : v) x = d(g);
  return Tensor::from_vector(v, s);
}

void compare(const Tensor& got, const Tensor& ref, const std::string& what) {
  if (got.shape() != ref.shape()) fail(what + ": shape " + got.str() + " vs " + ref.str());
  double num = 0, den = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = double(got.f32()[i]) - double(ref.f32()[i]);
    if (!std::isfinite(got.f32()[i])) fail(what + ": non-finite output");
    num += d * d;
    den += double(ref.f32()[i]) * double(ref.f32()[i]);
  }
  const double rel = std::sqrt(num / std::max(den, 1e-30));
  if (process_rank() == 0) std::printf("%-56s rel-l2 %.3e\n", what.c_str(), rel);
  if (!(rel <= kTol)) fail(what + ": rel-l2 " + std::to_string(rel) + " > tolerance");
}

int run(int argc, char** argv, const DistEnv& env) {
  int pvs = env.world_size;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--pvs") pvs = std::stoi(argv[i + 1]);
    else fail(std::string("unknown argument ") + argv[i]);
  ParallelConfig pc;
  pc.ring_size = env.world_size;
  pc.parallel_vae_size = pvs;
  Mesh mesh = make_mesh(pc, env);
  if (mesh.in_vae_group() != (env.world_rank < pvs)) fail("VAE group membership differs from ranks 0..P-1");

  uint32_t seed = 200;
  for (const char* model : {"wan21-i2v-tiny", "wan22-ti2v-tiny"}) {
    const WanVaeEncoder enc =
        WanVaeEncoder::load(std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/" + model + "/vae");
    const int64_t s = vae_encoder_spatial_factor(enc.config());
    // Latent (h, w): split extents equal to P, not divisible by P, and larger; 1 and 5 frames.
    const std::vector<Shape> shapes = {{1, 3, 5, 4 * s, 5 * s}, {1, 3, 5, 7 * s, 3 * s}, {1, 3, 1, pvs * s, pvs * s}};
    for (const Shape& sh : shapes) {
      const Tensor video = random_video(sh, seed++);  // same on every rank
      const Tensor ref = enc.encode_moments(video);    // single-rank encode, on every rank
      for (VaeSplitDim dim : {VaeSplitDim::kWidth, VaeSplitDim::kHeight}) {
        const std::string name = fmt::format("{} pvs {} of {} {} video {}", model, pvs, env.world_size,
                                             dim == VaeSplitDim::kWidth ? "width " : "height", shape_str(sh));
        if (mesh.in_vae_group()) compare(vae_group_encode(enc, video, mesh.vae.get(), dim), ref, name);
        mesh.world->barrier();
      }
    }
    // Too many ranks for the latent extent: a recipe error on every VAE rank, before any collective.
    if (mesh.in_vae_group() && pvs > 1) {
      try {
        parallel_vae_encode(enc, random_video({1, 3, 1, s, (pvs - 1) * s}, 7), *mesh.vae, VaeSplitDim::kWidth);
        fail("latent width < parallel_vae_size accepted");
      } catch (const Error& e) {
        if (e.code() != ExitCode::kRecipe) fail("wrong error code: " + e.message());
      }
    }
    mesh.world->barrier();
  }
  if (env.world_rank == 0) std::printf("vae_encode_parallel_test pvs %d world %d: all passed\n", pvs, env.world_size);
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
