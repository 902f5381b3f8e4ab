// Mesh algebra (rank <-> coordinates, group membership rules) and validate_mesh errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "core/error.h"
#include "dist/bootstrap.h"
#include "dist/mesh.h"

using namespace vgen;

namespace {

ParallelConfig make_pc(int dp, int cfg, int ulysses, int ring, int rows, int cols, int vae = 1) {
  ParallelConfig pc;
  pc.dp_size = dp;
  pc.cfg_size = cfg;
  pc.ulysses_size = ulysses;
  pc.ring_size = ring;
  pc.attn2d_size = {rows, cols};
  pc.parallel_vae_size = vae;
  return pc;
}

std::vector<ParallelConfig> many_configs() {
  std::vector<ParallelConfig> out;
  for (int dp : {1, 2, 3})
    for (int cfg : {1, 2})
      for (int u : {1, 2, 3, 4}) {
        for (int rows : {1, 2, 3})
          for (int cols : {1, 2, 3}) out.push_back(make_pc(dp, cfg, u, 1, rows, cols));
        for (int ring : {2, 3, 5}) out.push_back(make_pc(dp, cfg, u, ring, 1, 1));
      }
  return out;
}

// Expected error: code kRecipe and the message contains `needle`.
void expect_recipe_error(const ParallelConfig& pc, int world, int heads, const std::string& needle) {
  try {
    validate_mesh(pc, world, heads);
    FAIL() << "no error, expected one containing: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe) << e.message();
    EXPECT_NE(e.message().find(needle), std::string::npos) << "message: " << e.message() << "\nexpected: " << needle;
  }
}

}  // namespace

TEST(Mesh, ShapeFromConfig) {
  MeshShape a = MeshShape::from(make_pc(2, 2, 4, 1, 3, 3, 2));
  EXPECT_EQ(a.rows, 3);
  EXPECT_EQ(a.cols, 3);
  EXPECT_FALSE(a.ring);
  EXPECT_EQ(a.cp(), 9);
  EXPECT_EQ(a.seq(), 36);
  EXPECT_EQ(a.replica_size(), 72);
  EXPECT_EQ(a.world(), 144);
  EXPECT_EQ(a.vae, 2);
  MeshShape r = MeshShape::from(make_pc(1, 2, 2, 4, 1, 1));
  EXPECT_TRUE(r.ring);
  EXPECT_EQ(r.rows, 1);
  EXPECT_EQ(r.cols, 4);
  EXPECT_EQ(r.cp(), 4);
  EXPECT_EQ(r.world(), 16);
}

TEST(Mesh, RoundTripManyShapes) {
  for (const auto& pc : many_configs()) {
    MeshShape m = MeshShape::from(pc);
    ASSERT_EQ(m.world(), pc.world_size());
    std::set<std::tuple<int, int, int, int, int>> seen;
    for (int rank = 0; rank < m.world(); ++rank) {
      MeshCoord c = mesh_coord_of(m, rank);
      ASSERT_TRUE(c.dp >= 0 && c.dp < m.dp && c.cfg >= 0 && c.cfg < m.cfg && c.row >= 0 && c.row < m.rows &&
                  c.col >= 0 && c.col < m.cols && c.u >= 0 && c.u < m.ulysses);
      ASSERT_EQ(mesh_rank_of(m, c), rank);
      // The fixed linearisation, written out independently.
      ASSERT_EQ(rank, (((c.dp * m.cfg + c.cfg) * m.rows + c.row) * m.cols + c.col) * m.ulysses + c.u);
      seen.insert({c.dp, c.cfg, c.row, c.col, c.u});
      // Within a replica, rank = cfg·seq + seq_rank: seq shards are contiguous, cfg outermost.
      ASSERT_EQ(rank % m.replica_size(), c.cfg * m.seq() + seq_rank_of(m, c));
      ASSERT_EQ(rank / m.replica_size(), c.dp);
      if (m.ring) {
        ASSERT_EQ(cp_rank_of(m, c), c.col);
      }
    }
    EXPECT_EQ(int(seen.size()), m.world());
  }
}

TEST(Mesh, Nvl72Mesh) {
  // cfg 2 × Ulysses 4 × Attention2D 3×3 = 72 ranks.
  ParallelConfig pc = make_pc(1, 2, 4, 1, 3, 3);
  validate_mesh(pc, 72, 40);
  MeshShape m = MeshShape::from(pc);
  ASSERT_EQ(m.world(), 72);
  std::set<std::tuple<int, int, int, int, int>> seen;
  std::set<int> seq_ranks[2];
  for (int rank = 0; rank < 72; ++rank) {
    MeshCoord c = mesh_coord_of(m, rank);
    seen.insert({c.dp, c.cfg, c.row, c.col, c.u});
    seq_ranks[c.cfg].insert(seq_rank_of(m, c));
    EXPECT_EQ(seq_rank_of(m, c), (c.row * 3 + c.col) * 4 + c.u);
  }
  EXPECT_EQ(seen.size(), 72u);
  for (auto& s : seq_ranks) {
    EXPECT_EQ(s.size(), 36u);
    EXPECT_EQ(*s.begin(), 0);
    EXPECT_EQ(*s.rbegin(), 35);
  }
  // Rank 47: cfg 1 (47 / 36), within cfg: 11 = (row 0, col 2, u 3).
  MeshCoord c = mesh_coord_of(m, 47);
  EXPECT_EQ(c.cfg, 1);
  EXPECT_EQ(c.row, 0);
  EXPECT_EQ(c.col, 2);
  EXPECT_EQ(c.u, 3);
}

