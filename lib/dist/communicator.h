// Communicator: the collectives the parallel code uses, for one group of ranks.
// MPI backend for host tensors (CPU path); NCCL backend for device tensors (GPU path).
// All calls are collective over the group unless marked point-to-point; chunked collectives split
// the tensor's flat buffer into size() equal contiguous chunks, in group-rank order.
#pragma once
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace vgen {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // recv chunk i = send chunk rank() of peer i. send.numel() == recv.numel(), divisible by size().
  virtual void all_to_all(const Tensor& send, Tensor& recv) = 0;
  // recv = concat over peers (group-rank order) of their send; recv.numel() == size()*send.numel().
  virtual void all_gather(const Tensor& send, Tensor& recv) = 0;
  // Variable-size gather: recv = concat of each peer's send (counts in elements, per peer).
  virtual void all_gather_v(const Tensor& send, Tensor& recv, const std::vector<int64_t>& counts) = 0;
  // recv = chunk rank() of the elementwise sum over peers (f32 only).
  virtual void reduce_scatter(const Tensor& send, Tensor& recv) = 0;
  virtual void all_reduce_sum(Tensor& t) = 0;  // in place, f32 / i64
  virtual void all_reduce_max(Tensor& t) = 0;  // in place, f32 / i64
  virtual void broadcast(Tensor& t, int root) = 0;
  virtual void barrier() = 0;

  // Point-to-point (peer = group rank). sendrecv is deadlock-free for any pairing.
  virtual void send(const Tensor& t, int peer, int tag = 0) = 0;
  virtual void recv(Tensor& t, int peer, int tag = 0) = 0;
  virtual void sendrecv(const Tensor& send, int dst, Tensor& recv, int src, int tag = 0) = 0;

  // Non-blocking exchange for overlap (Ring): start, then wait before touching the buffers.
  class Pending {
   public:
    virtual ~Pending() = default;
    virtual void wait() = 0;
  };
  virtual std::unique_ptr<Pending> start_sendrecv(const Tensor& send, int dst, Tensor& recv, int src,
                                                  int tag = 0) = 0;
  // Non-blocking all_to_all (async Ulysses). The default runs the blocking collective and returns a
  // finished Pending; the NCCL backend queues it on its side stream after the compute stream's work.
  virtual std::unique_ptr<Pending> start_all_to_all(const Tensor& send, Tensor& recv) {
    all_to_all(send, recv);
    struct Done final : Pending {
      void wait() override {}
    };
    return std::make_unique<Done>();
  }
};

// A group of one rank: every collective is a local copy. Used when a mesh axis has size 1.
std::unique_ptr<Communicator> make_self_communicator();

}  // namespace vgen
