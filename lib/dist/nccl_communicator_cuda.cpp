#include "dist/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>

#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/wait_marker.h"
#include "dist/mpi_communicator.h"
#include "dist/watchdog.h"

namespace vgen {

void nccl_check(int result, const char* what, const std::string& comm_name, int group_rank) {
  if (result == int(ncclSuccess)) return;
  const char* last = ncclGetLastError(nullptr);
  VGEN_THROW(ExitCode::kDistributed, "NCCL {} failed in communicator '{}' (group rank {}, world rank {}, host {}): {}{}{}",
             what, comm_name, group_rank, process_rank(), process_host(), ncclGetErrorString(ncclResult_t(result)),
             last && *last ? " — " : "", last ? last : "");
}

#define NCCL_OK(call) VGEN_NCCL_CHECK(call, name_, rank_)
// Marks a call of this group for the watchdog: queued calls return at once, but connection setup
// and a full queue block the host.
#define NCCL_WAIT(op) WaitScope wait_scope(WaitOp::op, WaitBackend::kNccl, name_.c_str(), wait_group_)

namespace {

ncclDataType_t reduce_type(const Tensor& t, const char* op) {
  switch (t.dtype()) {
    case DType::kF32: return ncclFloat32;
    case DType::kBF16: return ncclBfloat16;
    case DType::kF16: return ncclFloat16;
    case DType::kI64: return ncclInt64;
    default: break;
  }
  VGEN_THROW(ExitCode::kInternal, "NcclCommunicator::{}: cannot reduce {}", op, t.str());
}

const char* bytes_of(const Tensor& t) { return static_cast<const char*>(t.raw()); }
char* bytes_of(Tensor& t) { return static_cast<char*>(t.raw()); }

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) VGEN_THROW(ExitCode::kDistributed, "{} failed: {}", what, cudaGetErrorString(e));
}

// Point-to-point calls of one exchange go between ncclGroupStart and ncclGroupEnd; the group is
// always closed, and the first failure is reported afterwards.
class NcclGroup {
 public:
  NcclGroup(const std::string& name, int rank) : name_(name), rank_(rank) { NCCL_OK(ncclGroupStart()); }
  void add(ncclResult_t r, const char* what) {
    if (r != ncclSuccess && first_ == ncclSuccess) {
      first_ = r;
      what_ = what;
    }
  }
  void end() {
    ncclResult_t r = ncclGroupEnd();
    ended_ = true;
    if (first_ != ncclSuccess) nccl_check(int(first_), what_, name_, rank_);
    NCCL_OK(r);
  }
  ~NcclGroup() {
    if (!ended_) ncclGroupEnd();
  }

 private:
  const std::string& name_;
  int rank_;
  ncclResult_t first_ = ncclSuccess;
  const char* what_ = "";
  bool ended_ = false;
};

class NcclPending final : public Communicator::Pending {
 public:
  NcclPending(cudaEvent_t done, Tensor send, Tensor recv)
      : done_(done), send_(std::move(send)), recv_(std::move(recv)) {}
  ~NcclPending() override {
    if (!waited_) cudaStreamWaitEvent(compute_stream(), done_, 0);  // keep the buffers' reuse ordered
    cudaEventDestroy(done_);
  }
  void wait() override {
    if (waited_) return;
    VGEN_CUDA_CHECK(cudaStreamWaitEvent(compute_stream(), done_, 0));
    waited_ = true;
  }

