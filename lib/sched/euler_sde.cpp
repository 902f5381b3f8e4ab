#include "sched/euler_sde.h"

#include "core/random.h"
#include "kernels/common/bf16.h"

namespace vgen {

Tensor StochasticEulerScheduler::step_noise(int step, const Shape& shape) const {
  return randn(shape, noise_seed + uint64_t(step) + 1);
}

Tensor StochasticEulerScheduler::step(const Tensor& model_output, const Tensor& sample) {
  const int i = step_index_;
  VGEN_CHECK(i < num_inference_steps(), ExitCode::kInternal, "euler_sde: step {} past the {} steps", i,
             num_inference_steps());
  VGEN_ASSERT(model_output.is_cpu() && sample.is_cpu() && model_output.dtype() == DType::kF32 &&
                  sample.dtype() == DType::kF32 && model_output.numel() == sample.numel(),
              "euler_sde step: model_output {} and sample {}", model_output.str(), sample.str());
  const float sigma = sigmas_[size_t(i)], next = sigmas_[size_t(i) + 1];
  const float keep = 1.0f - next;
  // The last step's noise has weight 0: not drawn (diffusers draws it, with no effect on the result).
  const Tensor eps = next > 0.0f ? step_noise(i, sample.shape()) : Tensor();
  VGEN_CHECK(!eps.defined() || eps.numel() == sample.numel(), ExitCode::kInternal, "euler_sde: noise {} for sample {}",
             eps.defined() ? eps.str() : "none", sample.str());
  Tensor out = Tensor::empty(sample.shape(), DType::kF32);
  const float* v = model_output.f32();
  const float* x = sample.f32();
  const float* e = eps.defined() ? eps.f32() : nullptr;
  float* y = out.f32();
  const int64_t n = sample.numel();
  const bool bf16 = round_bf16;
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
  for (int64_t k = 0; k < n; ++k) {
    // bf16 path: σ·v in the model output's dtype, the result cast back to it (as diffusers' step).
    const float sv = bf16 ? kern::round_bf16(sigma * v[k]) : sigma * v[k];
    const float x0 = x[k] - sv;
    const float r = e ? keep * x0 + next * e[k] : x0;
    y[k] = bf16 ? kern::round_bf16(r) : r;
  }
  ++step_index_;
  return out;
}

}  // namespace vgen
