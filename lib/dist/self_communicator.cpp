// A group of one rank: collectives are copies (host or device, through Tensor::copy_from).
// send to self queues a copy that a later recv with the same tag takes; a recv with nothing
// queued would deadlock on a real group, so it throws instead.
#include <deque>

#include "core/error.h"
#include "dist/communicator.h"

namespace vgen {
namespace {

void copy_into(Tensor& dst, const Tensor& src, const char* op) {
  VGEN_CHECK(dst.defined() && src.defined(), ExitCode::kInternal, "{} on a self group: undefined tensor", op);
  VGEN_CHECK(dst.dtype() == src.dtype() && dst.numel() == src.numel(), ExitCode::kInternal,
             "{} on a self group: recv {} does not match send {}", op, dst.str(), src.str());
  if (dst.raw() == src.raw() && dst.device() == src.device()) return;  // same buffer
  dst.copy_from(src);
}

void check_self(int peer, const char* op) {
  VGEN_CHECK(peer == 0, ExitCode::kInternal, "{} on a self group: peer {} (only rank 0 exists)", op, peer);
}

class NoPending : public Communicator::Pending {
 public:
  void wait() override {}
};

class SelfCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }

  void all_to_all(const Tensor& send, Tensor& recv) override { copy_into(recv, send, "all_to_all"); }
  void all_gather(const Tensor& send, Tensor& recv) override { copy_into(recv, send, "all_gather"); }
  void all_gather_v(const Tensor& send, Tensor& recv, const std::vector<int64_t>& counts) override {
    VGEN_CHECK(counts.size() == 1 && counts[0] == send.numel(), ExitCode::kInternal,
               "all_gather_v on a self group: counts must be [{}] for send {}", send.numel(), send.str());
    copy_into(recv, send, "all_gather_v");
  }
  void reduce_scatter(const Tensor& send, Tensor& recv) override { copy_into(recv, send, "reduce_scatter"); }
  void all_reduce_sum(Tensor& t) override { check_reducible(t, "all_reduce_sum"); }
  void all_reduce_max(Tensor& t) override { check_reducible(t, "all_reduce_max"); }
  void broadcast(Tensor& t, int root) override { check_self(root, "broadcast"); }
  void barrier() override {}

  void send(const Tensor& t, int peer, int tag) override {
    check_self(peer, "send");
    queue_.push_back({tag, t.clone()});
  }
  void recv(Tensor& t, int peer, int tag) override {
    check_self(peer, "recv");
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->tag != tag) continue;
      copy_into(t, it->data, "recv");
      queue_.erase(it);
      return;
    }
    VGEN_THROW(ExitCode::kInternal,
               "recv from self (tag {}) with no matching send queued: this would deadlock; use sendrecv",
               tag);
  }
  void sendrecv(const Tensor& send, int dst, Tensor& recv, int src, int tag) override {
    check_self(dst, "sendrecv");
    check_self(src, "sendrecv");
    copy_into(recv, send, "sendrecv");
  }
  std::unique_ptr<Pending> start_sendrecv(const Tensor& send, int dst, Tensor& recv, int src,
                                          int tag) override {
    sendrecv(send, dst, recv, src, tag);
    return std::make_unique<NoPending>();
  }

 private:
  static void check_reducible(const Tensor& t, const char* op) {
    VGEN_CHECK(t.defined() && (t.dtype() == DType::kF32 || t.dtype() == DType::kI64), ExitCode::kInternal,
               "{} on a self group: tensor must be f32 or i64", op);
  }
  struct Message {
    int tag;
    Tensor data;
  };
  std::deque<Message> queue_;
};

}  // namespace

std::unique_ptr<Communicator> make_self_communicator() { return std::make_unique<SelfCommunicator>(); }

}  // namespace vgen