TEST(Mesh, GroupMembershipRules) {
  for (const auto& pc : many_configs()) {
    MeshShape m = MeshShape::from(pc);
    for (int rank = 0; rank < m.world(); ++rank) {
      MeshCoord c = mesh_coord_of(m, rank);
      // Ulysses group: consecutive ranks, group rank = u.
      for (int u = 0; u < m.ulysses; ++u) {
        MeshCoord o = c;
        o.u = u;
        ASSERT_EQ(mesh_rank_of(m, o), rank - c.u + u);
      }
      // Row group (varying col) = CP shards r·Co .. r·Co+Co-1, contiguous in cp_rank.
      for (int col = 0; col < m.cols; ++col) {
        MeshCoord o = c;
        o.col = col;
        ASSERT_EQ(cp_rank_of(m, o), c.row * m.cols + col);
        ASSERT_EQ(mesh_rank_of(m, o), rank + (col - c.col) * m.ulysses);
      }
      // Column group (varying row): stride Co·U in world ranks.
      for (int row = 0; row < m.rows; ++row) {
        MeshCoord o = c;
        o.row = row;
        ASSERT_EQ(mesh_rank_of(m, o), rank + (row - c.row) * m.cols * m.ulysses);
      }
      // cfg partner: one replica-half apart.
      for (int cfg = 0; cfg < m.cfg; ++cfg) {
        MeshCoord o = c;
        o.cfg = cfg;
        ASSERT_EQ(mesh_rank_of(m, o), rank + (cfg - c.cfg) * m.seq());
      }
    }
  }
}

TEST(Mesh, ValidConfigsPass) {
  EXPECT_NO_THROW(validate_mesh(make_pc(1, 1, 1, 1, 1, 1), 1, 40));
  EXPECT_NO_THROW(validate_mesh(make_pc(1, 2, 4, 1, 3, 3, 36), 72, 40));
  EXPECT_NO_THROW(validate_mesh(make_pc(2, 2, 2, 1, 1, 1, 2), 8, 12));
  EXPECT_NO_THROW(validate_mesh(make_pc(1, 1, 2, 3, 1, 1), 6, 0));  // heads unknown
  EXPECT_NO_THROW(validate_mesh(make_pc(1, 1, 1, 1, 2, 1), 2, 5));
}

TEST(Mesh, WorldMismatch) {
  expect_recipe_error(make_pc(1, 2, 4, 1, 3, 3), 71, 40,
                      "parallel_config: world size 71 does not equal dp 1 × cfg 2 × cp 9 × ulysses 4 = 72");
  expect_recipe_error(make_pc(2, 1, 1, 4, 1, 1), 4, 40, "world size 4 does not equal dp 2 × cfg 1 × cp 4");
}

TEST(Mesh, UlyssesMustDivideHeads) {
  expect_recipe_error(make_pc(1, 1, 3, 1, 1, 1), 3, 40, "parallel_config.ulysses_size 3 does not divide");
  expect_recipe_error(make_pc(1, 1, 4, 1, 1, 1), 4, 14, "14 attention heads");
  // The message names a mesh of the same sequence degree that fits: Wan2.1-1.3B's 12 heads on 8.
  expect_recipe_error(make_pc(1, 1, 8, 1, 1, 1), 8, 12,
                      "for the same sequence degree 8 use ulysses_size 4 with ring_size 2 or attn2d_size [1, 2]");
  expect_recipe_error(make_pc(1, 2, 8, 1, 1, 1), 16, 12, "sequence degree 8 use ulysses_size 4 with ring_size 2");
  expect_recipe_error(make_pc(1, 1, 8, 1, 2, 1), 16, 12, "sequence degree 16 use ulysses_size 4 with ring_size 4");
  expect_recipe_error(make_pc(1, 1, 3, 1, 1, 1), 3, 40, "use ulysses_size 1 with ring_size 3 or attn2d_size [1, 3]");
  // ... and that suggestion passes.
  EXPECT_NO_THROW(validate_mesh(make_pc(1, 1, 4, 2, 1, 1), 8, 12));
  EXPECT_NO_THROW(validate_mesh(make_pc(1, 1, 4, 1, 1, 2), 8, 12));
}

