// The collective watchdog: a monitor thread per rank that ends a job whose ranks stopped making
// progress, instead of letting the others wait forever (issue 22).
//
// Every blocking point of the main thread (MPI and NCCL calls, the dp queue, barriers, host waits
// for the GPU) and every denoising step is marked (core/wait_marker.h). When this rank has waited
// in one operation past its allowance (`runtime.collective_timeout_s`, else derived from the work:
// dist/watchdog_rule.h) and the rule says the job cannot go on, the thread logs the operation and
// group it waits in and the rank (with host and pid) it waits on, runs the timeout hooks (world
// rank 0 writes the partial timing.json), aborts the NCCL communicators (ncclCommAbort) and ends
// the job with exit 8. Every round it also polls the NCCL communicators' asynchronous errors.
//
// How a rank that cannot answer is still named: each rank's state lives in a slot of its node's
// MPI shared-memory window (MPI_Win_allocate_shared), written by its main thread with plain atomic
// stores at each marker and stamped with a heartbeat by its watchdog thread; the watchdogs of the
// node read those slots with atomic loads, with no MPI call and no help from the rank they read.
// A stopped or dead rank shows a stale heartbeat; a rank that computes instead of joining shows
// no wait. Ranks on other nodes are read with MPI_Rget from their node leader's exposure of the
// same segment (a world window held under MPI_Win_lock_all), polled with MPI_Test under a deadline
// so an unreachable node cannot block the watchdog.
//
// MPI thread level: dist_init asks for MPI_THREAD_MULTIPLE. Only then does the watchdog thread make
// MPI calls (MPI_Rget/MPI_Test for other nodes, MPI_Abort); with MPI_THREAD_FUNNELED or
// SERIALIZED it reads only its node's shared memory and ends the process with _exit(8), which
// mpirun (and srun with --kill-on-bad-exit) turns into the end of the job with that code.
//
// Cost: the markers are a few relaxed stores each; the thread wakes every timeout/40 (50 ms to 1 s;
// 1 s under a derived allowance) and reads one cache line per node-local rank.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "dist/bootstrap.h"
#include "dist/watchdog_rule.h"

namespace vgen {

// This rank's watchdog. Construction and destruction are collective over MPI_COMM_WORLD (the
// shared-memory and world windows); a destructor reached by an exception skips the collective part
// (the error's handler ends the job). One at a time per process.
class Watchdog {
 public:
  Watchdog(const WatchdogOptions& opts, const DistEnv& env);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Runs `fn(diagnosis)` on the watchdog thread when this rank times out, or when a rank of its node
// did, before the job ends. The main thread is parked at its next marker first (wait_freeze), so
// `fn` may read state the main thread owns, as long as that state is only changed outside waits.
// Removed when the returned object is destroyed.
class WatchdogHook {
 public:
  explicit WatchdogHook(std::function<void(const std::string&)> fn);
  ~WatchdogHook();
  WatchdogHook(const WatchdogHook&) = delete;
  WatchdogHook& operator=(const WatchdogHook&) = delete;

 private:
  int id_;
};

// A device communicator the watchdog watches: `poll` returns a non-empty error text when the
// communicator reported an asynchronous error (called from the watchdog thread), `abort` aborts it
// before the job ends (ncclCommAbort). Unregistered by the returned id.
int watchdog_add_communicator(std::function<std::string()> poll, std::function<void()> abort);
void watchdog_remove_communicator(int id);

// Tests: the diagnosis the watchdog would log if this rank timed out now (reads every visible slot).
std::string watchdog_diagnosis_for_testing();
// Whether a watchdog runs in this process.
bool watchdog_running();

}  // namespace vgen
