// Cost of the collective watchdog (dist/watchdog.h) on the CPU, under mpirun: a WaitScope enter+exit
// pair, and small MPI collectives through MpiCommunicator with and without a running watchdog
// (the markers are always compiled in; without the watchdog they write a private slot). One JSON
// line per measurement on world rank 0. Compare with a step: see scripts or the issue 22 report.
//   mpirun -np 2 watchdog_bench [--pairs N] [--collectives N] [--reps R]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/wait_marker.h"
#include "dist/bootstrap.h"
#include "dist/mpi_communicator.h"
#include "dist/watchdog.h"

using namespace vgen;
using Clock = std::chrono::steady_clock;

namespace {

double ns_per(Clock::time_point t0, long n) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / double(n);
}

double marker_pairs(long n) {
  const auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) {
    WaitScope w(WaitOp::kAllToAll, WaitBackend::kNccl, "ulysses", 0);
  }
  return ns_per(t0, n);
}

double collectives(MpiCommunicator& comm, long n, const char* kind) {
  Tensor t = Tensor::zeros({16}, DType::kF32);
  Tensor all = Tensor::zeros({16 * int64_t(comm.size())}, DType::kF32);
  comm.barrier();
  const auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) {
    if (kind[0] == 'r') comm.all_reduce_max(t);
    else comm.all_gather(t, all);
  }
  double ns = ns_per(t0, n);
  Tensor v = Tensor::from_vector({float(ns)}, {1});
  comm.all_reduce_max(v);  // the slowest rank's time
  return double(v.f32()[0]);
}

}  // namespace

int main(int argc, char** argv) {
  DistEnv env = dist_init(&argc, &argv);
  long pairs = 5000000, colls = 20000;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--pairs")) pairs = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--collectives")) colls = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  int level = 0;
  MPI_Query_thread(&level);
  auto comm = make_mpi_communicator_dup(MPI_COMM_WORLD, "world");
  auto report = [&](const char* what, bool on, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (env.world_rank == 0)
      std::printf("{\"bench\": \"watchdog\", \"what\": \"%s\", \"watchdog\": %s, \"ranks\": %d, \"mpi_thread_level\": %d, "
                  "\"median_ns\": %.1f, \"min_ns\": %.1f, \"max_ns\": %.1f}\n",
                  what, on ? "true" : "false", env.world_size, level, v[v.size() / 2], v.front(), v.back());
    std::fflush(stdout);
  };
  // Alternate off/on rounds so drift of a shared machine spreads over both.
  std::vector<double> m_off, m_on, r_off, r_on, g_off, g_on;
  for (int r = 0; r < reps; ++r) {
    m_off.push_back(marker_pairs(pairs));
    r_off.push_back(collectives(*comm, colls, "reduce"));
    g_off.push_back(collectives(*comm, colls, "gather"));
    {
      Watchdog wd({600}, env);
      m_on.push_back(marker_pairs(pairs));
      r_on.push_back(collectives(*comm, colls, "reduce"));
      g_on.push_back(collectives(*comm, colls, "gather"));
    }
  }
  report("wait marker enter+exit", false, m_off);
  report("wait marker enter+exit", true, m_on);
  report("all_reduce_max 16 f32", false, r_off);
  report("all_reduce_max 16 f32", true, r_on);
  report("all_gather 16 f32", false, g_off);
  report("all_gather 16 f32", true, g_on);
  comm.reset();
  dist_finalize();
  return 0;
}
