// Sequence-parallel self-attention on device tensors over NCCL groups (dist/device_mesh.h):
// Ulysses, Ring and Attention2D, f32 and bf16, K/V with the queries' heads or grouped, against
// single-rank attention_ref on the unpadded host tensors; and the device gather of the DiT's
// proj_out tokens (gather_seq_tokens).
// Usage: mpirun -np 2 device_attention_test [--ulysses N] [--ring N] [--attn2d RxC] [--async-ulysses 1]
// One GPU per rank; with fewer GPUs than ranks the test prints a gtest-style skip line and exits 0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "dist/bootstrap.h"
#include "mesh_test_main.h"
#include "dist/device_mesh.h"
#include "kernels/attention/attention_ref.h"
#include "kernels/common/bf16.h"
#include "parallel/seq_attention_factory.h"
#include "model/dit_step.h"

namespace vgen {
namespace {

// Host f32 [B, Sp, H, D]: the first S tokens random (rounded to bf16 when asked), the pad rows
// large garbage so a leaked pad key shows.
Tensor make_input(int64_t B, int64_t S, int64_t Sp, int64_t H, int64_t D, std::mt19937_64& rng, float amp,
                  bool round) {
  Tensor t = Tensor::empty({B, Sp, H, D}, DType::kF32);
  std::uniform_real_distribution<float> d(-amp, amp), g(-40.0f, 40.0f);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < Sp; ++s)
      for (int64_t x = 0; x < H * D; ++x) {
        float v = s < S ? d(rng) : g(rng);
        if (round) v = kern::round_bf16(v);
        t.f32()[(b * Sp + s) * H * D + x] = v;
      }
  return t;
}

// Tokens [begin, begin + L) of [B, Sp, H, D] as a device tensor of `dt`.
Tensor device_shard(const Tensor& t, int64_t begin, int64_t L, DType dt) {
  const int64_t B = t.dim(0), Sp = t.dim(1), X = t.dim(2) * t.dim(3);
  Tensor s = Tensor::empty({B, L, t.dim(2), t.dim(3)}, DType::kF32);
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(s.f32() + b * L * X, t.f32() + (b * Sp + begin) * X, size_t(L * X) * 4);
  return s.to(dt).to(Device::kCUDA);
}

// q with H heads against k/v with KVH heads (KVH | H: grouped K/V heads, moved with KVH heads and
// expanded at the kernel); the reference reads the groups (attention_grouped_ref).
void run_case(Mesh& dmesh, SeqAttention& attn, int64_t B, int64_t S, int64_t H, int64_t KVH, int64_t D, DType dt,
              uint64_t seed) {
  const int SP = dmesh.shape.seq();
  const bool bf16 = dt == DType::kBF16;
  const SeqLayout layout = SeqLayout::make(S, SP, dmesh.seq_rank());
  std::mt19937_64 rng(seed * 1000003 + uint64_t(dmesh.coord.cfg) * 7919);
  Tensor q = make_input(B, S, layout.padded, H, D, rng, 2.0f, bf16);
  Tensor k = make_input(B, S, layout.padded, KVH, D, rng, 2.0f, bf16);
  Tensor v = make_input(B, S, layout.padded, KVH, D, rng, 1.0f, bf16);
  // Reference on the unpadded rows: the padded tensors with num_valid_kv = S.
  Tensor ref = Tensor::empty({B, layout.padded, H, D}, DType::kF32);
  kern::attention_grouped_ref(q.f32(), k.f32(), v.f32(), ref.f32(), nullptr, B, layout.padded, layout.padded, H, KVH,
                              D, S, float(1.0 / std::sqrt(double(D))));
  const int64_t L = layout.local(), begin = layout.begin();
  Tensor out = attn.forward(device_shard(q, begin, L, dt), device_shard(k, begin, L, dt), device_shard(v, begin, L, dt),
                            layout, AttentionPolicy{});
  const std::string what = fmt::format("{} B={} S={} H={} KVH={} D={} (padded {}, seq rank {}/{})", dtype_name(dt), B,
                                       S, H, KVH, D, layout.padded, layout.seq_rank, SP);
  if (out.is_cpu() || out.shape() != Shape({B, L, H, D})) fail(what + ": output " + out.str());
  Tensor h = out.to(Device::kCPU).to(DType::kF32);
  // bf16: P rounded to bf16 (2⁻⁸ of the value range) and a bf16 output; f32: accumulation order.
  const double tol = bf16 ? 1.2e-2 : 2e-5;
  double err = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < L && begin + s < S; ++s)
      for (int64_t x = 0; x < H * D; ++x) {
        const double got = h.f32()[(b * L + s) * H * D + x];
        const double d = std::fabs(got - ref.f32()[(b * layout.padded + begin + s) * H * D + x]);
        if (!(d <= err)) err = std::isnan(d) ? INFINITY : d;
      }
  if (!(err <= tol)) fail(fmt::format("{}: max-abs {} > {}", what, err, tol));
}

