// MPI backend for host tensors. f32 sums are computed in group-rank order (all-to-all, local
// sum, all-gather), so every rank gets bit-identical results whatever algorithm MPI picks
// (DESIGN 7.2: a reduction that differs across ranks silently desynchronises them).
#include "dist/mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/wait_marker.h"

namespace vgen {

void mpi_check(int rc, const char* what, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) std::snprintf(msg, sizeof(msg), "MPI error %d", rc);
  VGEN_THROW(ExitCode::kDistributed, "{} failed ({}:{}): {}", what, file, line, msg);
}

namespace {

int64_t g_max_count = INT_MAX;
// Below this many gathered elements an f32 all-reduce is one all-gather plus a local sum.
constexpr int64_t kSmallAllReduce = 1 << 16;

MPI_Datatype mpi_type(DType dt) {
  switch (dt) {
    case DType::kF32: return MPI_FLOAT;
    case DType::kI64: return MPI_INT64_T;
    case DType::kBF16:
    case DType::kF16: return MPI_UINT16_T;
    case DType::kU8: return MPI_UINT8_T;
    case DType::kI8: return MPI_INT8_T;
  }
  return MPI_BYTE;
}

char* bytes_of(Tensor& t) { return static_cast<char*>(t.raw()); }
const char* bytes_of(const Tensor& t) { return static_cast<const char*>(t.raw()); }
// MPI takes non-const send buffers in older headers; the data is never written.
void* send_ptr(const Tensor& t, int64_t elem_offset) {
  return const_cast<char*>(bytes_of(t)) + elem_offset * int64_t(dtype_size(t.dtype()));
}
void* recv_ptr(Tensor& t, int64_t elem_offset) {
  return bytes_of(t) + elem_offset * int64_t(dtype_size(t.dtype()));
}

// `count` elements of `base` with extent `extent_bytes`: a collective with count 1 then takes
// one piece from each peer's block, the blocks being `extent_bytes` apart.
class PieceType {
 public:
  PieceType(int64_t count, MPI_Datatype base, int64_t extent_bytes) {
    MPI_Datatype contig;
    VGEN_MPI_CHECK(MPI_Type_contiguous(int(count), base, &contig));
    VGEN_MPI_CHECK(MPI_Type_create_resized(contig, 0, MPI_Aint(extent_bytes), &type_));
    VGEN_MPI_CHECK(MPI_Type_commit(&type_));
    MPI_Type_free(&contig);
  }
  ~PieceType() { MPI_Type_free(&type_); }
  PieceType(const PieceType&) = delete;
  PieceType& operator=(const PieceType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

template <typename T>
void sum_blocks(const T* blocks, int num_blocks, int64_t n, T* out) {  // blocks: [num_blocks, n]
  for (int64_t j = 0; j < n; ++j) out[j] = blocks[j];
  for (int b = 1; b < num_blocks; ++b) {
    const T* src = blocks + int64_t(b) * n;
    for (int64_t j = 0; j < n; ++j) out[j] += src[j];
  }
}

void sum_blocks_any(const Tensor& blocks, int num_blocks, int64_t n, Tensor& out) {
  if (out.dtype() == DType::kF32) {
    sum_blocks(blocks.data<float>(), num_blocks, n, out.data<float>());
  } else {
    sum_blocks(blocks.data<int64_t>(), num_blocks, n, out.data<int64_t>());
  }
}

class MpiPending : public Communicator::Pending {
 public:
  MpiPending(std::vector<MPI_Request> reqs, std::vector<int64_t> recv_counts, Tensor send, Tensor recv,
             std::string what, const std::string& group, int wait_group)
      : reqs_(std::move(reqs)),
        recv_counts_(std::move(recv_counts)),
        send_(std::move(send)),
        recv_(std::move(recv)),
        what_(std::move(what)),
        group_(group),
        wait_group_(wait_group) {}
  ~MpiPending() override {
    if (done_) return;
    // Never leave a request in flight over buffers that may be freed; errors cannot throw here.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Waitall(int(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  }
  void wait() override {
    if (done_) return;
    done_ = true;
    std::vector<MPI_Status> st(reqs_.size());
    int rc;
    {
      WaitScope wait(WaitOp::kPendingWait, WaitBackend::kMpi, group_.c_str(), wait_group_);
      rc = MPI_Waitall(int(reqs_.size()), reqs_.data(), st.data());
    }
    if (rc == MPI_ERR_IN_STATUS) {
      for (auto& s : st)
        if (s.MPI_ERROR != MPI_SUCCESS) rc = s.MPI_ERROR;
    }
    mpi_check(rc, what_.c_str(), __FILE__, __LINE__);
    // The receives are the first recv_counts_.size() requests; a short message is a size mismatch.
    for (size_t i = 0; i < recv_counts_.size(); ++i) {
      int got = 0;
      VGEN_MPI_CHECK(MPI_Get_count(&st[i], mpi_type(recv_.dtype()), &got));
      VGEN_CHECK(got == recv_counts_[i], ExitCode::kInternal,
                 "{}: expected {} elements in piece {}, received {} (sender's tensor has another size)",
                 what_, recv_counts_[i], i, got);
    }
  }

 private:
  std::vector<MPI_Request> reqs_;
  std::vector<int64_t> recv_counts_;
  Tensor send_, recv_;  // keep the buffers alive until completion
  std::string what_;
  std::string group_;
  int wait_group_;
  bool done_ = false;
};

}  // namespace

void mpi_set_max_count_for_testing(int64_t max_count) {
  g_max_count = max_count < 1 ? 1 : (max_count > INT_MAX ? INT_MAX : max_count);
}
int64_t mpi_max_count() { return g_max_count; }

// Marks a blocking call of this group for the watchdog (core/wait_marker.h).
#define VGEN_MPI_WAIT(op) WaitScope wait_scope(WaitOp::op, WaitBackend::kMpi, name_.c_str(), wait_group_)

// Error text names the group and this rank's place in it.
#define VGEN_MPI_GROUP_CHECK(call) group_check((call), #call, __FILE__, __LINE__)

void MpiCommunicator::group_check(int rc, const char* call, const char* file, int line) const {
  if (rc == MPI_SUCCESS) return;
  mpi_check(rc, fmt::format("{} on group '{}' (rank {} of {})", call, name_, rank_, size_).c_str(), file, line);
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, std::string name) : comm_(comm), name_(std::move(name)) {
  VGEN_ASSERT(comm_ != MPI_COMM_NULL, "null MPI communicator for group '{}'", name_);
  VGEN_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  VGEN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  VGEN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  wait_group_ = mpi_wait_group(comm_, name_);
}

int mpi_wait_group(MPI_Comm comm, const std::string& name) {
  int size = 1;
  VGEN_MPI_CHECK(MPI_Comm_size(comm, &size));
  MPI_Group group, world;
  std::vector<int> group_ranks(static_cast<size_t>(size)), world_ranks(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) group_ranks[size_t(i)] = i;
  VGEN_MPI_CHECK(MPI_Comm_group(comm, &group));
  VGEN_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  const int rc = MPI_Group_translate_ranks(group, size, group_ranks.data(), world, world_ranks.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  VGEN_MPI_CHECK(rc);
  return wait_group_register(name, std::move(world_ranks));
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_SELF && comm_ != MPI_COMM_NULL)
    MPI_Comm_free(&comm_);
}

std::unique_ptr<MpiCommunicator> make_mpi_communicator_dup(MPI_Comm comm, const std::string& name) {
  MPI_Comm dup;
  {
    WaitScope wait(WaitOp::kCommCreate, WaitBackend::kMpi, name.c_str());
    VGEN_MPI_CHECK(MPI_Comm_dup(comm, &dup));
  }
  return std::make_unique<MpiCommunicator>(dup, name);
}

void MpiCommunicator::check_host(const Tensor& t, const char* op, const char* arg) const {
  VGEN_CHECK(t.defined(), ExitCode::kInternal, "{} on group '{}': {} tensor is undefined", op, name_, arg);
  VGEN_CHECK(t.is_cpu(), ExitCode::kInternal,
             "{} on group '{}': {} tensor {} is on the device; the MPI backend moves host tensors only "
             "(device tensors need the NCCL communicator)",
             op, name_, arg, t.str());
}

void MpiCommunicator::check_peer(int peer, const char* op) const {
  VGEN_CHECK(peer >= 0 && peer < size_, ExitCode::kInternal, "{} on group '{}': peer {} outside 0..{}", op,
             name_, peer, size_ - 1);
}

void MpiCommunicator::all_to_all(const Tensor& send, Tensor& recv) {
  VGEN_MPI_WAIT(kAllToAll);
  check_host(send, "all_to_all", "send");
  check_host(recv, "all_to_all", "recv");
  VGEN_CHECK(send.dtype() == recv.dtype() && send.numel() == recv.numel() && send.numel() % size_ == 0,
             ExitCode::kInternal, "all_to_all on group '{}': send {} and recv {} must match and divide by {}",
             name_, send.str(), recv.str(), size_);
  const int64_t chunk = send.numel() / size_;
  const MPI_Datatype ty = mpi_type(send.dtype());
  if (chunk <= g_max_count) {
    VGEN_MPI_GROUP_CHECK(MPI_Alltoall(send_ptr(send, 0), int(chunk), ty, recv_ptr(recv, 0), int(chunk), ty, comm_));
    return;
  }
  const int64_t extent = chunk * int64_t(dtype_size(send.dtype()));
  for (int64_t off = 0; off < chunk; off += g_max_count) {
    PieceType piece(std::min(g_max_count, chunk - off), ty, extent);
    VGEN_MPI_GROUP_CHECK(
        MPI_Alltoall(send_ptr(send, off), 1, piece.get(), recv_ptr(recv, off), 1, piece.get(), comm_));
  }
}

void MpiCommunicator::all_gather(const Tensor& send, Tensor& recv) {
  VGEN_MPI_WAIT(kAllGather);
  check_host(send, "all_gather", "send");
  check_host(recv, "all_gather", "recv");
  VGEN_CHECK(send.dtype() == recv.dtype() && recv.numel() == send.numel() * size_, ExitCode::kInternal,
             "all_gather on group '{}': recv {} must hold {} × send {}", name_, recv.str(), size_, send.str());
  const int64_t n = send.numel();
  const MPI_Datatype ty = mpi_type(send.dtype());
  if (n <= g_max_count) {
    VGEN_MPI_GROUP_CHECK(MPI_Allgather(send_ptr(send, 0), int(n), ty, recv_ptr(recv, 0), int(n), ty, comm_));
    return;
  }
  const int64_t extent = n * int64_t(dtype_size(send.dtype()));
  for (int64_t off = 0; off < n; off += g_max_count) {
    const int64_t c = std::min(g_max_count, n - off);
    PieceType piece(c, ty, extent);
    VGEN_MPI_GROUP_CHECK(MPI_Allgather(send_ptr(send, off), int(c), ty, recv_ptr(recv, off), 1, piece.get(), comm_));
  }
}

void MpiCommunicator::all_gather_v(const Tensor& send, Tensor& recv, const std::vector<int64_t>& counts) {
  VGEN_MPI_WAIT(kAllGatherV);
  check_host(send, "all_gather_v", "send");
  check_host(recv, "all_gather_v", "recv");
  VGEN_CHECK(int(counts.size()) == size_, ExitCode::kInternal,
             "all_gather_v on group '{}': {} counts for {} ranks", name_, counts.size(), size_);
  std::vector<int64_t> displs(size_ + 1, 0);
  for (int i = 0; i < size_; ++i) {
    VGEN_CHECK(counts[i] >= 0, ExitCode::kInternal, "all_gather_v on group '{}': negative count", name_);
    displs[i + 1] = displs[i] + counts[i];
  }
  VGEN_CHECK(send.dtype() == recv.dtype() && send.numel() == counts[rank_] && recv.numel() == displs[size_],
             ExitCode::kInternal,
             "all_gather_v on group '{}': send {} must hold counts[{}] = {} and recv {} their sum {}", name_,
             send.str(), rank_, counts[rank_], recv.str(), displs[size_]);
  const MPI_Datatype ty = mpi_type(send.dtype());
  if (displs[size_] <= g_max_count) {
    std::vector<int> c(size_), d(size_);
    for (int i = 0; i < size_; ++i) {
      c[i] = int(counts[i]);
      d[i] = int(displs[i]);
    }
    VGEN_MPI_GROUP_CHECK(
        MPI_Allgatherv(send_ptr(send, 0), c[rank_], ty, recv_ptr(recv, 0), c.data(), d.data(), ty, comm_));
    return;
  }
  // Huge: each rank broadcasts its block in pieces straight into its place in recv.
  std::memcpy(recv_ptr(recv, displs[rank_]), send_ptr(send, 0), send.nbytes());
  for (int root = 0; root < size_; ++root) {
    for (int64_t off = 0; off < counts[root]; off += g_max_count) {
      const int64_t c = std::min(g_max_count, counts[root] - off);
      VGEN_MPI_GROUP_CHECK(MPI_Bcast(recv_ptr(recv, displs[root] + off), int(c), ty, root, comm_));
    }
  }
}

void MpiCommunicator::reduce_scatter(const Tensor& send, Tensor& recv) {
  VGEN_MPI_WAIT(kReduceScatter);
  check_host(send, "reduce_scatter", "send");
  check_host(recv, "reduce_scatter", "recv");
  VGEN_CHECK(send.dtype() == recv.dtype() && (send.dtype() == DType::kF32 || send.dtype() == DType::kI64) &&
                 send.numel() == recv.numel() * size_,
             ExitCode::kInternal, "reduce_scatter on group '{}': send {} must hold {} × recv {} (f32 or i64)",
             name_, send.str(), size_, recv.str());
  // Chunk r of every peer arrives here in group-rank order and is summed in that order.
  Tensor blocks = Tensor::empty({send.numel()}, send.dtype());  // [P, n]
  all_to_all(send, blocks);
  sum_blocks_any(blocks, size_, recv.numel(), recv);
}

void MpiCommunicator::all_reduce(Tensor& t, MPI_Op op, const char* what) {
  VGEN_MPI_WAIT(kAllReduce);
  check_host(t, what, "in-out");
  VGEN_CHECK(t.dtype() == DType::kF32 || t.dtype() == DType::kI64, ExitCode::kInternal,
             "{} on group '{}': {} must be f32 or i64", what, name_, t.str());
  const MPI_Datatype ty = mpi_type(t.dtype());
  for (int64_t off = 0; off < t.numel(); off += g_max_count) {
    const int64_t c = std::min(g_max_count, t.numel() - off);
    VGEN_MPI_GROUP_CHECK(MPI_Allreduce(MPI_IN_PLACE, recv_ptr(t, off), int(c), ty, op, comm_));
  }
}

void MpiCommunicator::all_reduce_sum(Tensor& t) {
  VGEN_MPI_WAIT(kAllReduce);
  // Integer sums are exact in any order; f32 sums go in group-rank order (file comment).
  if (size_ == 1 || t.dtype() != DType::kF32) {
    all_reduce(t, MPI_SUM, "all_reduce_sum");
    return;
  }
  check_host(t, "all_reduce_sum", "in-out");
  const int64_t n = t.numel();
  if (n * size_ <= kSmallAllReduce) {
    Tensor all = Tensor::empty({n * size_}, DType::kF32);  // [P, n]
    all_gather(t.reshape({n}), all);
    sum_blocks_any(all, size_, n, t);
    return;
  }
  const int64_t chunk = (n + size_ - 1) / size_;
  Tensor padded = Tensor::zeros({chunk * size_}, DType::kF32);  // [P, chunk]
  std::memcpy(padded.raw(), t.raw(), t.nbytes());
  Tensor mine = Tensor::empty({chunk}, DType::kF32);
  reduce_scatter(padded, mine);
  all_gather(mine, padded);
  std::memcpy(t.raw(), padded.raw(), t.nbytes());
}

void MpiCommunicator::all_reduce_max(Tensor& t) { all_reduce(t, MPI_MAX, "all_reduce_max"); }

void MpiCommunicator::broadcast(Tensor& t, int root) {
  VGEN_MPI_WAIT(kBroadcast);
  check_host(t, "broadcast", "in-out");
  check_peer(root, "broadcast");
  const MPI_Datatype ty = mpi_type(t.dtype());
  for (int64_t off = 0; off < t.numel(); off += g_max_count) {
    const int64_t c = std::min(g_max_count, t.numel() - off);
    VGEN_MPI_GROUP_CHECK(MPI_Bcast(recv_ptr(t, off), int(c), ty, root, comm_));
  }
  if (t.numel() == 0) VGEN_MPI_GROUP_CHECK(MPI_Bcast(recv_ptr(t, 0), 0, ty, root, comm_));
}

void MpiCommunicator::barrier() {
  VGEN_MPI_WAIT(kBarrier);
  VGEN_MPI_GROUP_CHECK(MPI_Barrier(comm_));
}

void MpiCommunicator::send(const Tensor& t, int peer, int tag) {
  VGEN_MPI_WAIT(kSend);
  check_host(t, "send", "send");
  check_peer(peer, "send");
  const MPI_Datatype ty = mpi_type(t.dtype());
  int64_t off = 0;
  do {  // a zero-size tensor still sends one empty message, matching recv
    const int64_t c = std::min(g_max_count, t.numel() - off);
    VGEN_MPI_GROUP_CHECK(MPI_Send(send_ptr(t, off), int(c), ty, peer, tag, comm_));
    off += c;
  } while (off < t.numel());
}

void MpiCommunicator::recv(Tensor& t, int peer, int tag) {
  VGEN_MPI_WAIT(kRecv);
  check_host(t, "recv", "recv");
  check_peer(peer, "recv");
  const MPI_Datatype ty = mpi_type(t.dtype());
  int64_t off = 0;
  do {
    const int64_t c = std::min(g_max_count, t.numel() - off);
    MPI_Status st;
    VGEN_MPI_GROUP_CHECK(MPI_Recv(recv_ptr(t, off), int(c), ty, peer, tag, comm_, &st));
    int got = 0;
    VGEN_MPI_CHECK(MPI_Get_count(&st, ty, &got));
    VGEN_CHECK(got == c, ExitCode::kInternal,
               "recv on group '{}' from peer {}: expected {} elements for {}, received {}", name_, peer, c,
               t.str(), got);
    off += c;
  } while (off < t.numel());
}

void MpiCommunicator::sendrecv(const Tensor& send, int dst, Tensor& recv, int src, int tag) {
  VGEN_MPI_WAIT(kSendRecv);
  start_sendrecv(send, dst, recv, src, tag)->wait();
}

std::unique_ptr<Communicator::Pending> MpiCommunicator::start_sendrecv(const Tensor& send, int dst, Tensor& recv,
                                                                       int src, int tag) {
  check_host(send, "sendrecv", "send");
  check_host(recv, "sendrecv", "recv");
  check_peer(dst, "sendrecv");
  check_peer(src, "sendrecv");
  VGEN_CHECK(send.dtype() == recv.dtype(), ExitCode::kInternal, "sendrecv on group '{}': send {} vs recv {}",
             name_, send.str(), recv.str());
  const MPI_Datatype ty = mpi_type(send.dtype());
  std::vector<MPI_Request> reqs;
  std::vector<int64_t> recv_counts;
  // Receives first (their statuses are checked by index), then sends; same piecing as send/recv.
  int64_t off = 0;
  do {
    const int64_t c = std::min(g_max_count, recv.numel() - off);
    reqs.emplace_back();
    VGEN_MPI_GROUP_CHECK(MPI_Irecv(recv_ptr(recv, off), int(c), ty, src, tag, comm_, &reqs.back()));
    recv_counts.push_back(c);
    off += c;
  } while (off < recv.numel());
  off = 0;
  do {
    const int64_t c = std::min(g_max_count, send.numel() - off);
    reqs.emplace_back();
    VGEN_MPI_GROUP_CHECK(MPI_Isend(send_ptr(send, off), int(c), ty, dst, tag, comm_, &reqs.back()));
    off += c;
  } while (off < send.numel());
  return std::make_unique<MpiPending>(std::move(reqs), std::move(recv_counts), send, recv,
                                      fmt::format("sendrecv on group '{}' (send to {}, recv from {})", name_,
                                                  dst, src),
                                      name_, wait_group_);
}

}  // namespace vgen
