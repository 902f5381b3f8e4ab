#include <cuda_runtime.h>
#include <mpi.h>

#include <mutex>
#include <vector>

#include "core/cuda_stream.h"
#include "core/device_probe.h"
#include "core/error.h"
#include "core/log.h"
#include "dist/device_mesh.h"
#include "dist/mpi_communicator.h"
#include "dist/nccl_communicator.h"

namespace vgen {
namespace {

std::mutex g_mu;
int g_device = -1;

struct CacheEntry {
  const Communicator* key = nullptr;  // the host mesh's seq communicator
  std::weak_ptr<Communicator> alive;  // detects a destroyed host mesh whose address was reused
  std::shared_ptr<Mesh> mesh;
};
// Never destroyed: NCCL communicators must not be torn down during static destruction (the CUDA
// runtime may already be gone); entries of destroyed host meshes are dropped on the next call.
std::vector<CacheEntry>& g_cache = *new std::vector<CacheEntry>();

int node_local_rank() {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized) return 0;
  int size = 1, rank = 0;
  VGEN_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (size == 1) return 0;
  VGEN_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_Comm node;
  VGEN_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int local = 0;
  VGEN_MPI_CHECK(MPI_Comm_rank(node, &local));
  VGEN_MPI_CHECK(MPI_Comm_free(&node));
  return local;
}

// A group of the host mesh as a device communicator.
std::shared_ptr<Communicator> device_group(const std::shared_ptr<Communicator>& host, const char* name) {
  if (!host || host->size() == 1) return make_self_communicator();
  auto* mpi = dynamic_cast<MpiCommunicator*>(host.get());
  VGEN_CHECK(mpi != nullptr, ExitCode::kInternal,
             "device_mesh: the '{}' group ({} ranks) is not an MPI communicator, so no NCCL communicator can be "
             "built over it",
             name, host->size());
  auto nccl = std::make_shared<NcclCommunicator>(mpi->mpi_comm(), name);
  VGEN_ASSERT(nccl->rank() == host->rank() && nccl->size() == host->size(),
              "device_mesh: NCCL group '{}' is rank {} of {}, the host group rank {} of {}", name, nccl->rank(),
              nccl->size(), host->rank(), host->size());
  return nccl;
}

}  // namespace

int select_mesh_device() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_device >= 0) return g_device;
  const DeviceCount probe = cuda_device_probe();
  if (probe.count <= 0) throw_no_device(probe.reason);
  const int count = probe.count;
  const int local = node_local_rank();
  g_device = local % count;
  cuda_set_device(g_device);
  log_debug("rank-local index {} uses CUDA device {} of {}", local, g_device, count);
  return g_device;
}

std::shared_ptr<Mesh> device_mesh(const Mesh& host) {
  select_mesh_device();
  std::lock_guard<std::mutex> lk(g_mu);
  const Communicator* key = host.seq.get();
  for (auto it = g_cache.begin(); it != g_cache.end();) {
    if (it->alive.expired()) {
      it = g_cache.erase(it);
      continue;
    }
    if (it->key == key) return it->mesh;
    ++it;
  }
  auto m = std::make_shared<Mesh>(host);
  // Every rank builds the groups in this order (NCCL init is collective within each group). A
  // subgroup as large as its parent has the same ranks in the same order (seq_rank = cp_rank·U + u;
  // cp_rank = row·cols + col), so it shares the parent's communicator.
  auto size = [](const std::shared_ptr<Communicator>& c) { return c ? c->size() : 1; };
  m->seq = device_group(host.seq, "seq");
  m->ulysses = size(host.ulysses) == size(host.seq) ? m->seq : device_group(host.ulysses, "ulysses");
  m->cp = size(host.cp) == size(host.seq) ? m->seq : device_group(host.cp, "cp");
  m->row = size(host.row) == size(host.cp) ? m->cp : device_group(host.row, "row");
  m->col = size(host.col) == size(host.cp) ? m->cp : device_group(host.col, "col");
  g_cache.push_back({key, host.seq, m});
  return m;
}

}  // namespace vgen
