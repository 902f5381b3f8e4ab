// Broadcast of a host tensor whose shape and dtype only the root knows (e.g. the image condition of
// a prompt line, made on the replica leader).
#pragma once
#include "dist/communicator.h"

namespace vgen {

// Collective over `comm`: every rank ends with the root's `t` (undefined if the root's is), host
// memory, up to 6 dimensions. Other ranks' `t` on entry is ignored.
void broadcast_tensor(Communicator& comm, Tensor& t, int root);

}  // namespace vgen
