// A dynamic work queue shared by the whole job: an int64 counter on world rank 0 that any rank
// advances with an MPI one-sided fetch-and-add, so replicas take the next prompt as they finish
// (no static split, no dispatcher thread). Creation and destruction are collective over the world.
#pragma once
#include <cstdint>

namespace vgen {

class WorkQueue {
 public:
  explicit WorkQueue(int64_t total);  // collective over MPI_COMM_WORLD
  ~WorkQueue();                        // collective over MPI_COMM_WORLD
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // The next position in [0, total), or -1 when the queue is drained. Not collective.
  int64_t next();
  int64_t total() const { return total_; }

 private:
  int64_t total_;
  void* win_ = nullptr;   // MPI_Win (opaque here)
  int64_t* base_ = nullptr;
  int64_t local_next_ = 0;  // without MPI: a plain counter
  bool use_mpi_ = false;
  int uncaught_ = 0;  // std::uncaught_exceptions() at construction
};

}  // namespace vgen
