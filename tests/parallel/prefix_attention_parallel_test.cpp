// MPI parity test of the sequence-parallel attention with a prefix K/V (parallel/prefix_attention.h):
// sharded queries over [prefix | sequence], the prefix whole on every rank, against single-rank
// attention_ref over the concatenation (unpadded), K/V and prefix with the queries' heads or grouped
// (KVH < H: the oracle repeats them); an attention without a prefix path refused with kRecipe.
// Usage: mpirun -np N prefix_attention_parallel_test [--cfg N] [--ulysses N] [--ring N] [--attn2d RxC]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <string>

#include "dist/bootstrap.h"
#include "kernels/attention/attention_ref.h"
#include "mesh_test_main.h"
#include "parallel/prefix_attention.h"
#include "parallel/seq_attention_factory.h"
#include "parallel/seq_shuffle.h"
#include "seq_test_util.h"

namespace vgen {
namespace {

constexpr double kTol = 1e-5;
constexpr float kPadScale = 40.0f;  // pad rows: large garbage, so a leaking pad key shows

struct Case {
  int64_t B, S, P, heads_per_u, D;
};

// Grouped K/V heads (sequence and prefix KVH < H): absolute head counts every registered Ulysses
// degree (1, 2, 4) divides; U = 2 splits KVH 2 and 4 and repeats 1 and 3, U = 4 repeats 2, 1 and 3.
struct GqaCase {
  int64_t B, S, P, H, KVH, D;
};

// [B, P, H, D] and [B, S, H, D] → [B, P + S, H, D].
Tensor concat_seq(const Tensor& a, const Tensor& b) {
  const int64_t B = a.dim(0), Pa = a.dim(1), Sb = b.dim(1), X = a.dim(2) * a.dim(3);
  Tensor out = Tensor::empty({B, Pa + Sb, a.dim(2), a.dim(3)}, DType::kF32);
  for (int64_t i = 0; i < B; ++i) {
    std::memcpy(out.f32() + i * (Pa + Sb) * X, a.f32() + i * Pa * X, size_t(Pa * X) * 4);
    std::memcpy(out.f32() + (i * (Pa + Sb) + Pa) * X, b.f32() + i * Sb * X, size_t(Sb * X) * 4);
  }
  return out;
}

double max_err(const Tensor& out, const Tensor& ref, int64_t begin) {
  const int64_t B = ref.dim(0), S = ref.dim(1), X = ref.dim(2) * ref.dim(3), L = out.dim(1);
  double err = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < L && begin + s < S; ++s)
      for (int64_t x = 0; x < X; ++x) {
        const double d = std::fabs(double(out.f32()[(b * L + s) * X + x]) - ref.f32()[(b * S + begin + s) * X + x]);
        if (!(d <= err)) err = std::isnan(d) ? INFINITY : d;
      }
  return err;
}

// q [B, S, H, D] over [prefix | sequence] with k/v and the prefix [B, ·, KVH, D]; the oracle repeats
// the K/V heads on one rank.
double run_case(Mesh& mesh, SeqAttention& attn, const GqaCase& c, uint64_t seed) {
  const int SP = mesh.shape.seq();
  const int64_t B = c.B, S = c.S, P = c.P, H = c.H, KVH = c.KVH, D = c.D;
  std::mt19937_64 rng(seed * 1000003 + uint64_t(mesh.coord.cfg) * 7919);
  Tensor q = test::random_tensor({B, S, H, D}, rng, 2.0f);    // [B, S, H, D]
  Tensor k = test::random_tensor({B, S, KVH, D}, rng, 2.0f);  // [B, S, KVH, D]
  Tensor v = test::random_tensor({B, S, KVH, D}, rng, 1.0f);
  const PrefixKv prefix{test::random_tensor({B, P, KVH, D}, rng, 2.0f),
                        test::random_tensor({B, P, KVH, D}, rng, 1.0f)};  // [B, P, KVH, D]
  auto heads = [&](const Tensor& t) { return KVH == H ? t : test::repeat_heads(t, H); };
  const Tensor kc = heads(concat_seq(prefix.k, k)), vc = heads(concat_seq(prefix.v, v));  // [B, P + S, H, D]
  Tensor ref = Tensor::empty({B, S, H, D}, DType::kF32);
  kern::attention_ref(q.f32(), kc.f32(), vc.f32(), ref.f32(), nullptr, B, S, P + S, H, D, P + S,
                      float(1.0 / std::sqrt(D)));

  const SeqLayout layout = SeqLayout::make(S, SP, mesh.seq_rank());
  const int64_t L = layout.local();
  Tensor qp = test::pad_seq(q, layout.padded, rng, kPadScale), kp = test::pad_seq(k, layout.padded, rng, kPadScale),
         vp = test::pad_seq(v, layout.padded, rng, kPadScale);
  Tensor out = seq_attention_with_prefix(attn, test::shard_seq(qp, layout.begin(), L),
                                         test::shard_seq(kp, layout.begin(), L), test::shard_seq(vp, layout.begin(), L),
                                         prefix, layout, AttentionPolicy{});
  const std::string what = fmt::format("B={} S={} P={} H={} KVH={} D={} (padded {}, seq rank {}/{})", B, S, P, H,
                                       KVH, D, layout.padded, layout.seq_rank, SP);
  if (out.shape() != Shape({B, L, H, D})) fail(what + ": output " + out.str());
  Tensor recv = Tensor::empty({SP, B, L, H, D}, DType::kF32);
  mesh.seq->all_gather(out, recv);
  Tensor full = Tensor::empty({B, layout.padded, H, D}, DType::kF32);
  gathered_to_seq(recv, SP, 1, 0, full);
  const double err = max_err(full, ref, 0);
  if (!(err <= kTol)) fail(fmt::format("{}: gathered max-abs {} > {}", what, err, kTol));
  return err;
}

// A SeqAttention without a prefix path.
class PlainAttention : public SeqAttention {
 public:
  Tensor forward(const Tensor& q, const Tensor&, const Tensor&, const SeqLayout&, const AttentionPolicy&) override {
    return q;
  }
};

// An attention without a prefix path is refused with kRecipe naming the ones that have it.
void check_refusal() {
  PlainAttention plain;
  const SeqLayout layout = SeqLayout::make(5, 1, 0);
  const Tensor x = Tensor::zeros({1, 5, 2, 4}, DType::kF32), p = Tensor::zeros({1, 3, 2, 4}, DType::kF32);
  try {
    seq_attention_with_prefix(plain, x, x, x, PrefixKv{p, p}, layout, AttentionPolicy{});
  } catch (const Error& e) {
    if (e.code() != ExitCode::kRecipe || e.message().find("Attention2D") == std::string::npos)
      fail("the refusal has the wrong code or text: " + e.message());
    return;
  }
  fail("an attention without a prefix path did not throw");
}

int run(int argc, char** argv, const DistEnv& env) {
  const ParallelConfig pc = parse_mesh_args(argc, argv);
  validate_mesh(pc, env.world_size, 0);
  Mesh mesh = make_mesh(pc, env);
  std::unique_ptr<SeqAttention> attn = make_seq_attention(mesh, AttentionConfig{});
  check_refusal();
  // Odd lengths (padding), a one-token prefix, a prefix longer than the sequence.
  const Case cases[] = {{1, 7, 3, 1, 5}, {2, 13, 1, 2, 12}, {1, 29, 40, 3, 12}, {2, 2, 5, 2, 8}, {1, 17, 9, 4, 8}};
  const GqaCase gqa[] = {{1, 7, 3, 8, 2, 5}, {2, 13, 1, 8, 4, 12}, {1, 29, 40, 4, 1, 8}, {1, 11, 6, 12, 3, 8}};
  const int U = mesh.shape.ulysses;
  double worst = 0;
  uint64_t seed = 1;
  for (const Case& c : cases) {
    const int64_t H = c.heads_per_u * U;
    worst = std::max(worst, run_case(mesh, *attn, GqaCase{c.B, c.S, c.P, H, H, c.D}, seed++));
  }
  for (const GqaCase& c : gqa) worst = std::max(worst, run_case(mesh, *attn, c, seed++));
  Tensor w = Tensor::from_vector({float(worst)}, {1});
  mesh.world->all_reduce_max(w);
  if (env.world_rank == 0)
    std::printf("prefix attention parity (cfg %d, ulysses %d, %s %dx%d): %zu cases, worst max-abs %.3g <= %.0e: PASS\n",
                pc.cfg_size, pc.ulysses_size, mesh.shape.ring ? "ring" : "attn2d", mesh.shape.rows, mesh.shape.cols,
                std::size(cases) + std::size(gqa), double(w.f32()[0]), kTol);
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
