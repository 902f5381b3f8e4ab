// The mesh's axes in rank order: the one place that says rank = ((((dp·C + cfg)·R + row)·Co + col)·U + u)
// (docs/architecture.md), used by the rank <-> coordinate algebra (dist/mesh.cpp), the communicator splits
// (dist/bootstrap.cpp) and the time model's group strides (plan/time_model.cpp).
#pragma once
#include <array>
#include <initializer_list>

#include "config/mesh_shape.h"

namespace vgen {

// Outermost first: consecutive world ranks differ in kUlysses.
enum class MeshAxis : int { kDp, kCfg, kRow, kCol, kUlysses };
inline constexpr int kNumMeshAxes = 5;

// A group of ranks spanned by some axes (the other axes' coordinates fixed), as MPI_Comm_split
// wants it: colour = the other axes' coordinates, key = the group's own ones, each mixed-radix in
// mesh order, so the rank within the group is the key.
struct MeshSplit {
  int colour = 0;
  int key = 0;
  int size = 1;  // ranks in the group
};

struct MeshAxes {
  std::array<int, kNumMeshAxes> sizes = {1, 1, 1, 1, 1};  // indexed by MeshAxis

  static MeshAxes of(const MeshShape& m) { return {{m.dp, m.cfg, m.rows, m.cols, m.ulysses}}; }
  int size(MeshAxis a) const { return sizes[int(a)]; }
  // World-rank distance between neighbours along `a`: the product of the inner axes' sizes.
  int stride(MeshAxis a) const {
    int s = 1;
    for (int i = kNumMeshAxes - 1; i > int(a); --i) s *= sizes[i];
    return s;
  }
  int world() const { return stride(MeshAxis::kDp) * size(MeshAxis::kDp); }
  // Coordinate of world rank `rank` (0 <= rank < world()) on `a`.
  int coord(int rank, MeshAxis a) const { return rank / stride(a) % size(a); }
  // The group of `rank` spanned by `group` (a set: the list's order does not matter).
  MeshSplit split(int rank, std::initializer_list<MeshAxis> group) const {
    std::array<bool, kNumMeshAxes> in_group{};
    for (MeshAxis a : group) in_group[int(a)] = true;
    MeshSplit s;
    for (int i = 0; i < kNumMeshAxes; ++i) {
      const int c = coord(rank, MeshAxis(i));
      if (in_group[i]) {
        s.key = s.key * sizes[i] + c;
        s.size *= sizes[i];
      } else {
        s.colour = s.colour * sizes[i] + c;
      }
    }
    return s;
  }
};

}  // namespace vgen
