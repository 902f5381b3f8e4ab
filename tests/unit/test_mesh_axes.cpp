// dist/mesh_axes.h against the layout written out by hand: rank = ((((dp·C + cfg)·R + row)·Co + col)·U + u).
// stride/coord for every rank, and the split colour/key/size of every group that make_mesh creates
// (the formulas bootstrap.cpp used before it took them from MeshAxes), on ring and attn2d shapes.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "dist/mesh.h"
#include "dist/mesh_axes.h"

using namespace vgen;

namespace {

using A = MeshAxis;

MeshShape make_shape(int dp, int cfg, int ulysses, int ring, int rows, int cols) {
  ParallelConfig pc;
  pc.dp_size = dp;
  pc.cfg_size = cfg;
  pc.ulysses_size = ulysses;
  pc.ring_size = ring;
  pc.attn2d_size = {rows, cols};
  return MeshShape::from(pc);
}

// Single rank, cfg × Ulysses, the 72-rank attn2d mesh, non-square attn2d, rings, a column tile.
std::vector<MeshShape> shapes() {
  return {make_shape(1, 1, 1, 1, 1, 1), make_shape(2, 2, 2, 1, 1, 1), make_shape(1, 2, 4, 1, 3, 3),
          make_shape(3, 2, 1, 1, 2, 3), make_shape(2, 1, 2, 3, 1, 1), make_shape(2, 2, 3, 5, 1, 1),
          make_shape(1, 1, 1, 1, 2, 1), make_shape(2, 2, 2, 1, 2, 2)};
}

std::string name(const MeshShape& m) {
  return "dp " + std::to_string(m.dp) + " cfg " + std::to_string(m.cfg) + " rows " + std::to_string(m.rows) +
         " cols " + std::to_string(m.cols) + " ulysses " + std::to_string(m.ulysses) + (m.ring ? " ring" : "");
}

// One group as make_mesh splits it, with the colour and key written out per group (bootstrap.cpp).
struct ExpectedGroup {
  const char* name;
  std::vector<MeshAxis> axes;
  int size, colour, key;
};

std::vector<ExpectedGroup> expected_groups(const MeshShape& s, int rank) {
  const MeshCoord c = mesh_coord_of(s, rank);
  const int C = s.cfg, R = s.rows, Co = s.cols, U = s.ulysses;
  return {
      {"replica", {A::kCfg, A::kRow, A::kCol, A::kUlysses}, s.replica_size(), c.dp, rank % s.replica_size()},
      {"dp", {A::kDp}, s.dp, ((c.cfg * R + c.row) * Co + c.col) * U + c.u, c.dp},
      {"cfg", {A::kCfg}, s.cfg, ((c.dp * R + c.row) * Co + c.col) * U + c.u, c.cfg},
      {"cp", {A::kRow, A::kCol}, s.cp(), (c.dp * C + c.cfg) * U + c.u, c.row * Co + c.col},
      {"row", {A::kCol}, s.cols, ((c.dp * C + c.cfg) * R + c.row) * U + c.u, c.col},
      {"col", {A::kRow}, s.rows, ((c.dp * C + c.cfg) * Co + c.col) * U + c.u, c.row},
      {"ulysses", {A::kUlysses}, s.ulysses, ((c.dp * C + c.cfg) * R + c.row) * Co + c.col, c.u},
      {"seq", {A::kRow, A::kCol, A::kUlysses}, s.seq(), c.dp * C + c.cfg, (c.row * Co + c.col) * U + c.u},
  };
}

MeshSplit split_of(const MeshAxes& axes, int rank, const std::vector<MeshAxis>& group) {
  switch (group.size()) {
    case 1: return axes.split(rank, {group[0]});
    case 2: return axes.split(rank, {group[0], group[1]});
    case 3: return axes.split(rank, {group[0], group[1], group[2]});
    case 4: return axes.split(rank, {group[0], group[1], group[2], group[3]});
  }
  ADD_FAILURE() << "unexpected group of " << group.size() << " axes";
  return {};
}

}  // namespace

TEST(MeshAxes, StridesAndWorld) {
  for (const MeshShape& m : shapes()) {
    SCOPED_TRACE(name(m));
    const MeshAxes axes = MeshAxes::of(m);
    // Also the time model's group strides (pipeline/predict.cpp: st_u = 1, st_col = U, st_row = C·U,
    // st_cfg = R·C·U with C = cols).
    EXPECT_EQ(axes.stride(A::kUlysses), 1);
    EXPECT_EQ(axes.stride(A::kCol), m.ulysses);
    EXPECT_EQ(axes.stride(A::kRow), m.cols * m.ulysses);
    EXPECT_EQ(axes.stride(A::kCfg), m.rows * m.cols * m.ulysses);
    EXPECT_EQ(axes.stride(A::kDp), m.cfg * m.rows * m.cols * m.ulysses);
    EXPECT_EQ(axes.world(), m.world());
    EXPECT_EQ(axes.size(A::kDp), m.dp);
    EXPECT_EQ(axes.size(A::kCfg), m.cfg);
    EXPECT_EQ(axes.size(A::kRow), m.rows);
    EXPECT_EQ(axes.size(A::kCol), m.cols);
    EXPECT_EQ(axes.size(A::kUlysses), m.ulysses);
  }
}

