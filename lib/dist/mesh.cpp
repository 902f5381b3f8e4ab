// Rank <-> coordinate algebra (axis order in dist/mesh_axes.h) and up-front validation of parallel_config.
#include "dist/mesh.h"

#include <fmt/format.h>

#include "core/error.h"

namespace vgen {

MeshCoord mesh_coord_of(const MeshShape& m, int rank) {
  VGEN_ASSERT(rank >= 0 && rank < m.world(), "rank {} outside a mesh of {} ranks", rank, m.world());
  const MeshAxes axes = MeshAxes::of(m);
  MeshCoord c;
  c.dp = axes.coord(rank, MeshAxis::kDp);
  c.cfg = axes.coord(rank, MeshAxis::kCfg);
  c.row = axes.coord(rank, MeshAxis::kRow);
  c.col = axes.coord(rank, MeshAxis::kCol);
  c.u = axes.coord(rank, MeshAxis::kUlysses);
  return c;
}

int mesh_rank_of(const MeshShape& m, const MeshCoord& c) {
  VGEN_ASSERT(c.dp >= 0 && c.dp < m.dp && c.cfg >= 0 && c.cfg < m.cfg && c.row >= 0 && c.row < m.rows &&
                  c.col >= 0 && c.col < m.cols && c.u >= 0 && c.u < m.ulysses,
              "mesh coordinate (dp {}, cfg {}, row {}, col {}, u {}) outside shape (dp {}, cfg {}, rows {}, "
              "cols {}, ulysses {})",
              c.dp, c.cfg, c.row, c.col, c.u, m.dp, m.cfg, m.rows, m.cols, m.ulysses);
  const MeshAxes axes = MeshAxes::of(m);
  int rank = 0;
  for (int i = 0; i < kNumMeshAxes; ++i) rank += c.on(MeshAxis(i)) * axes.stride(MeshAxis(i));
  return rank;
}

namespace {

void check_positive(int v, const char* key) {
  VGEN_CHECK(v >= 1, ExitCode::kRecipe, "parallel_config.{}: must be >= 1, got {}", key, v);
}

std::string cp_description(const ParallelConfig& pc) {
  if (pc.ring_size > 1) return fmt::format("ring_size {}", pc.ring_size);
  return fmt::format("attn2d_size [{}, {}]", pc.attn2d_size[0], pc.attn2d_size[1]);
}

}  // namespace

void validate_mesh(const ParallelConfig& pc, int world, int num_heads) {
  check_positive(pc.dp_size, "dp_size");
  check_positive(pc.cfg_size, "cfg_size");
  check_positive(pc.ulysses_size, "ulysses_size");
  check_positive(pc.ring_size, "ring_size");
  VGEN_CHECK(pc.attn2d_size[0] >= 1 && pc.attn2d_size[1] >= 1, ExitCode::kRecipe,
             "parallel_config.attn2d_size: both entries must be >= 1, got [{}, {}]", pc.attn2d_size[0],
             pc.attn2d_size[1]);
  check_positive(pc.parallel_vae_size, "parallel_vae_size");
  check_positive(pc.dwdp_size, "dwdp_size");
  VGEN_CHECK(pc.cfg_size <= 2, ExitCode::kRecipe,
             "parallel_config.cfg_size: must be 1 or 2 (conditional and unconditional streams), got {}",
             pc.cfg_size);
  VGEN_CHECK(!(pc.ring_size > 1 && pc.attn2d_size[0] * pc.attn2d_size[1] > 1), ExitCode::kRecipe,
             "parallel_config: ring_size {} and attn2d_size [{}, {}] both shard the sequence; use one "
             "(set attn2d_size to [1, 1] or ring_size to 1)",
             pc.ring_size, pc.attn2d_size[0], pc.attn2d_size[1]);
  VGEN_CHECK(world >= 1, ExitCode::kRecipe, "parallel_config: world size must be >= 1, got {}", world);

  // 64-bit product so absurd sizes give a clear message instead of overflowing.
  const int cp = pc.cp_size();
  const int64_t product = int64_t(pc.dp_size) * pc.cfg_size * cp * pc.ulysses_size;
  VGEN_CHECK(product == world, ExitCode::kRecipe,
             "parallel_config: world size {} does not equal dp {} × cfg {} × cp {} × ulysses {} = {} "
             "(cp from {}; set dp_size, cfg_size, ulysses_size, ring_size or attn2d_size so the product "
             "is the number of ranks)",
             world, pc.dp_size, pc.cfg_size, cp, pc.ulysses_size, product, cp_description(pc));

  VGEN_CHECK(world % pc.dwdp_size == 0, ExitCode::kRecipe,
             "parallel_config.dwdp_size {}: must divide the world size {} (groups of consecutive ranks of one node "
             "or NVLink domain share one copy of the DiT blocks)",
             pc.dwdp_size, world);

  if (num_heads > 0 && num_heads % pc.ulysses_size != 0) {
    // Keep the sequence degree: the largest Ulysses size that divides both it and the heads, the
    // rest as ring or Attention2D (they split the sequence, not the heads).
    const int sp = cp * pc.ulysses_size;
    int u = 1;
    for (int d = 1; d <= sp; ++d)
      if (sp % d == 0 && num_heads % d == 0) u = d;
    VGEN_THROW(ExitCode::kRecipe,
               "parallel_config.ulysses_size {} does not divide the model's {} attention heads; for the same "
               "sequence degree {} use ulysses_size {} with ring_size {} or attn2d_size [1, {}] (they split the "
               "sequence, not the heads)",
               pc.ulysses_size, num_heads, sp, u, sp / u, sp / u);
  }

  // The VAE group is ranks 0..P-1 of a replica's cfg-0 group (docs/architecture.md), so P <= the seq size.
  const int cfg0_group = world / (pc.dp_size * pc.cfg_size);
  VGEN_CHECK(pc.parallel_vae_size <= cfg0_group, ExitCode::kRecipe,
             "parallel_config.parallel_vae_size {} exceeds the {} ranks of a replica's cfg-0 group "
             "(world {} / dp {} / cfg {}); the VAE group is ranks 0..P-1 of that group",
             pc.parallel_vae_size, cfg0_group, world, pc.dp_size, pc.cfg_size);
}

}  // namespace vgen