// gather_seq_tokens on device: every rank's [B, L, P] shard → [B, S, P] without the padding.
void check_gather(Mesh& dmesh) {
  Communicator& seq = *dmesh.seq;
  const int64_t B = 2, S = 11, P = 5;
  const SeqLayout layout = SeqLayout::make(S, seq.size(), seq.rank());
  const int64_t L = layout.local();
  Tensor local = Tensor::empty({B, L, P}, DType::kF32);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t p = 0; p < P; ++p)
        local.f32()[(b * L + i) * P + p] = float(b * 1000 + (layout.begin() + i) * 10 + p);
  for (DType dt : {DType::kF32, DType::kBF16}) {
    Tensor all = gather_seq_tokens(seq, local.to(dt).to(Device::kCUDA), layout).to(Device::kCPU).to(DType::kF32);
    if (all.shape() != Shape({B, S, P})) fail("gather_seq_tokens: " + all.str());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t p = 0; p < P; ++p) {
          const float want = kern::round_bf16(float(b * 1000 + s * 10 + p));
          const float got = all.f32()[(b * S + s) * P + p];
          if (got != (dt == DType::kBF16 ? want : float(b * 1000 + s * 10 + p)))
            fail(fmt::format("gather_seq_tokens {}: [{}, {}, {}] = {}", dtype_name(dt), b, s, p, got));
        }
  }
}

int run(int argc, char** argv, const DistEnv& env) {
  const ParallelConfig pc = parse_mesh_args(argc, argv);
  validate_mesh(pc, env.world_size, 0);
  if (cuda_device_count() < env.local_size) {
    if (env.world_rank == 0)
      std::printf("[  SKIPPED ] device_attention_test: %d CUDA device(s) for %d ranks on this host\n",
                  cuda_device_count(), env.local_size);
    return 0;
  }
  Mesh host = make_mesh(pc, env);
  std::shared_ptr<Mesh> dmesh = device_mesh(host);
  std::unique_ptr<SeqAttention> attn = make_seq_attention(*dmesh, AttentionConfig{});
  struct C {
    int64_t B, S, hpu, D;
  };
  const C cases[] = {{1, 7, 1, 12},   {2, 13, 2, 64},   {1, 29, 3, 128}, {2, 30, 1, 40},
                     {1, 3, 1, 128},  {1, 300, 2, 128}, {1, 61, 5, 128}};  // 5 heads: uneven async groups
  // Grouped K/V heads (H, KVH absolute; U = 2): KVH 2 and 4 split over the ranks (async: whole K/V
  // heads per group, or one K/V head's queries over several), 1 and 3 repeated to lcm(KVH, 2).
  struct G {
    int64_t B, S, H, KVH, D;
  };
  const G grouped[] = {{1, 29, 8, 2, 128}, {2, 13, 8, 4, 64}, {1, 61, 4, 1, 128}, {1, 300, 12, 3, 128}};
  const int U = dmesh->shape.ulysses;
  uint64_t seed = 1;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const C& c : cases) run_case(*dmesh, *attn, c.B, c.S, c.hpu * U, c.hpu * U, c.D, dt, seed++);
    for (const G& g : grouped) run_case(*dmesh, *attn, g.B, g.S, g.H, g.KVH, g.D, dt, seed++);
  }
  check_gather(*dmesh);
  sync_compute_stream();
  host.world->barrier();
  if (env.world_rank == 0)
    std::printf("device attention parity OK (ulysses %d%s, cp %d%s, %d ranks)\n", pc.ulysses_size,
                pc.async_ulysses ? " async" : "", pc.cp_size(), pc.ring_size > 1 ? " ring" : "", env.world_size);
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
