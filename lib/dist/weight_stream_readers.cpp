// ReaderPool (dist/weight_stream_io.h): pread into rotating buffers, one job per buffer use.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/wait_marker.h"
#include "dist/weight_stream_io.h"

namespace vgen {

ReaderPool::ReaderPool(std::vector<ReadJob> jobs, int threads, int buffers, size_t buffer_bytes, SegmentSink& sink,
                       Describe describe)
    : jobs_(std::move(jobs)), sink_(sink), describe_(std::move(describe)) {
  if (jobs_.empty()) return;
  const int nb = std::max(1, std::min<int>(buffers, int(jobs_.size())));
  for (int i = 0; i < nb; ++i) bufs_.push_back(sink_.alloc_buffer(buffer_bytes));
  uses_.assign(size_t(nb), 0);
  filled_.assign(size_t(nb), -1);
  reusable_.resize(size_t(nb));
  const int nt = std::max(1, std::min(threads, nb));
  for (int i = 0; i < nt; ++i) threads_.emplace_back([this] { work(); });
}

ReaderPool::~ReaderPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  for (size_t i = 0; i < bufs_.size(); ++i) {
    if (reusable_[i]) {
      try {
        reusable_[i]();  // a copy still reading the buffer finishes before it is freed
      } catch (...) {
      }
    }
    sink_.free_buffer(bufs_[i]);
  }
}

namespace {

// Test hook: VGEN_INJECT_READ_ERROR=<world rank> fails that rank's first checkpoint read as an I/O
// error would (README), to check that one reader's failure ends every rank of the job.
bool inject_read_error() {
  static const bool on = [] {
    const char* e = std::getenv("VGEN_INJECT_READ_ERROR");
    return e && *e && std::atoi(e) == process_rank();
  }();
  return on;
}

}  // namespace

void ReaderPool::read_job(const ReadJob& j, char* dst) const {
  if (inject_read_error())
    VGEN_THROW(ExitCode::kModel, "{}: read error: {} (VGEN_INJECT_READ_ERROR)", describe_(j, j.data_off),
               std::strerror(EIO));
  size_t done = 0;
  while (done < j.bytes) {
    const ssize_t r = ::pread(j.fd, dst + done, j.bytes - done, off_t(j.offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      VGEN_THROW(ExitCode::kModel, "{}: read error: {}", describe_(j, j.data_off + done), std::strerror(errno));
    if (r == 0)
      VGEN_THROW(ExitCode::kModel, "{}: the file ends early ({} of {} bytes at data offset {} could be read; truncated "
                 "or changed while loading?)",
                 describe_(j, j.data_off + done), done, j.bytes, j.data_off);
    done += size_t(r);
  }
}

void ReaderPool::work() {
  const size_t nb = bufs_.size();
  for (;;) {
    size_t k = 0, b = 0;
    std::function<void()> reusable;
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (stop_ || error_ || next_ >= jobs_.size()) return;
      k = next_++;
      b = k % nb;
      cv_.wait(lk, [&] { return stop_ || error_ || uses_[b] == k / nb; });
      if (stop_ || error_) return;
      reusable = std::move(reusable_[b]);
      reusable_[b] = nullptr;
    }
    try {
      if (reusable) reusable();  // e.g. the copy of the buffer's previous segment has finished
      read_job(jobs_[k], static_cast<char*>(bufs_[b]));
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu_);
      if (!error_) error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      filled_[b] = int64_t(k);
      bytes_read_ += jobs_[k].bytes;
    }
    cv_.notify_all();
  }
}

void* ReaderPool::wait(size_t k) {
  const size_t b = k % bufs_.size();
  WaitScope waiting(WaitOp::kFileRead, WaitBackend::kNone, "checkpoint");  // a hung read is named
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return error_ || filled_[b] == int64_t(k); });
  if (error_) std::rethrow_exception(error_);
  return bufs_[b];
}

void ReaderPool::release(size_t k, std::function<void()> reusable) {
  const size_t b = k % bufs_.size();
  {
    std::lock_guard<std::mutex> lk(mu_);
    filled_[b] = -1;
    reusable_[b] = std::move(reusable);
    ++uses_[b];
  }
  cv_.notify_all();
}

}  // namespace vgen
