// One background thread that runs jobs in the order they were pushed, with a bounded number of
// jobs waiting: push blocks while `max_waiting` jobs are queued, so a producer that is faster than
// the worker holds at most that many finished items in memory (the batch's videos being written).
//
// A job that throws ends the worker: the jobs still waiting are dropped, and the first error is
// rethrown to the producer by the next push or by finish. SIGINT/SIGTERM are blocked on the worker
// thread, so the stop flag is always set by a handler running on the producer's thread.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace vgen {

class BoundedWorker {
 public:
  explicit BoundedWorker(size_t max_waiting = 1);
  // Runs the jobs still waiting, then joins; an error is swallowed here (finish reports it).
  ~BoundedWorker();
  BoundedWorker(const BoundedWorker&) = delete;
  BoundedWorker& operator=(const BoundedWorker&) = delete;

  // Queues `job`; blocks while max_waiting jobs wait. Rethrows a failed job's error (and then
  // queues nothing).
  void push(std::function<void()> job);
  // Runs every queued job, joins the thread and rethrows the first error, if any. Idempotent; no
  // push after it. May be called from another thread while the producer is not pushing (the
  // watchdog's timeout hook); concurrent calls wait for the one joining.
  void finish();
  // Jobs queued and not yet started.
  size_t waiting() const;

 private:
  void run();
  void rethrow_locked();  // mutex held

  const size_t max_waiting_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a job queued or taken, the worker failed or was told to stop
  std::deque<std::function<void()>> jobs_;
  std::exception_ptr error_;
  bool error_reported_ = false;
  bool stopping_ = false;
  std::mutex join_mutex_;  // one finish joins at a time
  std::thread thread_;
};

}  // namespace vgen