TEST(MeshAxes, CoordOfEveryRank) {
  for (const MeshShape& m : shapes()) {
    SCOPED_TRACE(name(m));
    const MeshAxes axes = MeshAxes::of(m);
    int visited = 0;
    for (int dp = 0; dp < m.dp; ++dp)
      for (int cfg = 0; cfg < m.cfg; ++cfg)
        for (int row = 0; row < m.rows; ++row)
          for (int col = 0; col < m.cols; ++col)
            for (int u = 0; u < m.ulysses; ++u) {
              const int rank = (((dp * m.cfg + cfg) * m.rows + row) * m.cols + col) * m.ulysses + u;
              ASSERT_EQ(rank, visited++);  // the loops run in rank order
              ASSERT_EQ(axes.coord(rank, A::kDp), dp);
              ASSERT_EQ(axes.coord(rank, A::kCfg), cfg);
              ASSERT_EQ(axes.coord(rank, A::kRow), row);
              ASSERT_EQ(axes.coord(rank, A::kCol), col);
              ASSERT_EQ(axes.coord(rank, A::kUlysses), u);
              const MeshCoord c = mesh_coord_of(m, rank);
              ASSERT_EQ(c.dp, dp);
              ASSERT_EQ(c.cfg, cfg);
              ASSERT_EQ(c.row, row);
              ASSERT_EQ(c.col, col);
              ASSERT_EQ(c.u, u);
              for (int i = 0; i < kNumMeshAxes; ++i) ASSERT_EQ(c.on(MeshAxis(i)), axes.coord(rank, MeshAxis(i)));
              ASSERT_EQ(mesh_rank_of(m, c), rank);
            }
    EXPECT_EQ(visited, m.world());
  }
}

TEST(MeshAxes, SplitMatchesTheWrittenOutColours) {
  for (const MeshShape& m : shapes()) {
    SCOPED_TRACE(name(m));
    const MeshAxes axes = MeshAxes::of(m);
    for (int rank = 0; rank < m.world(); ++rank) {
      const MeshCoord c = mesh_coord_of(m, rank);
      for (const ExpectedGroup& g : expected_groups(m, rank)) {
        SCOPED_TRACE(std::string(g.name) + " group of rank " + std::to_string(rank));
        const MeshSplit s = split_of(axes, rank, g.axes);
        ASSERT_EQ(s.size, g.size);
        ASSERT_EQ(s.colour, g.colour);
        ASSERT_EQ(s.key, g.key);
      }
      // The group ranks that Mesh reports are the split keys.
      ASSERT_EQ(axes.split(rank, {A::kRow, A::kCol}).key, cp_rank_of(m, c));
      ASSERT_EQ(axes.split(rank, {A::kRow, A::kCol, A::kUlysses}).key, seq_rank_of(m, c));
    }
  }
}

TEST(MeshAxes, SplitPartitionsTheWorld) {
  // What MPI_Comm_split makes of (colour, key): each colour is one group of `size` ranks with keys
  // 0..size-1, and the group's members differ only on its axes.
  for (const MeshShape& m : shapes()) {
    SCOPED_TRACE(name(m));
    const MeshAxes axes = MeshAxes::of(m);
    for (const ExpectedGroup& proto : expected_groups(m, 0)) {
      SCOPED_TRACE(proto.name);
      std::map<int, std::set<int>> keys_by_colour;
      std::map<int, int> first_rank_by_colour;
      for (int rank = 0; rank < m.world(); ++rank) {
        const MeshSplit s = split_of(axes, rank, proto.axes);
        ASSERT_TRUE(keys_by_colour[s.colour].insert(s.key).second) << "key " << s.key << " twice";
        const int first = first_rank_by_colour.emplace(s.colour, rank).first->second;
        for (int i = 0; i < kNumMeshAxes; ++i) {
          bool spanned = false;
          for (MeshAxis a : proto.axes) spanned = spanned || int(a) == i;
          if (!spanned) {
            ASSERT_EQ(axes.coord(rank, MeshAxis(i)), axes.coord(first, MeshAxis(i)));
          }
        }
      }
      ASSERT_EQ(int(keys_by_colour.size()), m.world() / proto.size);
      for (auto& [colour, keys] : keys_by_colour) {
        ASSERT_EQ(int(keys.size()), proto.size);
        ASSERT_EQ(*keys.begin(), 0);
        ASSERT_EQ(*keys.rbegin(), proto.size - 1);
      }
    }
  }
}

TEST(MeshAxes, GroupIsASet) {
  const MeshShape m = make_shape(2, 2, 2, 1, 2, 2);
  const MeshAxes axes = MeshAxes::of(m);
  for (int rank = 0; rank < m.world(); ++rank) {
    const MeshSplit a = axes.split(rank, {A::kRow, A::kCol, A::kUlysses});
    const MeshSplit b = axes.split(rank, {A::kUlysses, A::kCol, A::kRow});
    EXPECT_EQ(a.colour, b.colour);
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.size, b.size);
  }
}

TEST(MeshAxes, Nvl72Example) {
  // cfg 2 × attn2d 3×3 × Ulysses 4: rank 47 = cfg 1, row 0, col 2, u 3 (test_mesh.cpp Nvl72Mesh).
  const MeshAxes axes = MeshAxes::of(make_shape(1, 2, 4, 1, 3, 3));
  EXPECT_EQ(axes.coord(47, A::kCfg), 1);
  EXPECT_EQ(axes.coord(47, A::kRow), 0);
  EXPECT_EQ(axes.coord(47, A::kCol), 2);
  EXPECT_EQ(axes.coord(47, A::kUlysses), 3);
  const MeshSplit seq = axes.split(47, {A::kRow, A::kCol, A::kUlysses});
  EXPECT_EQ(seq.colour, 1);
  EXPECT_EQ(seq.key, 11);
  EXPECT_EQ(seq.size, 36);
}
