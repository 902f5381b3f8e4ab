#include "batch/bounded_worker.h"

#include <pthread.h>

#include <csignal>

#include "core/error.h"
#include "core/log.h"

namespace vgen {

BoundedWorker::BoundedWorker(size_t max_waiting) : max_waiting_(max_waiting) {
  VGEN_ASSERT(max_waiting >= 1, "BoundedWorker needs room for one waiting job, got {}", max_waiting);
  // The new thread inherits this mask: SIGINT/SIGTERM blocked there from its first instruction.
  sigset_t stop_signals, old;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

BoundedWorker::~BoundedWorker() {
  try {
    finish();
  } catch (const Error& e) {
    log_error("background writer: {}", e.message());
  } catch (const std::exception& e) {
    log_error("background writer: {}", e.what());
  } catch (...) {
    log_error("background writer: unknown exception");
  }
}

void BoundedWorker::rethrow_locked() {
  if (error_ && !error_reported_) {
    error_reported_ = true;
    std::rethrow_exception(error_);
  }
}

void BoundedWorker::push(std::function<void()> job) {
  std::unique_lock<std::mutex> lock(mutex_);
  VGEN_ASSERT(!stopping_, "BoundedWorker::push after finish");
  changed_.wait(lock, [&] { return error_ || jobs_.size() < max_waiting_; });
  rethrow_locked();
  VGEN_ASSERT(!error_, "BoundedWorker::push after its error was reported");
  jobs_.push_back(std::move(job));
  changed_.notify_all();
}

void BoundedWorker::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  {
    std::lock_guard<std::mutex> join_lock(join_mutex_);
    if (thread_.joinable()) thread_.join();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  rethrow_locked();
}

size_t BoundedWorker::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

void BoundedWorker::run() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
      changed_.notify_all();  // room for the producer
    }
    try {
      job();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      jobs_.clear();  // the producer learns of the error; what waited is not written
      changed_.notify_all();
      return;
    }
  }
}

}  // namespace vgen
