// UniPCMultistepScheduler in flow mode (wan_spec.md §3.1): prediction_type flow_prediction,
// use_flow_sigmas, predict_x0, bh1/bh2, solver order 1 or 2, lower_order_final, final sigma zero
// (or sigma_min), Karras flow sigmas, the pipeline's own sigmas (pipeline_sigmas.h) when it passes
// them. Corrector UniC before predictor UniP; 0-d coefficients in f32 as diffusers forms them.
#pragma once
#include <vector>

#include "sched/pipeline_sigmas.h"
#include "sched/scheduler.h"

namespace vgen {

struct UniPCConfig {
  int num_train_timesteps = 1000;
  double flow_shift = 1.0;
  int solver_order = 2;
  bool bh2 = true;  // solver_type "bh2" (else "bh1")
  bool lower_order_final = true;
  bool final_sigma_zero = true;  // final_sigmas_type "zero" (else "sigma_min")
  std::vector<int> disable_corrector;
  PipelineSigmas sigmas;  // set_timesteps' sigmas from the pipeline (before the shift), if any
  // use_karras_sigmas with flow sigmas: Karras' ramp from sigma_max to sigma_min (ρ = 7) mapped to
  // flow sigmas σ/(1 + σ); no flow_shift and no σ₀ nudge, as diffusers. Both bounds from the config.
  bool karras = false;
  double sigma_min = 0, sigma_max = 0;

  // Validates the diffusers config (flow mode only); `source` names it in errors.
  static UniPCConfig from_json(const Json& j, const std::string& source);
};

class UniPCScheduler : public Scheduler {
 public:
  explicit UniPCScheduler(const UniPCConfig& cfg);
  const char* name() const override { return "unipc"; }
  void set_timesteps(int n) override;
  Tensor step(const Tensor& model_output, const Tensor& sample) override;

 private:
  std::vector<double> karras_sigmas(int n) const;
  void reset_state();  // the multistep history and the step index
  float lambda(int i) const;  // ln α_i − ln σ_i in f32
  Tensor predictor(const Tensor& x, int order) const;
  Tensor corrector(const Tensor& m_new, const Tensor& last_sample, const Tensor& this_sample, int order) const;

  UniPCConfig cfg_;
  std::vector<Tensor> m_;  // x0 predictions, oldest first (at most solver_order)
  Tensor last_sample_;     // corrected sample the last predictor started from
  int this_order_ = 1;     // order of the last predictor (the next corrector's order)
  int lower_order_nums_ = 0;
};

}  // namespace vgen
