// Golden cases sched_*: a scheduler alone (timesteps, sigmas, and the samples after feeding the
// recorded model outputs step by step) against diffusers.
#include "tools/golden.h"
#include "sched/scheduler.h"

namespace vgen {

void golden_scheduler(GoldenCase& c) {
  VGEN_CHECK(c.params.contains("class") && c.params.contains("config") && c.params.contains("num_inference_steps"),
             ExitCode::kInput, "case {}: needs 'class', 'config' and 'num_inference_steps'", c.name);
  auto sched = make_scheduler(c.params["class"].get<std::string>(), c.params["config"]);
  sched->round_bf16 = c.bf16;
  const int n = c.params["num_inference_steps"].get<int>();
  sched->set_timesteps(n);
  const double tol = c.bf16 ? 3e-2 : 1e-4;

  std::vector<float> ts(sched->timesteps().begin(), sched->timesteps().end());
  c.exact("timesteps", Tensor::from_vector(ts, {int64_t(ts.size())}), c.tensors.get_f32("timesteps"));
  const auto& sg = sched->sigmas();
  c.rel_l2("sigmas", Tensor::from_vector(sg, {int64_t(sg.size())}), c.tensors.get_f32("sigmas"), tol);

  Tensor x = c.tensors.get_f32("sample0");
  Tensor outs = c.tensors.get_f32("model_outputs");  // [n, ...]
  Tensor ref = c.tensors.get_f32("samples");         // [n, ...]
  VGEN_CHECK(outs.dim(0) == n && ref.dim(0) == n, ExitCode::kInput, "case {}: {} steps but model_outputs {} samples {}",
             c.name, n, outs.str(), ref.str());
  for (int i = 0; i < n; ++i) {
    x = sched->step(outs[i], x);
    c.rel_l2(fmt::format("samples[{}]", i), x, ref[i], tol);
  }
}

}  // namespace vgen
