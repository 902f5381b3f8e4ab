#include "sched/euler.h"

#include "kernels/common/bf16.h"
#include "sched/config_keys.h"

namespace vgen {

using namespace sched_detail;

EulerConfig EulerConfig::from_json(const Json& j, const std::string& source) {
  EulerConfig c;
  c.num_train_timesteps = get_or(j, "num_train_timesteps", c.num_train_timesteps, source);
  c.shift = get_or(j, "shift", c.shift, source);
  c.stochastic = get_or(j, "stochastic_sampling", c.stochastic, source);
  c.sigmas = PipelineSigmas::from_scheduler_config(j, source);
  for (const char* k : {"use_dynamic_shifting", "invert_sigmas", "shift_terminal", "use_karras_sigmas",
                        "use_exponential_sigmas", "use_beta_sigmas"})
    require_off(j, k, source);
  VGEN_CHECK(c.num_train_timesteps >= 1, ExitCode::kModel, "{}: num_train_timesteps must be >= 1", source);
  VGEN_CHECK(c.shift > 0, ExitCode::kModel, "{}: shift must be > 0, got {}", source, c.shift);
  return c;
}

FlowMatchEulerScheduler::FlowMatchEulerScheduler(const EulerConfig& cfg) : cfg_(cfg) {
  num_train_timesteps_ = cfg.num_train_timesteps;
  shift_ = cfg.shift;
  // __init__: σ = t/N for t = N..1, shifted in f32 (torch ops on a float32 tensor).
  const int N = cfg.num_train_timesteps;
  const float s = float(cfg.shift), s1 = float(cfg.shift - 1.0);
  auto shifted = [&](int t) {
    const float sig = float(t) / float(N);
    return (s * sig) / (1.0f + s1 * sig);
  };
  sigma_max_ = double(shifted(N));
  sigma_min_ = double(shifted(1));
}

void FlowMatchEulerScheduler::set_timesteps(int n) {
  VGEN_CHECK(n >= 1, ExitCode::kRecipe, "num_inference_steps must be >= 1, got {}", n);
  const double N = cfg_.num_train_timesteps, s = cfg_.shift;
  sigmas_.assign(size_t(n) + 1, 0.0f);
  timesteps_.assign(size_t(n), 0.0);
  integer_timesteps_ = false;
  step_index_ = 0;
  if (cfg_.sigmas.any()) {  // np.array(sigmas).astype(float32), shifted in f32 (a Python float is weak)
    const std::vector<double> base = cfg_.sigmas.for_steps(n, cfg_.num_train_timesteps);
    const float sf = float(s), s1 = float(s - 1.0), Nf = float(N);
    for (int i = 0; i < n; ++i) {
      const float x = float(base[size_t(i)]);
      sigmas_[size_t(i)] = (sf * x) / (1.0f + s1 * x);
      timesteps_[size_t(i)] = double(sigmas_[size_t(i)] * Nf);
    }
    return;
  }
  std::vector<double> ts = np_linspace(sigma_max_ * N, sigma_min_ * N, n);
  for (int i = 0; i < n; ++i) {
    double sig = ts[size_t(i)] / N;
    sig = s * sig / (1.0 + (s - 1.0) * sig);  // the second shift (float64)
    sigmas_[size_t(i)] = float(sig);
    timesteps_[size_t(i)] = double(sigmas_[size_t(i)] * float(N));  // f32 product, as diffusers
  }
}

Tensor FlowMatchEulerScheduler::step(const Tensor& model_output, const Tensor& sample) {
  VGEN_CHECK(step_index_ < num_inference_steps(), ExitCode::kInternal, "euler: step {} past the {} steps",
             step_index_, num_inference_steps());
  VGEN_ASSERT(model_output.is_cpu() && sample.is_cpu() && model_output.dtype() == DType::kF32 &&
                  sample.dtype() == DType::kF32 && model_output.numel() == sample.numel(),
              "euler step: model_output {} and sample {}", model_output.str(), sample.str());
  const float dt = sigmas_[size_t(step_index_) + 1] - sigmas_[size_t(step_index_)];
  Tensor out = Tensor::empty(sample.shape(), DType::kF32);
  const float* v = model_output.f32();
  const float* x = sample.f32();
  float* y = out.f32();
  const int64_t n = sample.numel();
  if (round_bf16) {
    // x + bf16(dt·v), then the result cast to the model output's dtype (bf16).
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
    for (int64_t i = 0; i < n; ++i) y[i] = kern::round_bf16(x[i] + kern::round_bf16(dt * v[i]));
  } else {
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] + dt * v[i];
  }
  ++step_index_;
  return out;
}

}  // namespace vgen
