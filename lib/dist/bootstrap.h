// MPI bootstrap under mpirun or srun, and construction of this rank's Mesh.
#pragma once
#include <string>
#include <vector>

#include "dist/mesh.h"

namespace vgen {

struct DistEnv {
  int world_rank = 0;
  int world_size = 1;
  int local_rank = 0;  // rank on this node (selects the GPU)
  int local_size = 1;
  std::string host;
};

// MPI_Init_thread (idempotent); sets the process identity used in errors and logs.
DistEnv dist_init(int* argc, char*** argv);
void dist_finalize();
// Ends the whole job quickly: MPI_Abort when several ranks run, exit otherwise.
[[noreturn]] void dist_abort(int exit_code);
bool dist_initialized();

// Builds this rank's communicators for the parallel config (validated against env.world_size).
// Collective over MPI_COMM_WORLD.
Mesh make_mesh(const ParallelConfig& pc, const DistEnv& env);

// Before any other collective: every rank of MPI_COMM_WORLD says whether its own checks failed (its
// exit code, 0 = none); every rank learns the lowest failing rank and its code ({0, -1}: none failed).
// Lets the job end with one message (the failing rank's) and a normal exit instead of an abort.
struct WorldVerdict {
  int code = 0;
  int rank = -1;
};
WorldVerdict agree_on_failure(int local_code);

// After agree_on_failure found no failure: every rank holds one error text per item of the same list
// ("" = fine; the prompt lines). An item that any rank failed ends with the lowest such rank's text on
// every rank, so the ranks agree on what to render and one message names it. Returns the items whose
// text this rank took from another rank (it found no problem itself). Collective over MPI_COMM_WORLD;
// kInput on every rank when the ranks hold lists of different lengths.
std::vector<size_t> agree_on_item_errors(std::vector<std::string>& errors);

// True on every rank if any rank of `comm` passes local_failed = true (agreement before collectives,
// so one rank's failure never leaves the others inside a collective).
bool any_rank_failed(Communicator& comm, bool local_failed);

}  // namespace vgen
