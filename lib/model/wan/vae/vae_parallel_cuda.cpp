// The VAE group's NCCL communicator, device_vae_communicator of vae_parallel.h (CUDA builds only).
#include <mutex>
#include <vector>

#include "dist/device_mesh.h"
#include "dist/mpi_communicator.h"
#include "dist/nccl_communicator.h"
#include "model/wan/vae/vae_parallel.h"

namespace vgen {

namespace {
struct Entry {
  const Communicator* key = nullptr;  // the host VAE communicator
  std::weak_ptr<Communicator> alive;  // detects a destroyed host group whose address was reused
  std::shared_ptr<Communicator> dev;
};
std::mutex g_mu;
// Never destroyed: NCCL communicators must not be torn down during static destruction.
std::vector<Entry>& g_cache = *new std::vector<Entry>();
}  // namespace

std::shared_ptr<Communicator> device_vae_communicator(const Mesh& host) {
  if (!host.vae) return nullptr;
  select_mesh_device();
  if (host.vae->size() == 1) return make_self_communicator();
  std::lock_guard<std::mutex> lk(g_mu);
  for (auto it = g_cache.begin(); it != g_cache.end();) {
    if (it->alive.expired()) {
      it = g_cache.erase(it);
      continue;
    }
    if (it->key == host.vae.get()) return it->dev;
    ++it;
  }
  auto* mpi = dynamic_cast<MpiCommunicator*>(host.vae.get());
  VGEN_CHECK(mpi != nullptr, ExitCode::kInternal,
             "device_vae_communicator: the 'vae' group ({} ranks) is not an MPI communicator, so no NCCL communicator "
             "can be built over it",
             host.vae->size());
  auto dev = std::make_shared<NcclCommunicator>(mpi->mpi_comm(), "vae");
  VGEN_ASSERT(dev->rank() == host.vae->rank() && dev->size() == host.vae->size(),
              "device_vae_communicator: NCCL rank {} of {}, host rank {} of {}", dev->rank(), dev->size(),
              host.vae->rank(), host.vae->size());
  g_cache.push_back({host.vae.get(), host.vae, dev});
  return dev;
}

}  // namespace vgen
