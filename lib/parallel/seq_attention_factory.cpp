#include "parallel/seq_attention_factory.h"

#include "parallel/attention2d.h"
#include "parallel/local_attention.h"
#include "parallel/ring_attention.h"
#include "parallel/ulysses.h"

namespace vgen {
namespace {

void check_group(const std::shared_ptr<Communicator>& comm, int size, int rank, const char* name) {
  VGEN_ASSERT(comm != nullptr && comm->size() == size && comm->rank() == rank,
              "mesh {} group: expected rank {} of {}, got {}", name, rank, size,
              comm ? fmt::format("rank {} of {}", comm->rank(), comm->size()) : std::string("none"));
}

}  // namespace

// attention_config.backend picks the kernel of the local step; the host path has only the reference.
std::unique_ptr<SeqAttention> make_seq_attention(Mesh& mesh, [[maybe_unused]] const AttentionConfig& config) {
  const MeshShape& s = mesh.shape;
  std::unique_ptr<SeqAttention> cp;
  if (s.cp() > 1) {
    if (s.ring) {
      VGEN_ASSERT(s.rows == 1, "ring mesh with {} rows", s.rows);
      check_group(mesh.cp, s.cp(), mesh.cp_rank(), "cp");
      cp = std::make_unique<RingAttention>(mesh.cp);
    } else {
      check_group(mesh.row, s.cols, mesh.coord.col, "attn2d row");
      check_group(mesh.col, s.rows, mesh.coord.row, "attn2d col");
      cp = std::make_unique<Attention2D>(mesh.row, mesh.col);
    }
  }
  if (s.ulysses > 1) {
    check_group(mesh.ulysses, s.ulysses, mesh.coord.u, "ulysses");
    return std::make_unique<UlyssesAttention>(mesh.ulysses, std::move(cp),
                                              s.async_ulysses ? kAsyncUlyssesHeadGroups : 1);
  }
  if (cp) return cp;
  return make_local_attention();
}

}  // namespace vgen
