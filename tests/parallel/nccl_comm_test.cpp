// NcclCommunicator under mpirun (one GPU per rank): every collective and point-to-point call of
// the Communicator interface against values each rank can predict, on the world group and on
// MPI_Comm_split groups. Exact integers in f32/bf16/i64, so comparisons are exact.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "core/cuda_stream.h"
#include "core/error.h"
#include "dist/nccl_communicator.h"

using namespace vgen;

namespace {

int g_rank = 0, g_size = 1, g_local_rank = 0, g_local_size = 1, g_devices = 0;
bool g_gpus_ok = false;
std::unique_ptr<NcclCommunicator> g_world;

#define REQUIRE_GPUS()                                                                                   \
  do {                                                                                                   \
    if (!g_gpus_ok)                                                                                      \
      GTEST_SKIP() << "no CUDA device for every rank (" << g_local_size << " ranks on this host, " \
                   << g_devices << " devices)";                                                          \
  } while (0)

NcclCommunicator& world() {
  if (!g_world) g_world = std::make_unique<NcclCommunicator>(MPI_COMM_WORLD, "world");
  return *g_world;
}

Tensor dev(const std::vector<float>& v, DType dt = DType::kF32) {
  return Tensor::from_vector(v, {int64_t(v.size())}).to(dt).to(Device::kCUDA);
}
std::vector<float> host(const Tensor& t) {
  Tensor h = t.to(Device::kCPU).to(DType::kF32);
  std::vector<float> v(size_t(h.numel()));
  if (!v.empty()) std::memcpy(v.data(), h.raw(), v.size() * 4);
  return v;
}

}  // namespace

TEST(NcclComm, RankAndSize) {
  REQUIRE_GPUS();
  EXPECT_EQ(world().rank(), g_rank);
  EXPECT_EQ(world().size(), g_size);
}

TEST(NcclComm, AllToAll) {
  REQUIRE_GPUS();
  auto& c = world();
  const int chunk = 3;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    std::vector<float> s(size_t(chunk * g_size));
    for (int p = 0; p < g_size; ++p)
      for (int e = 0; e < chunk; ++e) s[size_t(p * chunk + e)] = float(g_rank * 64 + p * 8 + e);  // exact in bf16
    Tensor send = dev(s, dt);
    Tensor recv = Tensor::empty(send.shape(), dt, Device::kCUDA);
    c.all_to_all(send, recv);
    std::vector<float> r = host(recv);
    for (int p = 0; p < g_size; ++p)
      for (int e = 0; e < chunk; ++e) ASSERT_EQ(r[size_t(p * chunk + e)], float(p * 64 + g_rank * 8 + e)) << dtype_name(dt);
  }
}

TEST(NcclComm, AllGatherAndAllGatherV) {
  REQUIRE_GPUS();
  auto& c = world();
  std::vector<float> s(5);
  for (int e = 0; e < 5; ++e) s[size_t(e)] = float(g_rank * 100 + e);
  Tensor recv = Tensor::empty({int64_t(5 * g_size)}, DType::kF32, Device::kCUDA);
  c.all_gather(dev(s), recv);
  std::vector<float> r = host(recv);
  for (int p = 0; p < g_size; ++p)
    for (int e = 0; e < 5; ++e) ASSERT_EQ(r[size_t(p * 5 + e)], float(p * 100 + e));

  std::vector<int64_t> counts(static_cast<size_t>(g_size));
  for (int p = 0; p < g_size; ++p) counts[size_t(p)] = p == 0 ? 0 : 3 + 2 * p;  // one empty contribution
  std::vector<float> sv(size_t(counts[size_t(g_rank)]));
  for (size_t e = 0; e < sv.size(); ++e) sv[e] = float(g_rank * 100 + int(e));
  Tensor send_v = Tensor::empty({counts[size_t(g_rank)]}, DType::kF32, Device::kCUDA);
  if (!sv.empty()) send_v = dev(sv);
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t(0));
  Tensor recv_v = Tensor::empty({total}, DType::kF32, Device::kCUDA);
  c.all_gather_v(send_v, recv_v, counts);
  std::vector<float> rv = host(recv_v);
  size_t at = 0;
  for (int p = 0; p < g_size; ++p)
    for (int64_t e = 0; e < counts[size_t(p)]; ++e) ASSERT_EQ(rv[at++], float(p * 100 + int(e)));
}

TEST(NcclComm, Reductions) {
  REQUIRE_GPUS();
  auto& c = world();
  const int n = 4;
  std::vector<float> s(size_t(n * g_size));
  for (size_t i = 0; i < s.size(); ++i) s[i] = float(g_rank + int(i));
  Tensor recv = Tensor::empty({n}, DType::kF32, Device::kCUDA);
  c.reduce_scatter(dev(s), recv);
  std::vector<float> r = host(recv);
  const int rank_sum = g_size * (g_size - 1) / 2;
  for (int e = 0; e < n; ++e) ASSERT_EQ(r[size_t(e)], float(rank_sum + g_size * (g_rank * n + e)));

  std::vector<float> a(7);
  for (int e = 0; e < 7; ++e) a[size_t(e)] = float((g_rank + 1) * e);
  Tensor ts = dev(a), tm = dev(a);
  c.all_reduce_sum(ts);
  c.all_reduce_max(tm);
  std::vector<float> rs = host(ts), rm = host(tm);
  for (int e = 0; e < 7; ++e) {
    ASSERT_EQ(rs[size_t(e)], float(e * g_size * (g_size + 1) / 2));
    ASSERT_EQ(rm[size_t(e)], float(e * g_size));
  }

  Tensor ti = Tensor::empty({3}, DType::kI64, Device::kCPU);
  for (int e = 0; e < 3; ++e) ti.data<int64_t>()[e] = (int64_t(1) << 40) + g_rank * 3 + e;
  Tensor di = ti.to(Device::kCUDA);
  c.all_reduce_sum(di);
  Tensor hi = di.to(Device::kCPU);
  for (int e = 0; e < 3; ++e)
    ASSERT_EQ(hi.data<int64_t>()[e], int64_t(g_size) * ((int64_t(1) << 40) + e) + 3 * int64_t(rank_sum));
}

