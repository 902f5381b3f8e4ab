// MPI parity test of the sequence-parallel self-attention under precision fp8 (the CPU emulation,
// attention_fp8_ref in every block_attention) against the single-rank fp8 attention on the
// unpadded tensors, with Q·Kᵀ in e4m3 and in INT8 (fp8_config.attention_qk). Usage as
// attention_parallel_test: mpirun -np N fp8_attention_parallel_test [--dp N] [--cfg N]
// [--ulysses N] [--ring N] [--attn2d RxC] [--async-ulysses 1]. K/V with the queries' heads and grouped.
//
// Tolerances (docs/fp8.md "Meshes"):
//  * Ulysses alone on an unpadded sequence computes every head exactly as one rank does (the same
//    quantisation groups: a head's whole sequence, the same 128-token blocks): rel-L2 <= 1e-6.
//  * Ring / Attention2D (and a padded Ulysses, whose pad queries join the last Q block's scale)
//    quantise per key chunk and query shard: K smoothed by the chunk's mean, Q/K/V scales over
//    the chunk's tokens, softmax tiles from the chunk's start. Each is the same fp8 approximation
//    of the exact attention over smaller groups, whose scales are at least as tight, so its error
//    against the exact attention e_mesh is that of one rank e_1 up to sampling noise: required
//    e_mesh <= 1.5·e_1, hence ||mesh − one rank|| <= e_mesh + e_1 <= 2.5·e_1 (also checked), with
//    e_1 measured on the same inputs (a sanity bound of 10% on it: the kernel tests pin its accuracy).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dist/bootstrap.h"
#include "kernels/attention/attention_fp8_ref.h"
#include "kernels/attention/attention_ref.h"
#include "mesh_test_main.h"
#include "seq_test_util.h"
#include "ops/fp8.h"
#include "parallel/seq_attention_factory.h"
#include "parallel/seq_shuffle.h"

