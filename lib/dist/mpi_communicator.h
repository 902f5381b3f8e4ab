// MPI backend of Communicator for host (CPU) tensors. Device tensors need the NCCL backend;
// passing one here is an error. Any dtype moves as raw elements; reductions take f32 and i64.
// Counts above INT_MAX elements are split into pieces (MPI counts are int).
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "dist/communicator.h"

// Wraps an MPI call: anything but MPI_SUCCESS throws vgen::Error(kDistributed) naming the call,
// the file and line, and MPI's error string (rank and host are added by vgen::Error).
#define VGEN_MPI_CHECK(call) ::vgen::mpi_check((call), #call, __FILE__, __LINE__)

namespace vgen {

void mpi_check(int rc, const char* what, const char* file, int line);
// Registers the world ranks of `comm` under `name` for the watchdog's messages; returns the id that
// WaitScope takes (core/wait_marker.h). Not collective.
int mpi_wait_group(MPI_Comm comm, const std::string& name);

class MpiCommunicator : public Communicator {
 public:
  // Takes ownership of `comm` (freed on destruction, unless MPI is already finalised or it is
  // MPI_COMM_WORLD / MPI_COMM_SELF). `name` labels errors ("cfg", "ulysses", ...).
  MpiCommunicator(MPI_Comm comm, std::string name);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm mpi_comm() const { return comm_; }  // e.g. to bootstrap an NCCL communicator
  const std::string& name() const { return name_; }

  void all_to_all(const Tensor& send, Tensor& recv) override;
  void all_gather(const Tensor& send, Tensor& recv) override;
  void all_gather_v(const Tensor& send, Tensor& recv, const std::vector<int64_t>& counts) override;
  void reduce_scatter(const Tensor& send, Tensor& recv) override;
  void all_reduce_sum(Tensor& t) override;
  void all_reduce_max(Tensor& t) override;
  void broadcast(Tensor& t, int root) override;
  void barrier() override;

  void send(const Tensor& t, int peer, int tag = 0) override;
  void recv(Tensor& t, int peer, int tag = 0) override;
  void sendrecv(const Tensor& send, int dst, Tensor& recv, int src, int tag = 0) override;
  std::unique_ptr<Pending> start_sendrecv(const Tensor& send, int dst, Tensor& recv, int src,
                                          int tag = 0) override;

 private:
  void all_reduce(Tensor& t, MPI_Op op, const char* what);
  void check_host(const Tensor& t, const char* op, const char* arg) const;
  void check_peer(int peer, const char* op) const;
  void group_check(int rc, const char* call, const char* file, int line) const;

  MPI_Comm comm_;
  std::string name_;
  int rank_ = 0;
  int size_ = 1;
  int wait_group_ = -1;  // its entry in the watchdog's group registry (core/wait_marker.h)
};

// A communicator over a duplicate of `comm` (the caller keeps its own handle).
std::unique_ptr<MpiCommunicator> make_mpi_communicator_dup(MPI_Comm comm, const std::string& name);

// Tests only: the largest element count one MPI call may carry (default INT_MAX), so the
// piecewise paths for huge tensors can be exercised with small ones. Not thread-safe.
void mpi_set_max_count_for_testing(int64_t max_count);
int64_t mpi_max_count();

}  // namespace vgen