TEST(Mesh, RingExclusiveWithAttn2d) {
  expect_recipe_error(make_pc(1, 1, 1, 2, 2, 1), 4, 40, "ring_size 2 and attn2d_size [2, 1]");
}

TEST(Mesh, SizesAtLeastOne) {
  expect_recipe_error(make_pc(0, 1, 1, 1, 1, 1), 1, 0, "parallel_config.dp_size");
  expect_recipe_error(make_pc(1, 0, 1, 1, 1, 1), 1, 0, "parallel_config.cfg_size");
  expect_recipe_error(make_pc(1, 1, 0, 1, 1, 1), 1, 0, "parallel_config.ulysses_size");
  expect_recipe_error(make_pc(1, 1, 1, 0, 1, 1), 1, 0, "parallel_config.ring_size");
  expect_recipe_error(make_pc(1, 1, 1, 1, 0, 1), 1, 0, "parallel_config.attn2d_size");
  expect_recipe_error(make_pc(1, 1, 1, 1, 1, -1), 1, 0, "parallel_config.attn2d_size");
  expect_recipe_error(make_pc(1, 1, 1, 1, 1, 1, 0), 1, 0, "parallel_config.parallel_vae_size");
  ParallelConfig pc = make_pc(1, 1, 1, 1, 1, 1);
  pc.dwdp_size = 0;
  expect_recipe_error(pc, 1, 0, "parallel_config.dwdp_size");
}

TEST(Mesh, DwdpSizeDividesTheWorld) {
  ParallelConfig pc = make_pc(1, 1, 1, 1, 1, 1);
  pc.dwdp_size = 2;
  expect_recipe_error(pc, 1, 0, "parallel_config.dwdp_size");  // world 1
  ParallelConfig two = make_pc(2, 1, 1, 1, 1, 1);                // dp 2: world 2
  two.dwdp_size = 2;
  EXPECT_NO_THROW(validate_mesh(two, 2, 0));
  ParallelConfig four = make_pc(2, 2, 1, 1, 1, 1);  // world 4
  four.dwdp_size = 3;
  expect_recipe_error(four, 4, 0, "parallel_config.dwdp_size");
}

TEST(Mesh, AsyncUlyssesIsCarriedByTheShape) {
  ParallelConfig pc = make_pc(1, 1, 2, 1, 1, 1);
  pc.async_ulysses = true;
  EXPECT_NO_THROW(validate_mesh(pc, 2, 40));
  EXPECT_TRUE(MeshShape::from(pc).async_ulysses);
  EXPECT_FALSE(MeshShape::from(make_pc(1, 1, 2, 1, 1, 1)).async_ulysses);
}

TEST(Mesh, CfgAtMostTwo) { expect_recipe_error(make_pc(1, 3, 1, 1, 1, 1), 3, 40, "parallel_config.cfg_size"); }

TEST(Mesh, VaeGroupWithinCfg0Group) {
  // cfg 2 × ulysses 2 on 4 ranks: the cfg-0 group has 2 ranks.
  EXPECT_NO_THROW(validate_mesh(make_pc(1, 2, 2, 1, 1, 1, 2), 4, 40));
  expect_recipe_error(make_pc(1, 2, 2, 1, 1, 1, 3), 4, 40, "parallel_config.parallel_vae_size 3");
  expect_recipe_error(make_pc(2, 1, 2, 1, 1, 1, 4), 4, 40, "parallel_config.parallel_vae_size 4");
}

TEST(Mesh, VaeSplitDim) {  // an unknown split dim is the parser's error (test_recipe)
  ParallelConfig pc = make_pc(1, 1, 1, 1, 1, 1);
  pc.parallel_vae_split_dim = VaeSplitDim::kHeight;
  EXPECT_NO_THROW(validate_mesh(pc, 1, 0));
}

TEST(Mesh, SingleRankMeshWithoutMpi) {
  DistEnv env;  // world 1, MPI not started: every group is a self group
  Mesh mesh = make_mesh(make_pc(1, 1, 1, 1, 1, 1), env);
  for (auto* g : {&mesh.world, &mesh.replica, &mesh.dp, &mesh.cfg, &mesh.cp, &mesh.row, &mesh.col, &mesh.ulysses,
                  &mesh.seq, &mesh.vae}) {
    ASSERT_NE(*g, nullptr);
    EXPECT_EQ((*g)->size(), 1);
    EXPECT_EQ((*g)->rank(), 0);
  }
  EXPECT_TRUE(mesh.in_vae_group());
  EXPECT_TRUE(mesh.is_replica_leader());
  EXPECT_FALSE(any_rank_failed(*mesh.world, false));
  EXPECT_TRUE(any_rank_failed(*mesh.world, true));
  // Wrong world size for the config is a recipe error before any MPI call.
  EXPECT_THROW(make_mesh(make_pc(1, 2, 1, 1, 1, 1), env), Error);
}
