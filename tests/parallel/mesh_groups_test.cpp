// make_mesh under mpirun: for every parallel config that fits the world size, each group's
// members (gathered world ranks) and group ranks must follow the mesh rules (group rank ==
// coordinate), plus hand-written expectations for the 4-rank cfg 2 × ulysses 2 and attn2d 2×2
// meshes.
#include <algorithm>
#include <functional>

#include <fmt/ranges.h>

#include "dist/bootstrap.h"
#include "mpi_test_util.h"

using namespace vgen;

namespace {

using Coord = MeshCoord;

// World ranks of `g`'s members in group-rank order, gathered through the group itself.
std::vector<int> members_of(Communicator& g, int world_rank) {
  Tensor mine = Tensor::empty({1}, DType::kI64);
  mine.data<int64_t>()[0] = world_rank;
  Tensor all = Tensor::zeros({g.size()}, DType::kI64);
  g.all_gather(mine, all);
  return std::vector<int>(all.data<int64_t>(), all.data<int64_t>() + g.size());
}

// Expected members: ranks in the same group as `me` (same(me, other)), ordered by key.
std::vector<int> expected_members(const MeshShape& s, const Coord& me, const std::function<bool(const Coord&)>& same,
                                  const std::function<int(const Coord&)>& key) {
  std::vector<std::pair<int, int>> v;
  for (int rank = 0; rank < s.world(); ++rank) {
    Coord o = mesh_coord_of(s, rank);
    if (same(o)) v.push_back({key(o), rank});
  }
  std::sort(v.begin(), v.end());
  std::vector<int> out;
  for (int i = 0; i < int(v.size()); ++i) {
    PCHECK(v[i].first == i, "group keys are not 0..n-1");
    out.push_back(v[i].second);
  }
  (void)me;
  return out;
}

void check_group(const std::shared_ptr<Communicator>& g, const std::vector<int>& want, int world_rank,
                 int want_rank, const char* name) {
  PCHECK(g != nullptr, "group {} missing", name);
  PCHECK(g->size() == int(want.size()), "group {}: size {} want {}", name, g->size(), want.size());
  PCHECK(g->rank() == want_rank, "group {}: rank {} want {}", name, g->rank(), want_rank);
  std::vector<int> got = members_of(*g, world_rank);
  PCHECK(got == want, "group {}: members {} want {}", name, fmt::join(got, ","), fmt::join(want, ","));
}

void check_mesh(const ParallelConfig& pc, const DistEnv& env) {
  Mesh m = make_mesh(pc, env);
  const MeshShape& s = m.shape;
  const Coord c = m.coord;
  PCHECK(mesh_rank_of(s, c) == env.world_rank, "coordinate of rank {}", env.world_rank);
  const int seq_rank = m.seq_rank();
  auto eq = [](int a, int b) { return a == b; };
  std::vector<int> all(s.world());
  for (int i = 0; i < s.world(); ++i) all[i] = i;
  check_group(m.world, all, env.world_rank, env.world_rank, "world");
  check_group(m.replica, expected_members(s, c, [&](const Coord& o) { return eq(o.dp, c.dp); },
                                          [&](const Coord& o) { return mesh_rank_of(s, o) % s.replica_size(); }),
              env.world_rank, env.world_rank % s.replica_size(), "replica");
  check_group(m.dp, expected_members(s, c, [&](const Coord& o) {
                return o.cfg == c.cfg && o.row == c.row && o.col == c.col && o.u == c.u;
              }, [](const Coord& o) { return o.dp; }), env.world_rank, c.dp, "dp");
  check_group(m.cfg, expected_members(s, c, [&](const Coord& o) {
                return o.dp == c.dp && o.row == c.row && o.col == c.col && o.u == c.u;
              }, [](const Coord& o) { return o.cfg; }), env.world_rank, c.cfg, "cfg");
  check_group(m.cp, expected_members(s, c, [&](const Coord& o) { return o.dp == c.dp && o.cfg == c.cfg && o.u == c.u; },
                                     [&](const Coord& o) { return cp_rank_of(s, o); }),
              env.world_rank, m.cp_rank(), "cp");
  check_group(m.row, expected_members(s, c, [&](const Coord& o) {
                return o.dp == c.dp && o.cfg == c.cfg && o.row == c.row && o.u == c.u;
              }, [](const Coord& o) { return o.col; }), env.world_rank, c.col, "row");
  check_group(m.col, expected_members(s, c, [&](const Coord& o) {
                return o.dp == c.dp && o.cfg == c.cfg && o.col == c.col && o.u == c.u;
              }, [](const Coord& o) { return o.row; }), env.world_rank, c.row, "col");
  check_group(m.ulysses, expected_members(s, c, [&](const Coord& o) {
                return o.dp == c.dp && o.cfg == c.cfg && o.row == c.row && o.col == c.col;
              }, [](const Coord& o) { return o.u; }), env.world_rank, c.u, "ulysses");
  check_group(m.seq, expected_members(s, c, [&](const Coord& o) { return o.dp == c.dp && o.cfg == c.cfg; },
                                      [&](const Coord& o) { return seq_rank_of(s, o); }),
              env.world_rank, seq_rank, "seq");
  const bool vae_member = c.cfg == 0 && seq_rank < s.vae;
  PCHECK(m.in_vae_group() == vae_member, "vae membership of rank {}", env.world_rank);
  if (vae_member) {
    check_group(m.vae, expected_members(s, c, [&](const Coord& o) {
                  return o.dp == c.dp && o.cfg == 0 && seq_rank_of(s, o) < s.vae;
                }, [&](const Coord& o) { return seq_rank_of(s, o); }), env.world_rank, seq_rank, "vae");
  }
  PCHECK(m.is_replica_leader() == (c.cfg == 0 && seq_rank == 0), "replica leader");
  // Failure agreement per group: a failure at u = U-1 of cfg 0 reaches exactly the cfg-0 ranks.
  const bool failed = any_rank_failed(*m.ulysses, c.cfg == 0 && c.u == s.ulysses - 1);
  PCHECK(failed == (c.cfg == 0), "any_rank_failed on the ulysses group");
}

ParallelConfig make_pc(int dp, int cfg, int u, int ring, int rows, int cols, int vae) {
  ParallelConfig pc;
  pc.dp_size = dp;
  pc.cfg_size = cfg;
  pc.ulysses_size = u;
  pc.ring_size = ring;
  pc.attn2d_size = {rows, cols};
  pc.parallel_vae_size = vae;
  return pc;
}

// Every config whose world size is p (ring and attn2d tiles, every VAE size that fits).
std::vector<ParallelConfig> configs_for(int p) {
  std::vector<ParallelConfig> out;
  for (int dp = 1; dp <= p; ++dp)
    for (int cfg = 1; cfg <= 2; ++cfg)
      for (int u = 1; u <= p; ++u)
        for (int rows = 1; rows <= p; ++rows)
          for (int cols = 1; cols <= p; ++cols)
            for (int ring : {1, 2, 3, 4}) {
              if (ring > 1 && rows * cols > 1) continue;
              const int cp = ring > 1 ? ring : rows * cols;
              if (dp * cfg * u * cp != p) continue;
              for (int vae = 1; vae <= u * cp; ++vae) out.push_back(make_pc(dp, cfg, u, ring, rows, cols, vae));
            }
  return out;
}

void check_hand_written(const DistEnv& env) {
  const int r = env.world_rank;
  // cfg 2 × ulysses 2: rank = cfg·2 + u.
  Mesh a = make_mesh(make_pc(1, 2, 2, 1, 1, 1, 2), env);
  PCHECK(a.coord.cfg == r / 2 && a.coord.u == r % 2, "cfg2×U2 coordinates of {}", r);
  PCHECK(members_of(*a.ulysses, r) == (r < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}), "U group");
  PCHECK(members_of(*a.cfg, r) == (r % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3}), "cfg group");
  PCHECK(members_of(*a.seq, r) == (r < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}), "seq group");
  PCHECK(a.cfg->rank() == r / 2 && a.ulysses->rank() == r % 2, "group ranks");
  PCHECK((a.vae != nullptr) == (r < 2), "vae on ranks 0, 1");
  if (a.vae) PCHECK(members_of(*a.vae, r) == (std::vector<int>{0, 1}) && a.vae->rank() == r, "vae group");
  PCHECK(a.cp->size() == 1 && a.row->size() == 1 && a.col->size() == 1 && a.dp->size() == 1, "size-1 groups");
  // attn2d 2×2: rank = row·2 + col.
  Mesh b = make_mesh(make_pc(1, 1, 1, 1, 2, 2, 1), env);
  PCHECK(b.coord.row == r / 2 && b.coord.col == r % 2 && b.cp_rank() == r, "attn2d coordinates of {}", r);
  PCHECK(members_of(*b.row, r) == (r < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}), "row group");
  PCHECK(members_of(*b.col, r) == (r % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3}), "col group");
  PCHECK(b.row->rank() == r % 2 && b.col->rank() == r / 2, "row/col group ranks");
  PCHECK(members_of(*b.cp, r) == (std::vector<int>{0, 1, 2, 3}) && b.cp->rank() == r, "cp group");
  PCHECK((b.vae != nullptr) == (r == 0), "vae only on rank 0");
}

}  // namespace

int main(int argc, char** argv) {
  DistEnv env = dist_init(&argc, &argv);
  const auto configs = configs_for(env.world_size);
  ptest::run_test(fmt::format("make_mesh groups for {} configs of {} ranks", configs.size(), env.world_size).c_str(),
                  [&] {
                    for (const auto& pc : configs) check_mesh(pc, env);
                  });
  if (env.world_size == 4) ptest::run_test("hand-written 4-rank meshes", [&] { check_hand_written(env); });
  ptest::run_test("world mismatch is a recipe error", [&] {
    PCHECK_THROWS(make_mesh(make_pc(1, 1, env.world_size + 1, 1, 1, 1, 1), env), ExitCode::kRecipe);
  });
  dist_finalize();
  return 0;
}