 private:
  cudaEvent_t done_;
  Tensor send_, recv_;  // alive until the compute stream is ordered after the exchange
  bool waited_ = false;
};

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm comm, std::string name) : name_(std::move(name)) {
  VGEN_MPI_CHECK(MPI_Comm_dup(comm, &mpi_));
  VGEN_MPI_CHECK(MPI_Comm_rank(mpi_, &rank_));
  VGEN_MPI_CHECK(MPI_Comm_size(mpi_, &size_));
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // keep NVLink multicast off unless the user decided otherwise

  // Rank 0 creates the id; the flag lets every rank fail together if it could not.
  struct {
    int ok;
    ncclUniqueId id;
  } boot;
  std::memset(&boot, 0, sizeof(boot));
  ncclResult_t id_result = ncclSuccess;
  if (rank_ == 0) {
    id_result = ncclGetUniqueId(&boot.id);
    boot.ok = id_result == ncclSuccess;
  }
  wait_group_ = mpi_wait_group(mpi_, name_);
  NCCL_WAIT(kCommCreate);
  VGEN_MPI_CHECK(MPI_Bcast(&boot, int(sizeof(boot)), MPI_BYTE, 0, mpi_));
  if (rank_ == 0) NCCL_OK(id_result);
  VGEN_CHECK(boot.ok, ExitCode::kDistributed, "NCCL communicator '{}': group rank 0 could not create the unique id",
             name_);
  NCCL_OK(ncclCommInitRank(&comm_, size_, boot.id, rank_));
  ncclComm* handle = comm_;
  watchdog_id_ = watchdog_add_communicator([this] { return async_error_text(); }, [handle] { ncclCommAbort(handle); });
  int lo = 0, hi = 0;
  cuda_ok(cudaDeviceGetStreamPriorityRange(&lo, &hi), "cudaDeviceGetStreamPriorityRange");
  cuda_ok(cudaStreamCreateWithPriority(&side_, cudaStreamNonBlocking, hi), "cudaStreamCreateWithPriority");
}

