#include "dist/node_comm.h"

#include <mpi.h>

#include "core/error.h"
#include "dist/mpi_communicator.h"

namespace vgen {

std::shared_ptr<Communicator> node_host_communicator() {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized) return nullptr;
  int world = 1, rank = 0;
  VGEN_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world));
  if (world == 1) return nullptr;
  VGEN_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_Comm node;
  VGEN_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  auto comm = std::make_shared<MpiCommunicator>(node, "node");
  if (comm->size() == 1) return nullptr;
  return comm;
}

#ifndef VGEN_WITH_CUDA
std::shared_ptr<Communicator> node_device_communicator(const std::shared_ptr<Communicator>& host) {
  if (!host) return nullptr;
  VGEN_THROW(ExitCode::kUsage, "node device communicator: this vgen was built without the CUDA backend");
}
#endif

}  // namespace vgen