TEST(NcclComm, Broadcast) {
  REQUIRE_GPUS();
  auto& c = world();
  const int root = g_size - 1;
  std::vector<float> v(9, -1.0f);
  if (g_rank == root)
    for (int e = 0; e < 9; ++e) v[size_t(e)] = float(7 + e);
  Tensor t = dev(v, DType::kBF16);
  c.broadcast(t, root);
  std::vector<float> r = host(t);
  for (int e = 0; e < 9; ++e) ASSERT_EQ(r[size_t(e)], float(7 + e));
}

TEST(NcclComm, PointToPoint) {
  REQUIRE_GPUS();
  auto& c = world();
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  std::vector<float> s(6);
  for (int e = 0; e < 6; ++e) s[size_t(e)] = float(g_rank * 10 + e);
  Tensor recv = Tensor::empty({6}, DType::kF32, Device::kCUDA);
  c.sendrecv(dev(s), next, recv, prev);
  std::vector<float> r = host(recv);
  for (int e = 0; e < 6; ++e) ASSERT_EQ(r[size_t(e)], float(prev * 10 + e));

  if (g_size >= 2 && g_rank < 2) {  // rank 0 -> 1, then 1 -> 0
    Tensor t = Tensor::zeros({6}, DType::kF32, Device::kCUDA);
    if (g_rank == 0) {
      c.send(dev(s), 1);
      c.recv(t, 1);
      std::vector<float> got = host(t);
      for (int e = 0; e < 6; ++e) ASSERT_EQ(got[size_t(e)], float(10 + e));
    } else {
      c.recv(t, 0);
      std::vector<float> got = host(t);
      for (int e = 0; e < 6; ++e) ASSERT_EQ(got[size_t(e)], float(e));
      c.send(dev(s), 0);
    }
  }
  c.barrier();
}

TEST(NcclComm, StartSendRecvOverlapsAndJoins) {
  REQUIRE_GPUS();
  auto& c = world();
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  const int64_t n = 1 << 20;  // large enough that the exchange takes a while
  std::vector<float> s(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s[size_t(i)] = float(g_rank * 1000 + i % 1000);
  Tensor send = dev(s);
  Tensor recv = Tensor::zeros({n}, DType::kF32, Device::kCUDA);
  auto pending = c.start_sendrecv(send, next, recv, prev);
  Tensor other = dev(std::vector<float>(1000, 1.0f));  // compute-stream work meanwhile
  pending->wait();
  Tensor copy = recv.clone();  // queued on the compute stream after the join
  pending.reset();
  std::vector<float> r = host(copy);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(r[size_t(i)], float(prev * 1000 + i % 1000)) << "at " << i;
  EXPECT_EQ(host(other)[999], 1.0f);
}

TEST(NcclComm, SplitGroups) {
  REQUIRE_GPUS();
  // Reversed key: group rank = size-1-world rank; all_gather follows group-rank order.
  MPI_Comm rev;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - 1 - g_rank, &rev), MPI_SUCCESS);
  {
    NcclCommunicator c(rev, "reversed");
    EXPECT_EQ(c.rank(), g_size - 1 - g_rank);
    Tensor recv = Tensor::empty({int64_t(g_size)}, DType::kF32, Device::kCUDA);
    c.all_gather(dev({float(g_rank)}), recv);
    std::vector<float> r = host(recv);
    for (int p = 0; p < g_size; ++p) ASSERT_EQ(r[size_t(p)], float(g_size - 1 - p));
  }
  MPI_Comm_free(&rev);
  // Groups of one rank each.
  MPI_Comm solo;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, g_rank, 0, &solo), MPI_SUCCESS);
  {
    NcclCommunicator c(solo, "solo");
    EXPECT_EQ(c.size(), 1);
    Tensor t = dev({3.0f, 4.0f});
    c.all_reduce_sum(t);
    EXPECT_EQ(host(t), (std::vector<float>{3.0f, 4.0f}));
  }
  MPI_Comm_free(&solo);
}

TEST(NcclComm, ArgumentErrors) {
  REQUIRE_GPUS();
  auto& c = world();
  Tensor t = dev({1.0f});
  try {
    c.send(t, g_size);  // no such peer
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
  }
  Tensor h = Tensor::from_vector({1.0f}, {1});
  EXPECT_THROW(c.all_reduce_sum(h), Error);  // host tensor
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &g_local_rank);
  MPI_Comm_size(local, &g_local_size);
  MPI_Comm_free(&local);
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  set_process_identity(g_rank, hostname);

  // NCCL needs a distinct GPU per rank; every rank must take the same decision.
  g_devices = cuda_device_count();
  int ok = g_devices >= g_local_size ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  g_gpus_ok = all_ok == 1;
  if (g_gpus_ok) cuda_set_device(g_local_rank);

  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  g_world.reset();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
