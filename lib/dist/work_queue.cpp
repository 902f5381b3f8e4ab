#include "dist/work_queue.h"

#include <mpi.h>

#include <exception>

#include "core/error.h"
#include "core/wait_marker.h"
#include "dist/bootstrap.h"

namespace vgen {

WorkQueue::WorkQueue(int64_t total) : total_(total), uncaught_(std::uncaught_exceptions()) {
  int size = 1;
  if (dist_initialized()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  use_mpi_ = size > 1;
  if (!use_mpi_) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  WaitScope wait(WaitOp::kWindow, WaitBackend::kMpi, "dp queue");
  MPI_Win win;
  MPI_Aint bytes = rank == 0 ? MPI_Aint(sizeof(int64_t)) : 0;
  int rc = MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base_, &win);
  VGEN_CHECK(rc == MPI_SUCCESS, ExitCode::kDistributed, "MPI_Win_allocate for the work queue failed ({})", rc);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    *base_ = 0;
    MPI_Win_unlock(0, win);
  }
  win_ = new MPI_Win(win);
  MPI_Barrier(MPI_COMM_WORLD);
}

WorkQueue::~WorkQueue() {
  if (!use_mpi_ || !win_) return;
  // Unwinding an error that only this rank saw: the others may never reach the barrier, and the
  // error's handler ends the job (dist_abort), so the window is left to the process' end.
  if (std::uncaught_exceptions() > uncaught_) return;
  MPI_Win* w = static_cast<MPI_Win*>(win_);
  WaitScope wait(WaitOp::kWindow, WaitBackend::kMpi, "dp queue");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(w);
  delete w;
}

int64_t WorkQueue::next() {
  int64_t pos;
  if (!use_mpi_) {
    pos = local_next_++;
  } else {
    MPI_Win w = *static_cast<MPI_Win*>(win_);
    const int64_t one = 1;
    WaitScope wait(WaitOp::kQueueNext, WaitBackend::kMpi, "dp queue");
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
    int rc = MPI_Fetch_and_op(&one, &pos, MPI_INT64_T, 0, 0, MPI_SUM, w);
    MPI_Win_unlock(0, w);
    VGEN_CHECK(rc == MPI_SUCCESS, ExitCode::kDistributed, "MPI_Fetch_and_op on the work queue failed ({})", rc);
  }
  return pos < total_ ? pos : -1;
}

}  // namespace vgen
