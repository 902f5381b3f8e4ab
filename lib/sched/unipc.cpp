#include "sched/unipc.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/bf16.h"
#include "sched/config_keys.h"

namespace vgen {

using namespace sched_detail;

UniPCConfig UniPCConfig::from_json(const Json& j, const std::string& source) {
  UniPCConfig c;
  c.num_train_timesteps = get_or(j, "num_train_timesteps", c.num_train_timesteps, source);
  c.flow_shift = get_or(j, "flow_shift", c.flow_shift, source);
  c.solver_order = get_or(j, "solver_order", c.solver_order, source);
  c.lower_order_final = get_or(j, "lower_order_final", c.lower_order_final, source);
  c.disable_corrector = get_or(j, "disable_corrector", c.disable_corrector, source);
  c.sigmas = PipelineSigmas::from_scheduler_config(j, source);
  const std::string pred = get_or<std::string>(j, "prediction_type", "epsilon", source);
  const std::string solver = get_or<std::string>(j, "solver_type", "bh2", source);
  const std::string final_type = get_or<std::string>(j, "final_sigmas_type", "zero", source);
  VGEN_CHECK(pred == "flow_prediction", ExitCode::kModel,
             "{}: prediction_type '{}' is not supported (flow_prediction only)", source, pred);
  VGEN_CHECK(get_or(j, "use_flow_sigmas", false, source), ExitCode::kModel,
             "{}: use_flow_sigmas must be true (flow matching only)", source);
  VGEN_CHECK(get_or(j, "predict_x0", true, source), ExitCode::kModel, "{}: predict_x0 = false is not supported",
             source);
  VGEN_CHECK(solver == "bh1" || solver == "bh2", ExitCode::kModel, "{}: solver_type '{}' is not supported", source,
             solver);
  c.bh2 = solver == "bh2";
  VGEN_CHECK(final_type == "zero" || final_type == "sigma_min", ExitCode::kModel,
             "{}: final_sigmas_type '{}' is not supported", source, final_type);
  c.final_sigma_zero = final_type == "zero";
  VGEN_CHECK(c.solver_order == 1 || c.solver_order == 2, ExitCode::kModel,
             "{}: solver_order {} is not supported (1 or 2)", source, c.solver_order);
  VGEN_CHECK(c.num_train_timesteps >= 1, ExitCode::kModel, "{}: num_train_timesteps must be >= 1", source);
  VGEN_CHECK(c.flow_shift > 0, ExitCode::kModel, "{}: flow_shift must be > 0, got {}", source, c.flow_shift);
  for (const char* k : {"thresholding", "use_exponential_sigmas", "use_beta_sigmas", "use_dynamic_shifting",
                        "solver_p", "shift_terminal"})
    require_off(j, k, source);
  c.karras = get_or(j, "use_karras_sigmas", false, source);
  if (c.karras) {
    // Without the bounds diffusers takes them from the DDPM betas' sigmas, which vgen does not compute.
    c.sigma_min = get_or(j, "sigma_min", 0.0, source);
    c.sigma_max = get_or(j, "sigma_max", 0.0, source);
    VGEN_CHECK(c.sigma_min > 0 && c.sigma_max > c.sigma_min, ExitCode::kModel,
               "{}: use_karras_sigmas needs sigma_min and sigma_max (0 < sigma_min < sigma_max), got {} and {}",
               source, c.sigma_min, c.sigma_max);
  }
  return c;
}

UniPCScheduler::UniPCScheduler(const UniPCConfig& cfg) : cfg_(cfg) {
  num_train_timesteps_ = cfg.num_train_timesteps;
  shift_ = cfg.flow_shift;
}

// _convert_to_karras over n steps, then σ/(1 + σ) (float64 as numpy); the pipeline's sigmas set only n.
std::vector<double> UniPCScheduler::karras_sigmas(int n) const {
  constexpr double kRho = 7.0;
  const std::vector<double> ramp = np_linspace(0.0, 1.0, n);
  const double lo = std::pow(cfg_.sigma_min, 1.0 / kRho), hi = std::pow(cfg_.sigma_max, 1.0 / kRho);
  std::vector<double> sig(size_t(n), 0.0);
  for (int k = 0; k < n; ++k) {
    const double edm = std::pow(hi + ramp[size_t(k)] * (lo - hi), kRho);
    sig[size_t(k)] = edm / (edm + 1.0);
  }
  return sig;
}

void UniPCScheduler::set_timesteps(int n) {
  VGEN_CHECK(n >= 1, ExitCode::kRecipe, "num_inference_steps must be >= 1, got {}", n);
  const double N = cfg_.num_train_timesteps, s = cfg_.flow_shift;
  if (cfg_.karras) {
    if (cfg_.sigmas.any()) n = int(cfg_.sigmas.for_steps(n, cfg_.num_train_timesteps).size());
    const std::vector<double> sig = karras_sigmas(n);
    timesteps_.resize(size_t(n));
    sigmas_.resize(size_t(n) + 1);
    for (int k = 0; k < n; ++k) {
      timesteps_[size_t(k)] = double(int64_t(sig[size_t(k)] * N));  // int64 truncation
      sigmas_[size_t(k)] = float(sig[size_t(k)]);
    }
    sigmas_[size_t(n)] = cfg_.final_sigma_zero ? 0.0f : float(sig[size_t(n) - 1]);
    reset_state();
    return;
  }
  // float64 until the end, as numpy: σ_k = shift(linspace(1, 1/N, n+1)[k]) or shift(the pipeline's
  // k-th sigma), σ_0 nudged below 1.
  const std::vector<double> lin = cfg_.sigmas.any() ? cfg_.sigmas.for_steps(n, cfg_.num_train_timesteps)
                                                    : np_linspace(1.0, 1.0 / N, n + 1);
  std::vector<double> sig(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    const double x = lin[size_t(k)];
    sig[size_t(k)] = s * x / (1.0 + (s - 1.0) * x);
  }
  if (std::fabs(sig[0] - 1.0) < 1e-6) sig[0] -= 1e-6;
  timesteps_.resize(size_t(n));
  sigmas_.resize(size_t(n) + 1);
  for (int k = 0; k < n; ++k) {
    timesteps_[size_t(k)] = double(int64_t(sig[size_t(k)] * N));  // int64 truncation
    sigmas_[size_t(k)] = float(sig[size_t(k)]);
  }
  sigmas_[size_t(n)] = cfg_.final_sigma_zero ? 0.0f : float(sig[size_t(n) - 1]);
  reset_state();
}

void UniPCScheduler::reset_state() {
  integer_timesteps_ = true;
  step_index_ = 0;
  m_.clear();
  last_sample_ = Tensor();
  this_order_ = 1;
  lower_order_nums_ = 0;
}

float UniPCScheduler::lambda(int i) const {
  const float sigma = sigmas_[size_t(i)];
  const float alpha = 1.0f - sigma;
  return std::log(alpha) - std::log(sigma);
}

// UniP (multistep_uni_p_bh_update, predict_x0): x_{i+1} from the corrected x_i.
Tensor UniPCScheduler::predictor(const Tensor& x, int order) const {
  const int i = step_index_;
  const Tensor& m0 = m_.back();
  Tensor out = Tensor::empty(x.shape(), DType::kF32);
  const int64_t n = x.numel();
  const float* xs = x.f32();
  const float* m0p = m0.f32();
  float* y = out.f32();
  const float sigma_t = sigmas_[size_t(i) + 1], sigma_s0 = sigmas_[size_t(i)];
  if (sigma_t == 0.0f) {  // λ_t = +∞: the update reduces exactly to the x0 prediction
    std::copy(m0p, m0p + n, y);
    return out;
  }
  const float alpha_t = 1.0f - sigma_t;
  const float lambda_s0 = lambda(i);
  const float h = lambda(i + 1) - lambda_s0;
  const float hh = -h;
  const float h_phi_1 = std::expm1(hh);
  const float B_h = cfg_.bh2 ? std::expm1(hh) : hh;
  const float ratio = sigma_t / sigma_s0, a_phi = alpha_t * h_phi_1, a_B = alpha_t * B_h;
  if (order == 1) {
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
    for (int64_t e = 0; e < n; ++e) y[e] = (ratio * xs[e] - a_phi * m0p[e]) - a_B * 0.0f;
    return out;
  }
  // order 2: rhos_p = [0.5], D1 = (m_{i−1} − m_i)/r_k.
  const float rk = (lambda(i - 1) - lambda_s0) / h;
  const float* m1p = m_[m_.size() - 2].f32();
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
  for (int64_t e = 0; e < n; ++e) {
    const float d1 = (m1p[e] - m0p[e]) / rk;
    y[e] = (ratio * xs[e] - a_phi * m0p[e]) - a_B * (0.5f * d1);
  }
  return out;
}

// UniC (multistep_uni_c_bh_update, predict_x0): corrects x_i with the new x0 prediction m_new.
Tensor UniPCScheduler::corrector(const Tensor& m_new, const Tensor& last_sample, const Tensor& this_sample,
                                 int order) const {
  const int i = step_index_;
  const Tensor& m0 = m_.back();  // m_{i−1}
  Tensor out = Tensor::empty(this_sample.shape(), DType::kF32);
  const int64_t n = this_sample.numel();
  const float* xs = last_sample.f32();
  const float* m0p = m0.f32();
  const float* mt = m_new.f32();
  float* y = out.f32();
  const float sigma_t = sigmas_[size_t(i)], sigma_s0 = sigmas_[size_t(i) - 1];
  const float alpha_t = 1.0f - sigma_t;
  const float lambda_s0 = lambda(i - 1);
  const float h = lambda(i) - lambda_s0;
  const float hh = -h;
  const float h_phi_1 = std::expm1(hh);
  const float B_h = cfg_.bh2 ? std::expm1(hh) : hh;
  const float ratio = sigma_t / sigma_s0, a_phi = alpha_t * h_phi_1, a_B = alpha_t * B_h;
  if (order == 1) {  // rhos_c = [0.5]
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
    for (int64_t e = 0; e < n; ++e) y[e] = (ratio * xs[e] - a_phi * m0p[e]) - a_B * (0.0f + 0.5f * (mt[e] - m0p[e]));
    return out;
  }
  // order 2: R = [[1, 1], [r_k, 1]], b = [h_phi_k/B_h, 2·h_phi_k'/B_h]; solved as LAPACK's sgesv
  // does it (partial pivoting) in f32.
  const float rk = (lambda(i - 2) - lambda_s0) / h;
  float h_phi_k = h_phi_1 / hh - 1.0f;
  const float b1 = h_phi_k * 1.0f / B_h;
  h_phi_k = h_phi_k / hh - 0.5f;
  const float b2 = h_phi_k * 2.0f / B_h;
  float a00 = 1.0f, a01 = 1.0f, a10 = rk, a11 = 1.0f, y0 = b1, y1 = b2;
  if (std::fabs(a10) > std::fabs(a00)) {
    std::swap(a00, a10);
    std::swap(a01, a11);
    std::swap(y0, y1);
  }
  const float l = a10 / a00;
  const float u11 = a11 - l * a01;
  y1 = y1 - l * y0;
  const float rho1 = y1 / u11;
  const float rho0 = (y0 - a01 * rho1) / a00;
  const float* m2p = m_[m_.size() - 2].f32();  // m_{i−2}
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
  for (int64_t e = 0; e < n; ++e) {
    const float d1 = (m2p[e] - m0p[e]) / rk;
    const float corr = rho0 * d1;
    y[e] = (ratio * xs[e] - a_phi * m0p[e]) - a_B * (corr + rho1 * (mt[e] - m0p[e]));
  }
  return out;
}

Tensor UniPCScheduler::step(const Tensor& model_output, const Tensor& sample) {
  const int N = num_inference_steps(), i = step_index_;
  VGEN_CHECK(i < N, ExitCode::kInternal, "unipc: step {} past the {} steps", i, N);
  VGEN_ASSERT(model_output.is_cpu() && sample.is_cpu() && model_output.dtype() == DType::kF32 &&
                  sample.dtype() == DType::kF32 && model_output.numel() == sample.numel(),
              "unipc step: model_output {} and sample {}", model_output.str(), sample.str());
  // x0 prediction from the uncorrected sample: m = x − σ·v (bf16(σ·v) on the bf16 path).
  Tensor m_new = Tensor::empty(sample.shape(), DType::kF32);
  {
    const float sigma = sigmas_[size_t(i)];
    const float* v = model_output.f32();
    const float* x = sample.f32();
    float* m = m_new.f32();
    const int64_t n = sample.numel();
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
    for (int64_t e = 0; e < n; ++e) {
      const float sv = sigma * v[e];
      m[e] = x[e] - (round_bf16 ? kern::round_bf16(sv) : sv);
    }
  }
  const bool disabled = std::find(cfg_.disable_corrector.begin(), cfg_.disable_corrector.end(), i - 1) !=
                        cfg_.disable_corrector.end();
  Tensor x = sample;
  if (i > 0 && !disabled && last_sample_.defined()) x = corrector(m_new, last_sample_, sample, this_order_);
  m_.push_back(m_new);
  if (int(m_.size()) > cfg_.solver_order) m_.erase(m_.begin());
  int order = cfg_.lower_order_final ? std::min(cfg_.solver_order, N - i) : cfg_.solver_order;
  this_order_ = std::min(order, lower_order_nums_ + 1);
  last_sample_ = x.raw() == sample.raw() ? sample.clone() : x;  // own a copy: the caller may reuse its buffer
  Tensor prev = predictor(last_sample_, this_order_);
  if (lower_order_nums_ < cfg_.solver_order) ++lower_order_nums_;
  ++step_index_;
  return prev;
}

}  // namespace vgen
