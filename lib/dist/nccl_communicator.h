// NCCL backend of Communicator for device tensors (CUDA builds; the file
// nccl_communicator_cuda.cpp is only compiled with the backend).
//
// Ordering: every collective and point-to-point call is queued on compute_stream() (core/cuda_stream.h)
// and returns without waiting for the GPU, so it is complete for any later work on that stream and
// for host copies (core/device_memory.h copies through the same stream). barrier() waits for the
// stream and then meets the other ranks (MPI_Barrier). start_sendrecv() and start_all_to_all() run on
// the communicator's side stream after the compute stream's current work; Pending::wait() makes the compute stream
// wait for it (no host block), and the Pending keeps both tensors alive until then.
// NCCL has no tags: point-to-point messages between one pair of ranks match in call order.
// Reductions take f32, bf16, f16 and i64; data movement any dtype. NVLS (multicast) is kept off:
// NCCL_NVLS_ENABLE=0 is set in the environment before the first communicator unless the user set it.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>

#include "dist/communicator.h"

struct ncclComm;  // ncclComm_t is `struct ncclComm*`
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

// Wraps an NCCL call: anything but ncclSuccess throws vgen::Error(kDistributed) naming the call,
// NCCL's error string and last error, the group rank, the world rank and the host.
#define VGEN_NCCL_CHECK(call, comm_name, group_rank) \
  ::vgen::nccl_check(static_cast<int>(call), #call, comm_name, group_rank)

namespace vgen {

void nccl_check(int result, const char* what, const std::string& comm_name, int group_rank);

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `comm` (not taken: it is duplicated). Group rank 0 creates the NCCL unique id,
  // MPI_Bcast hands it to the others, each rank joins with the current CUDA device (one device per
  // rank, selected before, e.g. by select_local_device). `name` labels errors.
  NcclCommunicator(MPI_Comm comm, std::string name);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const { return name_; }
  ncclComm* nccl_comm() const { return comm_; }
  cudaStream_t side_stream() const { return side_; }

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
  std::unique_ptr<Pending> start_all_to_all(const Tensor& send, Tensor& recv) override;

  // Throws kDistributed if NCCL reported an asynchronous error (e.g. a peer failed).
  void check_async_error();
  // The same as text ("" when none); thread-safe, polled by the watchdog thread (dist/watchdog.h).
  std::string async_error_text() const;

 private:
  void all_reduce(Tensor& t, int op, const char* what);
  void all_to_all_on(const Tensor& send, Tensor& recv, cudaStream_t stream);
  // Queues `queue` (NCCL calls on side_) after the compute stream's current work; the Pending keeps
  // send/recv alive until the compute stream is ordered after it.
  std::unique_ptr<Pending> start_on_side(const Tensor& send, Tensor& recv, const std::function<void()>& queue);
  void check_device(const Tensor& t, const char* op, const char* arg) const;
  void check_peer(int peer, const char* op) const;

  MPI_Comm mpi_ = MPI_COMM_NULL;
  std::string name_;
  int rank_ = 0;
  int size_ = 1;
  ncclComm* comm_ = nullptr;
  cudaStream_t side_ = nullptr;
  int wait_group_ = -1;     // entry in the watchdog's group registry (core/wait_marker.h)
  int watchdog_id_ = -1;    // registration with the watchdog (async errors, abort)
};

}  // namespace vgen
