// FlowMatchEulerDiscreteScheduler (wan_spec.md §3.2), static shift: the training sigmas are shifted
// in f32 at construction and the inference sigmas shifted again in set_timesteps; the pipeline's own
// sigmas (pipeline_sigmas.h) when it passes them, cast to f32 and shifted in f32 as diffusers does.
#pragma once
#include "sched/pipeline_sigmas.h"
#include "sched/scheduler.h"

namespace vgen {

struct EulerConfig {
  int num_train_timesteps = 1000;
  double shift = 1.0;
  bool stochastic = false;  // stochastic_sampling: re-noise x0 to the next sigma (euler_sde.h)
  PipelineSigmas sigmas;

  static EulerConfig from_json(const Json& j, const std::string& source);
};

class FlowMatchEulerScheduler : public Scheduler {
 public:
  explicit FlowMatchEulerScheduler(const EulerConfig& cfg);
  const char* name() const override { return "euler"; }
  void set_timesteps(int n) override;
  Tensor step(const Tensor& model_output, const Tensor& sample) override;

 protected:
  EulerConfig cfg_;

 private:
  double sigma_max_ = 1.0, sigma_min_ = 0.0;  // of the (f32) training schedule
};

}  // namespace vgen
