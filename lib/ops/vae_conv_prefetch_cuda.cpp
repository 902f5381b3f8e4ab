#include <cuda_runtime.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/cuda_stream.h"
#include "ops/vae_conv_prefetch.h"
#include "ops/vae_conv_prefetch_cuda.h"

namespace vgen {
namespace {

// Every field that picks a plan (kernels/conv3d's key, less the device: one prefetch, one device).
std::vector<int64_t> shape_key(const kern::Conv3dArgs& a, kern::ConvBackend b) {
  return {int64_t(a.type), a.N,          a.Cin,        a.Ti,       a.Hi,        a.Wi,         a.Cout,
          a.kt,           a.kh,         a.kw,         a.pad.top,  a.pad.bottom, a.pad.left,  a.pad.right,
          a.stride_t,     a.stride_s,   a.bias != nullptr, a.residual != nullptr, a.autotune, int64_t(b)};
}

thread_local VaeConvPlanPrefetch::Impl* t_active = nullptr;

}  // namespace

struct VaeConvPlanPrefetch::Impl {
  struct Job {
    kern::Conv3dArgs args;
    kern::ConvBackend backend;
  };
  int device = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> queue;
  std::set<std::vector<int64_t>> seen;
  bool closing = false;
  std::vector<std::thread> workers;
  Impl* outer = nullptr;  // the prefetch this thread had before (nested ones restore it)

  // A worker that cannot run leaves its shapes to the real pass, which prepares them again and
  // reports what fails; nothing may escape a worker thread.
  void work() noexcept {
    const bool usable = cudaSetDevice(device) == cudaSuccess;
    for (;;) {
      Job j;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return closing || !queue.empty(); });
        if (queue.empty()) return;
        j = queue.front();
        queue.pop_front();
      }
      if (!usable) continue;
      try {
        kern::ConvBackend chosen{};
        size_t ws = 0;
        (void)kern::conv3d_prepare(j.args, j.backend, &chosen, &ws);
      } catch (...) {
      }
    }
  }
};

VaeConvPlanPrefetch::VaeConvPlanPrefetch(int workers) : impl_(std::make_unique<Impl>()) {
  VGEN_CUDA_CHECK(cudaGetDevice(&impl_->device));
  try {
    for (int i = 0; i < std::max(1, workers); ++i) impl_->workers.emplace_back([p = impl_.get()] { p->work(); });
  } catch (...) {  // a thread that could not start: the started ones end before the error leaves
    {
      std::lock_guard<std::mutex> lk(impl_->mu);
      impl_->closing = true;
    }
    impl_->cv.notify_all();
    for (std::thread& t : impl_->workers) t.join();
    throw;
  }
  impl_->outer = t_active;
  t_active = impl_.get();
}

VaeConvPlanPrefetch::~VaeConvPlanPrefetch() {
  t_active = impl_->outer;
  {
    std::lock_guard<std::mutex> lk(impl_->mu);
    impl_->closing = true;
  }
  impl_->cv.notify_all();
  for (std::thread& t : impl_->workers) t.join();
}

int VaeConvPlanPrefetch::submitted() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return int(impl_->seen.size());
}

bool vae_conv_prefetched(const kern::Conv3dArgs& a, kern::ConvBackend backend) {
  VaeConvPlanPrefetch::Impl* p = t_active;
  if (!p) return false;
  const kern::Conv3dArgs job = a;  // conv3d_prepare reads no pointer (the bias's and residual's presence count)
  {
    std::lock_guard<std::mutex> lk(p->mu);
    if (!p->seen.insert(shape_key(a, backend)).second) return true;
    p->queue.push_back({job, backend});
  }
  p->cv.notify_one();
  return true;
}

}  // namespace vgen
