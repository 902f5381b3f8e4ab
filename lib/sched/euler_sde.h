// FlowMatchEulerDiscreteScheduler with stochastic_sampling (the few-step distilled samplers: diffusers'
// Cosmos3DistilledModularPipeline, the reference runtime's FixedStepSampler "sde"): each step predicts
// x0 = x − σ·v and re-noises it to the next sigma with fresh noise, x' = (1 − σ')·x0 + σ'·ε; the last
// step (σ' = 0) returns x0. Step k draws ε from the seed stream `noise_seed + k + 1` (core/random.h),
// re-seeded per step as the reference runtime does (its streams are torch's, so the noise matches
// only in distribution; `noise_seed`'s own stream is the initial latents').
#pragma once
#include "sched/euler.h"

namespace vgen {

class StochasticEulerScheduler : public FlowMatchEulerScheduler {
 public:
  explicit StochasticEulerScheduler(const EulerConfig& cfg) : FlowMatchEulerScheduler(cfg) {}
  const char* name() const override { return "euler_sde"; }
  Tensor step(const Tensor& model_output, const Tensor& sample) override;

 protected:
  // ε of step `step` for a sample of `shape` (host f32); a test may substitute the reference's draws.
  virtual Tensor step_noise(int step, const Shape& shape) const;
};

}  // namespace vgen