NcclCommunicator::~NcclCommunicator() {
  if (watchdog_id_ >= 0) watchdog_remove_communicator(watchdog_id_);
  if (side_) cudaStreamSynchronize(side_);
  if (comm_) ncclCommDestroy(comm_);
  if (side_) cudaStreamDestroy(side_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
}

void NcclCommunicator::check_device(const Tensor& t, const char* op, const char* arg) const {
  VGEN_CHECK(t.defined() && t.device() == Device::kCUDA, ExitCode::kInternal,
             "NcclCommunicator '{}'::{}: {} must be a device tensor, got {}", name_, op, arg,
             t.defined() ? t.str() : std::string("undefined"));
}

void NcclCommunicator::check_peer(int peer, const char* op) const {
  VGEN_CHECK(peer >= 0 && peer < size_, ExitCode::kInternal, "NcclCommunicator '{}'::{}: peer {} outside [0, {})",
             name_, op, peer, size_);
}

std::string NcclCommunicator::async_error_text() const {
  ncclResult_t async = ncclSuccess;
  if (!comm_) return "";
  ncclResult_t r = ncclCommGetAsyncError(comm_, &async);
  if (r == ncclSuccess && (async == ncclSuccess || async == ncclInProgress)) return "";
  const ncclResult_t e = r != ncclSuccess ? r : async;
  const char* last = ncclGetLastError(comm_);
  return fmt::format("NCCL asynchronous error in communicator '{}' (group rank {}, world rank {}, host {}): {}{}{}",
                     name_, rank_, process_rank(), process_host(), ncclGetErrorString(e), last && *last ? " — " : "",
                     last ? last : "");
}

void NcclCommunicator::check_async_error() {
  ncclResult_t async = ncclSuccess;
  NCCL_OK(ncclCommGetAsyncError(comm_, &async));
  if (async != ncclSuccess && async != ncclInProgress) NCCL_OK(async);
}

void NcclCommunicator::all_to_all(const Tensor& send, Tensor& recv) { all_to_all_on(send, recv, compute_stream()); }

void NcclCommunicator::all_to_all_on(const Tensor& send, Tensor& recv, cudaStream_t st) {
  NCCL_WAIT(kAllToAll);
  check_device(send, "all_to_all", "send");
  check_device(recv, "all_to_all", "recv");
  VGEN_CHECK(send.numel() == recv.numel() && send.dtype() == recv.dtype() && send.numel() % size_ == 0 &&
                 send.raw() != recv.raw(),
             ExitCode::kInternal, "NcclCommunicator '{}'::all_to_all: send {} recv {} (size {})", name_, send.str(),
             recv.str(), size_);
  const size_t chunk = send.nbytes() / size_t(size_);
  NcclGroup g(name_, rank_);
  for (int p = 0; p < size_; ++p) {
    g.add(ncclSend(bytes_of(send) + p * chunk, chunk, ncclUint8, p, comm_, st), "ncclSend");
    g.add(ncclRecv(bytes_of(recv) + p * chunk, chunk, ncclUint8, p, comm_, st), "ncclRecv");
  }
  g.end();
}

void NcclCommunicator::all_gather(const Tensor& send, Tensor& recv) {
  NCCL_WAIT(kAllGather);
  check_device(send, "all_gather", "send");
  check_device(recv, "all_gather", "recv");
  VGEN_CHECK(recv.numel() == send.numel() * size_ && send.dtype() == recv.dtype(), ExitCode::kInternal,
             "NcclCommunicator '{}'::all_gather: send {} recv {} (size {})", name_, send.str(), recv.str(), size_);
  NCCL_OK(ncclAllGather(send.raw(), recv.raw(), send.nbytes(), ncclUint8, comm_, compute_stream()));
}

void NcclCommunicator::all_gather_v(const Tensor& send, Tensor& recv, const std::vector<int64_t>& counts) {
  NCCL_WAIT(kAllGatherV);
  check_device(send, "all_gather_v", "send");
  check_device(recv, "all_gather_v", "recv");
  VGEN_CHECK(int(counts.size()) == size_ && send.dtype() == recv.dtype() && send.numel() == counts[size_t(rank_)] &&
                 recv.numel() == std::accumulate(counts.begin(), counts.end(), int64_t(0)),
             ExitCode::kInternal, "NcclCommunicator '{}'::all_gather_v: send {} recv {} with {} counts", name_,
             send.str(), recv.str(), counts.size());
  const size_t es = dtype_size(send.dtype());
  cudaStream_t st = compute_stream();
  std::vector<size_t> offset(size_t(size_), 0);
  for (int p = 1; p < size_; ++p) offset[size_t(p)] = offset[size_t(p - 1)] + size_t(counts[size_t(p - 1)]) * es;
  if (send.nbytes())
    cuda_ok(cudaMemcpyAsync(bytes_of(recv) + offset[size_t(rank_)], send.raw(), send.nbytes(), cudaMemcpyDeviceToDevice,
                            st),
            "all_gather_v local copy");
  NcclGroup g(name_, rank_);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    if (send.nbytes()) g.add(ncclSend(send.raw(), send.nbytes(), ncclUint8, p, comm_, st), "ncclSend");
    const size_t n = size_t(counts[size_t(p)]) * es;
    if (n) g.add(ncclRecv(bytes_of(recv) + offset[size_t(p)], n, ncclUint8, p, comm_, st), "ncclRecv");
  }
  g.end();
}

void NcclCommunicator::reduce_scatter(const Tensor& send, Tensor& recv) {
  NCCL_WAIT(kReduceScatter);
  check_device(send, "reduce_scatter", "send");
  check_device(recv, "reduce_scatter", "recv");
  VGEN_CHECK(send.numel() == recv.numel() * size_ && send.dtype() == recv.dtype(), ExitCode::kInternal,
             "NcclCommunicator '{}'::reduce_scatter: send {} recv {} (size {})", name_, send.str(), recv.str(), size_);
  NCCL_OK(ncclReduceScatter(send.raw(), recv.raw(), size_t(recv.numel()), reduce_type(send, "reduce_scatter"), ncclSum,
                            comm_, compute_stream()));
}

void NcclCommunicator::all_reduce(Tensor& t, int op, const char* what) {
  NCCL_WAIT(kAllReduce);
  check_device(t, what, "t");
  NCCL_OK(ncclAllReduce(t.raw(), t.raw(), size_t(t.numel()), reduce_type(t, what), ncclRedOp_t(op), comm_,
                        compute_stream()));
}
void NcclCommunicator::all_reduce_sum(Tensor& t) { all_reduce(t, int(ncclSum), "all_reduce_sum"); }
void NcclCommunicator::all_reduce_max(Tensor& t) { all_reduce(t, int(ncclMax), "all_reduce_max"); }

