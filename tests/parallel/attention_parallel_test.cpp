// MPI parity test of the sequence-parallel self-attention (Ulysses, Ring, Attention2D and their
// compositions) against single-rank attention_ref on the unpadded tensors, with K/V of the queries'
// heads and grouped (KVH < H: the oracle repeats the K/V heads).
// Usage: mpirun -np N attention_parallel_test [--dp N] [--cfg N] [--ulysses N] [--ring N] [--attn2d RxC]
//        [--async-ulysses 1]   (head-group pipelined Ulysses)
// Every rank checks its own shard and the gathered sequence; any failure aborts the whole job.
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dist/bootstrap.h"
#include "mesh_test_main.h"
#include "seq_test_util.h"
#include "kernels/attention/attention_ref.h"
#include "parallel/seq_attention_factory.h"
#include "parallel/seq_shuffle.h"

namespace vgen {
namespace {

constexpr double kTol = 1e-5;

struct Case {
  int64_t B, S, heads_per_u, D;
};

// Grouped K/V heads (KVH < H): absolute head counts that every registered Ulysses degree (1, 2, 4)
// divides. U = 2: KVH 2, 4, 20 split (async: whole K/V heads per group, or a K/V head's queries over
// several groups), KVH 1, 3 repeated to lcm(KVH, U); U = 4: KVH 2, 1, 3, 6 repeated, 4, 20 split.
struct GqaCase {
  int64_t B, S, H, KVH, D;
};

using test::random_tensor;
using test::shard_seq;
constexpr float kPadScale = 40.0f;  // pad rows of the padded sequence: ±kPadScale

// Max |out - ref| over the real tokens [begin, begin + L) ∩ [0, S); out covers [begin, begin + L).
double max_err(const Tensor& out, const Tensor& ref, int64_t begin) {
  const int64_t B = ref.dim(0), S = ref.dim(1), X = ref.dim(2) * ref.dim(3), L = out.dim(1);
  double err = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < L && begin + s < S; ++s)
      for (int64_t x = 0; x < X; ++x) {
        double d = std::fabs(double(out.f32()[(b * L + s) * X + x]) - ref.f32()[(b * S + begin + s) * X + x]);
        if (!(d <= err)) err = std::isnan(d) ? INFINITY : d;
      }
  return err;
}

// q [B, S, H, D] against k/v [B, S, KVH, D] on the mesh; the oracle repeats the K/V heads on one rank.
double run_case(Mesh& mesh, SeqAttention& attn, const GqaCase& c, uint64_t seed) {
  const int SP = mesh.shape.seq();
  const int64_t B = c.B, S = c.S, H = c.H, KVH = c.KVH, D = c.D;
  // Each cfg / dp group draws its own inputs: the groups must not interfere.
  std::mt19937_64 rng(seed * 1000003 + uint64_t(mesh.coord.cfg) * 7919 + uint64_t(mesh.coord.dp) * 104729);
  Tensor q = random_tensor({B, S, H, D}, rng, 2.0f);  // [B, S, H, D]
  Tensor k = random_tensor({B, S, KVH, D}, rng, 2.0f);  // [B, S, KVH, D]
  Tensor v = random_tensor({B, S, KVH, D}, rng, 1.0f);
  const Tensor kr = KVH == H ? k : test::repeat_heads(k, H), vr = KVH == H ? v : test::repeat_heads(v, H);
  Tensor ref = Tensor::empty({B, S, H, D}, DType::kF32);
  kern::attention_ref(q.f32(), kr.f32(), vr.f32(), ref.f32(), nullptr, B, S, S, H, D, S, float(1.0 / std::sqrt(D)));

  const SeqLayout layout = SeqLayout::make(S, SP, mesh.seq_rank());
  const int64_t L = layout.local();
  Tensor qp = test::pad_seq(q, layout.padded, rng, kPadScale), kp = test::pad_seq(k, layout.padded, rng, kPadScale),
         vp = test::pad_seq(v, layout.padded, rng, kPadScale);
  Tensor out = attn.forward(shard_seq(qp, layout.begin(), L), shard_seq(kp, layout.begin(), L),
                            shard_seq(vp, layout.begin(), L), layout, AttentionPolicy{});
  const std::string what = fmt::format("B={} S={} H={} KVH={} D={} (padded {}, seq rank {}/{})", B, S, H, KVH, D,
                                       layout.padded, layout.seq_rank, SP);
  if (out.shape() != Shape({B, L, H, D})) fail(what + ": output " + out.str());
  const double local = max_err(out, ref, layout.begin());
  if (!(local <= kTol)) fail(fmt::format("{}: own shard max-abs {} > {}", what, local, kTol));

  // Gather the sequence over the seq group (group rank = seq_rank) and compare all of it.
  Tensor recv = Tensor::empty({SP, B, L, H, D}, DType::kF32);
  mesh.seq->all_gather(out, recv);
  Tensor full = Tensor::empty({B, layout.padded, H, D}, DType::kF32);
  gathered_to_seq(recv, SP, 1, 0, full);
  const double err = max_err(full, ref, 0);
  if (!(err <= kTol)) fail(fmt::format("{}: gathered max-abs {} > {}", what, err, kTol));
  return err;
}

// A head count the Ulysses degree does not divide must fail with kRecipe on every rank, before
// any collective (so no rank hangs).
void check_head_error(Mesh& mesh, SeqAttention& attn) {
  const int U = mesh.shape.ulysses;
  if (U == 1) return;
  const SeqLayout layout = SeqLayout::make(7, mesh.shape.seq(), mesh.seq_rank());
  Tensor x = Tensor::zeros({1, layout.local(), U + 1, 4}, DType::kF32);
  try {
    attn.forward(x, x, x, layout, AttentionPolicy{});
  } catch (const Error& e) {
    if (e.code() != ExitCode::kRecipe || e.message().find("parallel_config.ulysses_size") == std::string::npos)
      fail("head-count error has the wrong code or text: " + e.message());
    return;
  }
  fail(fmt::format("ulysses_size {} with {} heads did not throw", U, U + 1));
}

// K/V heads that do not divide the query heads fail with kModel on every rank, before any collective.
void check_kv_head_error(Mesh& mesh, SeqAttention& attn) {
  const int64_t H = 4 * mesh.shape.ulysses;
  const SeqLayout layout = SeqLayout::make(7, mesh.shape.seq(), mesh.seq_rank());
  const Tensor q = Tensor::zeros({1, layout.local(), H, 4}, DType::kF32);
  const Tensor kv = Tensor::zeros({1, layout.local(), H - 1, 4}, DType::kF32);  // H - 1 does not divide H
  try {
    attn.forward(q, kv, kv, layout, AttentionPolicy{});
  } catch (const Error& e) {
    if (e.code() != ExitCode::kModel || e.message().find("K/V heads do not divide") == std::string::npos)
      fail("K/V head error has the wrong code or text: " + e.message());
    return;
  }
  fail(fmt::format("{} K/V heads for {} query heads did not throw", H - 1, H));
}

int run(int argc, char** argv, const DistEnv& env) {
  const ParallelConfig pc = parse_mesh_args(argc, argv);
  validate_mesh(pc, env.world_size, 0);
  Mesh mesh = make_mesh(pc, env);
  std::unique_ptr<SeqAttention> attn = make_seq_attention(mesh, AttentionConfig{});

  // heads_per_u 1..5: with async Ulysses 1, 2, 3 and 4 head groups (5 heads: uneven groups 1,1,1,2).
  const std::vector<Case> cases = {{1, 7, 1, 5}, {2, 13, 2, 12}, {1, 29, 3, 12}, {2, 30, 1, 5},  {1, 2, 2, 5},
                                   {1, 3, 1, 12}, {2, 64, 2, 8},  {1, 17, 5, 8},  {2, 11, 4, 12}};
  const std::vector<GqaCase> gqa = {{1, 7, 8, 2, 5},  {2, 13, 8, 4, 12}, {1, 29, 4, 1, 8}, {2, 11, 12, 3, 8},
                                    {1, 17, 12, 6, 4}, {1, 30, 16, 4, 4}, {1, 9, 40, 20, 4}};
  const int U = mesh.shape.ulysses;
  double worst = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const int64_t H = c.heads_per_u * U;
    worst = std::max(worst, run_case(mesh, *attn, GqaCase{c.B, c.S, H, H, c.D}, i + 1));
  }
  for (size_t i = 0; i < gqa.size(); ++i) worst = std::max(worst, run_case(mesh, *attn, gqa[i], 100 + i));
  check_head_error(mesh, *attn);
  check_kv_head_error(mesh, *attn);

  Tensor w = Tensor::from_vector({float(worst)}, {1});
  mesh.world->all_reduce_max(w);
  if (env.world_rank == 0)
    std::printf("attention parity (dp %d, cfg %d, ulysses %d%s, %s %dx%d): %zu cases, worst max-abs %.3g <= %.0e: PASS\n",
                pc.dp_size, pc.cfg_size, pc.ulysses_size, pc.async_ulysses ? " async" : "",
                mesh.shape.ring ? "ring" : "attn2d", mesh.shape.rows,
                mesh.shape.cols, cases.size() + gqa.size(), double(w.f32()[0]), kTol);
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
