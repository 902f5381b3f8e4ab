// The device mesh's shape (docs/architecture.md): sizes of the axes dp, cfg, rows, cols, ulysses, made from
// parallel_config. Plain data, so reports (io/) can describe a mesh without the communicators of
// dist/; the rank layout over these axes is dist/mesh_axes.h.
#pragma once
#include "config/parallel_config.h"

namespace vgen {

struct MeshShape {
  int dp = 1, cfg = 1, rows = 1, cols = 1, ulysses = 1;
  bool ring = false;  // cp axis is a ring (rows == 1, cols == ring_size)
  int vae = 1;        // parallel_vae_size (ranks 0..vae-1 of each replica's cfg-0 group)
  bool async_ulysses = false;  // head-group pipelined Ulysses all-to-alls (parallel_config.async_ulysses)
  static MeshShape from(const ParallelConfig& pc);
  int cp() const { return rows * cols; }
  int seq() const { return cp() * ulysses; }
  int replica_size() const { return cfg * seq(); }
  int world() const { return dp * replica_size(); }
};

inline MeshShape MeshShape::from(const ParallelConfig& pc) {
  MeshShape m;
  m.dp = pc.dp_size;
  m.cfg = pc.cfg_size;
  m.ulysses = pc.ulysses_size;
  if (pc.ring_size > 1) {
    // Ring is a 1 × ring tile so cp_rank = col = ring rank.
    m.ring = true;
    m.rows = 1;
    m.cols = pc.ring_size;
  } else {
    m.rows = pc.attn2d_size[0];
    m.cols = pc.attn2d_size[1];
  }
  m.vae = pc.parallel_vae_size;
  m.async_ulysses = pc.async_ulysses;
  return m;
}

}  // namespace vgen
