// MPI parity test of the parallel VAE decode against the single-rank decode (the tiny Wan 2.1 VAE of
// the golden fixtures and the tiny Wan 2.2 VAE of golden-i2v — residual up blocks, unpatchify —,
// random latents). Usage: mpirun -np N vae_parallel_test --pvs P
// The mesh is ring_size = N with parallel_vae_size = P (P <= N), so ranks P..N-1 sit outside the VAE
// group and must stay out of its collectives. Both split dims, latent extents that divide and that
// do not (first ranks get one more col), down to one latent col per rank.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "dist/bootstrap.h"
#include "mesh_test_main.h"
#include "model/wan/vae/vae_parallel.h"

namespace vgen {
namespace {

constexpr double kTol = 1e-5;

Tensor random_latents(const Shape& s, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(size_t(shape_numel(s)));
  for (auto& x : v) x = d(g);
  return Tensor::from_vector(v, s);
}

void compare(const Tensor& got, const Tensor& ref, const std::string& what) {
  if (got.shape() != ref.shape()) fail(what + ": shape " + got.str() + " vs " + ref.str());
  double num = 0, den = 0, max_abs = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = double(got.f32()[i]) - double(ref.f32()[i]);
    if (!std::isfinite(got.f32()[i])) fail(what + ": non-finite output");
    num += d * d;
    den += double(ref.f32()[i]) * double(ref.f32()[i]);
    max_abs = std::max(max_abs, std::fabs(d));
  }
  const double rel = std::sqrt(num / std::max(den, 1e-30));
  if (process_rank() == 0) std::printf("%-44s rel-l2 %.3e  max-abs %.3e\n", what.c_str(), rel, max_abs);
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

  const std::string src = VGEN_SOURCE_DIR;
  const WanVaeDecoder dec = WanVaeDecoder::load(src + "/tests/golden/wan21-tiny/vae");
  uint32_t seed = 100;
  for (const std::string vae : {"/tests/golden/wan21-tiny/vae", "/tests/golden-i2v/wan22-ti2v-tiny/vae"}) {
    const WanVaeDecoder d = WanVaeDecoder::load(src + vae);
    const int64_t Z = d.config().z_dim;
    // (T, H, W) latent shapes: split extents equal to P, not divisible by P, and larger.
    const std::vector<Shape> shapes = {{1, Z, 3, 4, 5}, {1, Z, 2, 7, 7}, {1, Z, 2, pvs, pvs}, {1, Z, 1, 5, 6}};
    for (const Shape& s : shapes) {
      Tensor z = random_latents(s, seed++);  // same on every rank
      Tensor ref = d.decode(z);              // single-rank decode, on every rank
      for (VaeSplitDim dim : {VaeSplitDim::kWidth, VaeSplitDim::kHeight}) {
        const std::string name = fmt::format("pvs {} of {} {} z {} latent {}", pvs, env.world_size,
                                             dim == VaeSplitDim::kWidth ? "width " : "height", Z, shape_str(s));
        if (mesh.in_vae_group()) {
          Tensor got = parallel_vae_decode(d, z, *mesh.vae, dim);
          compare(got, ref, name);
        }
        mesh.world->barrier();
      }
    }
  }
  // Too many ranks for the split extent: a recipe error on every VAE rank, before any collective.
  if (mesh.in_vae_group() && pvs > 1) {
    try {
      parallel_vae_decode(dec, random_latents({1, 16, 1, 3, pvs - 1}, 7), *mesh.vae, VaeSplitDim::kWidth);
      fail("latent width < parallel_vae_size accepted");
    } catch (const Error& e) {
      if (e.code() != ExitCode::kRecipe) fail("wrong error code: " + e.message());
    }
  }
  mesh.world->barrier();
  if (env.world_rank == 0) std::printf("vae_parallel_test pvs %d world %d: all passed\n", pvs, env.world_size);
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
