// A warm-up's plan pass: while a VaeConvPlanPrefetch lives on a thread, that thread's device VAE
// convs (ops/vae_device_ops.h, ops/vae_down_ops.h) run no kernel: each hands its shape's cuDNN plan
// build to the prefetch's worker threads and returns an output of garbage. One pass of a decode or
// an encode under it submits every shape, the plans then build at once (on a fresh machine each is
// a JIT compile of up to a second; kernels/conv3d builds them outside its lock), and the pass after
// it finds them built. The destructor waits for the builds.
#pragma once
#include <memory>

namespace vgen {

class VaeConvPlanPrefetch {
 public:
  // `workers` threads on the current device. CPU-only build: kUsage.
  explicit VaeConvPlanPrefetch(int workers);
  ~VaeConvPlanPrefetch();
  VaeConvPlanPrefetch(const VaeConvPlanPrefetch&) = delete;
  VaeConvPlanPrefetch& operator=(const VaeConvPlanPrefetch&) = delete;
  // Shapes handed to the workers so far (distinct ones).
  int submitted() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The workers a warm-up uses: half the host's hardware threads, 2 to 8.
int vae_prefetch_workers();

}  // namespace vgen