void NcclCommunicator::broadcast(Tensor& t, int root) {
  NCCL_WAIT(kBroadcast);
  check_device(t, "broadcast", "t");
  check_peer(root, "broadcast");
  NCCL_OK(ncclBroadcast(t.raw(), t.raw(), t.nbytes(), ncclUint8, root, comm_, compute_stream()));
}

void NcclCommunicator::barrier() {
  NCCL_WAIT(kBarrier);
  check_async_error();
  cuda_ok(cudaStreamSynchronize(compute_stream()), "barrier: cudaStreamSynchronize");
  VGEN_MPI_CHECK(MPI_Barrier(mpi_));
}

void NcclCommunicator::send(const Tensor& t, int peer, int /*tag*/) {
  NCCL_WAIT(kSend);
  check_device(t, "send", "t");
  check_peer(peer, "send");
  NCCL_OK(ncclSend(t.raw(), t.nbytes(), ncclUint8, peer, comm_, compute_stream()));
}

void NcclCommunicator::recv(Tensor& t, int peer, int /*tag*/) {
  NCCL_WAIT(kRecv);
  check_device(t, "recv", "t");
  check_peer(peer, "recv");
  NCCL_OK(ncclRecv(t.raw(), t.nbytes(), ncclUint8, peer, comm_, compute_stream()));
}

void NcclCommunicator::sendrecv(const Tensor& send, int dst, Tensor& recv, int src, int /*tag*/) {
  NCCL_WAIT(kSendRecv);
  check_device(send, "sendrecv", "send");
  check_device(recv, "sendrecv", "recv");
  check_peer(dst, "sendrecv");
  check_peer(src, "sendrecv");
  cudaStream_t st = compute_stream();
  NcclGroup g(name_, rank_);
  g.add(ncclSend(send.raw(), send.nbytes(), ncclUint8, dst, comm_, st), "ncclSend");
  g.add(ncclRecv(recv.raw(), recv.nbytes(), ncclUint8, src, comm_, st), "ncclRecv");
  g.end();
}

std::unique_ptr<Communicator::Pending> NcclCommunicator::start_on_side(const Tensor& send, Tensor& recv,
                                                                       const std::function<void()>& queue) {
  // The side stream starts after the work already queued on the compute stream (which produced `send`).
  cudaEvent_t ready = nullptr, done = nullptr;
  cuda_ok(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
  cuda_ok(cudaEventRecord(ready, compute_stream()), "cudaEventRecord");
  cudaError_t e = cudaStreamWaitEvent(side_, ready, 0);
  cudaEventDestroy(ready);
  cuda_ok(e, "cudaStreamWaitEvent");
  queue();
  cuda_ok(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
  e = cudaEventRecord(done, side_);
  if (e != cudaSuccess) {
    cudaEventDestroy(done);
    cuda_ok(e, "cudaEventRecord");
  }
  return std::make_unique<NcclPending>(done, send, recv);
}

std::unique_ptr<Communicator::Pending> NcclCommunicator::start_sendrecv(const Tensor& send, int dst, Tensor& recv,
                                                                        int src, int /*tag*/) {
  NCCL_WAIT(kSendRecv);
  check_device(send, "start_sendrecv", "send");
  check_device(recv, "start_sendrecv", "recv");
  check_peer(dst, "start_sendrecv");
  check_peer(src, "start_sendrecv");
  return start_on_side(send, recv, [&] {
    NcclGroup g(name_, rank_);
    g.add(ncclSend(send.raw(), send.nbytes(), ncclUint8, dst, comm_, side_), "ncclSend");
    g.add(ncclRecv(recv.raw(), recv.nbytes(), ncclUint8, src, comm_, side_), "ncclRecv");
    g.end();
  });
}

std::unique_ptr<Communicator::Pending> NcclCommunicator::start_all_to_all(const Tensor& send, Tensor& recv) {
  return start_on_side(send, recv, [&] { all_to_all_on(send, recv, side_); });
}

}  // namespace vgen
