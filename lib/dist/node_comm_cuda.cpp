#include "dist/mpi_communicator.h"
#include "dist/nccl_communicator.h"
#include "dist/node_comm.h"

namespace vgen {

std::shared_ptr<Communicator> node_device_communicator(const std::shared_ptr<Communicator>& host) {
  if (!host) return nullptr;
  auto* mpi = dynamic_cast<MpiCommunicator*>(host.get());
  VGEN_ASSERT(mpi != nullptr, "node device communicator: the node group is not an MPI communicator");
  return std::make_shared<NcclCommunicator>(mpi->mpi_comm(), "node");
}

}  // namespace vgen
