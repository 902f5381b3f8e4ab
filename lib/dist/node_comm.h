// The ranks of this node (MPI shared-memory split of MPI_COMM_WORLD), which share the reading of a
// checkpoint (dist/weight_stream.h).
#pragma once
#include <memory>

#include "dist/communicator.h"

namespace vgen {

// Host (MPI) communicator of this node's ranks; null when this rank is alone on its node or MPI is
// not running. Collective over MPI_COMM_WORLD.
std::shared_ptr<Communicator> node_host_communicator();
// NCCL communicator over the same ranks on their current devices (CUDA builds; throws kUsage
// otherwise); null when `host` is null. Collective over the node.
std::shared_ptr<Communicator> node_device_communicator(const std::shared_ptr<Communicator>& host);

}  // namespace vgen
