// The device mesh (docs/architecture.md "The mesh and rank layout"):
// rank = ((((dp·C + cfg)·R + row)·Co + col)·U + u), axis order in dist/mesh_axes.h. Ring uses R = 1,
// Co = ring_size (so cp_rank = ring rank). Groups are split with colour = the other coordinates and
// key = the group's own coordinate, so a group rank equals its mesh coordinate.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/mesh_shape.h"
#include "config/parallel_config.h"
#include "dist/communicator.h"
#include "dist/mesh_axes.h"

namespace vgen {

struct MeshCoord {
  int dp = 0, cfg = 0, row = 0, col = 0, u = 0;
  int on(MeshAxis a) const {
    switch (a) {
      case MeshAxis::kDp: return dp;
      case MeshAxis::kCfg: return cfg;
      case MeshAxis::kRow: return row;
      case MeshAxis::kCol: return col;
      case MeshAxis::kUlysses: return u;
    }
    return 0;
  }
};

MeshCoord mesh_coord_of(const MeshShape& m, int rank);
int mesh_rank_of(const MeshShape& m, const MeshCoord& c);
inline int cp_rank_of(const MeshShape& m, const MeshCoord& c) { return c.row * m.cols + c.col; }
inline int seq_rank_of(const MeshShape& m, const MeshCoord& c) { return cp_rank_of(m, c) * m.ulysses + c.u; }

// Validates a parallel config for `world` ranks and `num_heads` attention heads (0 = unknown);
// throws kRecipe naming the key (world mismatch, ulysses not dividing heads, ring with attn2d, ...).
void validate_mesh(const ParallelConfig& pc, int world, int num_heads);

// This rank's communicators. A group of size 1 is a self communicator.
struct Mesh {
  MeshShape shape;
  MeshCoord coord;
  int world_rank = 0;
  std::shared_ptr<Communicator> world, replica;  // replica = ranks of one dp index
  std::shared_ptr<Communicator> dp, cfg, cp, row, col, ulysses, seq;
  std::shared_ptr<Communicator> vae;  // null on ranks outside the VAE group
  int cp_rank() const { return cp_rank_of(shape, coord); }
  int seq_rank() const { return seq_rank_of(shape, coord); }
  bool in_vae_group() const { return vae != nullptr; }
  bool is_replica_leader() const { return coord.cfg == 0 && seq_rank() == 0; }
};

}  // namespace vgen