namespace vgen {
namespace {

constexpr double kExactTol = 1e-6, kMeshFactor = 1.5, kPairFactor = 2.5, kFp8Max = 0.10;

struct Case {
  int64_t B, S, heads_per_u, D;
};

// Grouped K/V heads (H and KVH absolute; every registered Ulysses degree divides H): the emulation
// runs on the K/V repeated at the innermost call, so the bounds are those of the repeated heads.
struct GqaCase {
  int64_t B, S, H, KVH, D;
};

using test::random_tensor;
using test::shard_seq;
constexpr float kPadScale = 8.0f;  // pad rows of the padded sequence: ±kPadScale

// ||a − b|| / ||b|| over the real tokens [0, S) of b [B, S, H, D]; a is [B, Sa >= S, H, D].
double rel_l2(const Tensor& a, const Tensor& b) {
  const int64_t B = b.dim(0), S = b.dim(1), X = b.dim(2) * b.dim(3), Sa = a.dim(1);
  double num = 0, den = 0;
  for (int64_t i = 0; i < B; ++i)
    for (int64_t s = 0; s < S * X; ++s) {
      const double x = a.f32()[i * Sa * X + s], y = b.f32()[i * S * X + s];
      num += (x - y) * (x - y);
      den += y * y;
    }
  return std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
}

struct Result {
  double e1 = 0, mesh = 0, pair = 0;
};

Result run_case(Mesh& mesh, SeqAttention& attn, const GqaCase& c, uint64_t seed, kern::Fp8Qk qk) {
  const int SP = mesh.shape.seq();
  const int64_t B = c.B, S = c.S, H = c.H, KVH = c.KVH, D = c.D;
  std::mt19937_64 rng(seed * 1000003 + uint64_t(mesh.coord.cfg) * 7919 + uint64_t(mesh.coord.dp) * 104729);
  Tensor q = random_tensor({B, S, H, D}, rng, 2.0f);    // [B, S, H, D]
  Tensor k = random_tensor({B, S, KVH, D}, rng, 2.0f);  // [B, S, KVH, D]
  Tensor v = random_tensor({B, S, KVH, D}, rng, 1.0f);
  for (int64_t i = 0; i < k.numel(); ++i) k.f32()[i] += 1.5f;  // a common key offset: what smoothing removes
  const Tensor kr = KVH == H ? k : test::repeat_heads(k, H), vr = KVH == H ? v : test::repeat_heads(v, H);
  const float scale = float(1.0 / std::sqrt(double(D)));
  Tensor exact = Tensor::empty({B, S, H, D}, DType::kF32), one = Tensor::empty({B, S, H, D}, DType::kF32);
  kern::attention_ref(q.f32(), kr.f32(), vr.f32(), exact.f32(), nullptr, B, S, S, H, D, S, scale);
  kern::attention_fp8_ref(q.f32(), kr.f32(), vr.f32(), one.f32(), nullptr, B, S, S, H, D, S, scale, qk);

  const SeqLayout layout = SeqLayout::make(S, SP, mesh.seq_rank());
  const int64_t L = layout.local();
  Tensor qp = test::pad_seq(q, layout.padded, rng, kPadScale), kp = test::pad_seq(k, layout.padded, rng, kPadScale),
         vp = test::pad_seq(v, layout.padded, rng, kPadScale);
  Tensor out;
  {
    const AttentionPolicy fp8{AttentionBackend::kAuto, AttentionKeySplit{}, /*fp8=*/true,
                              qk == kern::Fp8Qk::kInt8 ? QkFormat::kInt8 : QkFormat::kE4m3};
    out = attn.forward(shard_seq(qp, layout.begin(), L), shard_seq(kp, layout.begin(), L),
                       shard_seq(vp, layout.begin(), L), layout, fp8);
  }
  const std::string what = fmt::format("{} Q·Kᵀ, B={} S={} H={} KVH={} D={} (padded {}, seq rank {}/{})",
                                       qk == kern::Fp8Qk::kInt8 ? "int8" : "e4m3", B, S, H, KVH, D, layout.padded,
                                       layout.seq_rank, SP);
  if (out.shape() != Shape({B, L, H, D})) fail(what + ": output " + out.str());
  Tensor recv = Tensor::empty({SP, B, L, H, D}, DType::kF32);
  mesh.seq->all_gather(out, recv);
  Tensor full = Tensor::empty({B, layout.padded, H, D}, DType::kF32);
  gathered_to_seq(recv, SP, 1, 0, full);

  Result r{rel_l2(one, exact), rel_l2(full, exact), rel_l2(full, one)};
  if (std::getenv("VGEN_FP8_TEST_VERBOSE") && mesh.world_rank == 0)
    std::printf("%s: one rank %.4f, mesh %.4f (ratio %.3f), mesh vs one %.4g\n", what.c_str(), r.e1, r.mesh,
                r.mesh / r.e1, r.pair);
  if (!(r.e1 <= kFp8Max)) fail(fmt::format("{}: one-rank fp8 attention rel-L2 {} > {}", what, r.e1, kFp8Max));
  const bool exact_class = mesh.shape.cp() == 1 && layout.padded == S;
  if (exact_class) {
    if (!(r.pair <= kExactTol))
      fail(fmt::format("{}: Ulysses differs from one rank by rel-L2 {} > {}", what, r.pair, kExactTol));
  } else {
    if (!(r.mesh <= kMeshFactor * r.e1))
      fail(fmt::format("{}: mesh fp8 error {} > {} x one rank's {}", what, r.mesh, kMeshFactor, r.e1));
    if (!(r.pair <= kPairFactor * r.e1))
      fail(fmt::format("{}: mesh vs one rank rel-L2 {} > {} x {}", what, r.pair, kPairFactor, r.e1));
  }
  return r;
}

int run(int argc, char** argv, const DistEnv& env) {
  const ParallelConfig pc = parse_mesh_args(argc, argv);
  validate_mesh(pc, env.world_size, 0);
  Mesh mesh = make_mesh(pc, env);
  std::unique_ptr<SeqAttention> attn = make_seq_attention(mesh, AttentionConfig{});
  // Short and odd sequences, and ones of several 128-token scale blocks (also per rank).
  const std::vector<Case> cases = {{1, 7, 1, 5},   {2, 13, 2, 12}, {1, 29, 3, 12},  {2, 64, 2, 8},
                                   {1, 17, 5, 8},  {1, 300, 1, 16}, {2, 264, 2, 12}, {1, 520, 1, 32}};
  const std::vector<GqaCase> gqa = {{1, 29, 8, 2, 12}, {2, 64, 8, 4, 8}, {1, 300, 4, 1, 16}, {1, 264, 12, 3, 12}};
  std::vector<GqaCase> all;
  for (const Case& c : cases) {
    const int64_t H = c.heads_per_u * pc.ulysses_size;
    all.push_back({c.B, c.S, H, H, c.D});
  }
  all.insert(all.end(), gqa.begin(), gqa.end());
  double worst_ratio = 0, worst_pair = 0;
  for (kern::Fp8Qk qk : {kern::Fp8Qk::kE4m3, kern::Fp8Qk::kInt8})
    for (size_t i = 0; i < all.size(); ++i) {
      const Result r = run_case(mesh, *attn, all[i], i + 1, qk);
      worst_ratio = std::max(worst_ratio, r.mesh / r.e1);
      worst_pair = std::max(worst_pair, r.pair);
    }
  Tensor w = Tensor::from_vector({float(worst_ratio), float(worst_pair)}, {2});
  mesh.world->all_reduce_max(w);
  if (env.world_rank == 0)
    std::printf("fp8 attention parity (dp %d, cfg %d, ulysses %d%s, %s %dx%d): %zu cases, worst mesh/one-rank fp8 "
                "error %.3f, worst rel-L2 to one rank %.3g: PASS\n",
                pc.dp_size, pc.cfg_size, pc.ulysses_size, pc.async_ulysses ? " async" : "",
                mesh.shape.ring ? "ring" : "attn2d", mesh.shape.rows, mesh.shape.cols, 2 * all.size(),
                double(w.f32()[0]), double(w.f32()[1]));
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
