#include "sched/pipeline_sigmas.h"

#include <fmt/ranges.h>

#include "sched/scheduler.h"

namespace vgen {

std::vector<double> PipelineSigmas::for_steps(int n, int num_train_timesteps) const {
  VGEN_CHECK(n >= 1, ExitCode::kRecipe, "num_inference_steps must be >= 1, got {}", n);
  if (rule == Rule::kFixed) {
    VGEN_CHECK(size_t(n) == fixed.size(), ExitCode::kRecipe,
               "num_inference_steps {}: the checkpoint samples on a fixed schedule of {} sigmas ({}); set {} steps", n,
               fixed.size(), describe(), fixed.size());
    return fixed;
  }
  VGEN_CHECK(rule == Rule::kNativeFlow, ExitCode::kInternal, "pipeline sigmas: no rule");
  std::vector<double> s = np_linspace(1.0 - 1.0 / double(num_train_timesteps), 0.0, n + 1);
  s.pop_back();
  return s;
}

std::string PipelineSigmas::describe() const {
  switch (rule) {
    case Rule::kNone: return "the scheduler's own";
    case Rule::kNativeFlow: return "native flow: linspace(1 - 1/N, 0, steps + 1)[:-1]";
    case Rule::kFixed: return fmt::format("fixed [{}]", fmt::join(fixed, ", "));
  }
  return "";
}

PipelineSigmas PipelineSigmas::from_scheduler_config(const Json& j, const std::string& source) {
  PipelineSigmas s;
  if (!j.is_object() || !j.contains(kPipelineSigmasKey) || j[kPipelineSigmasKey].is_null()) return s;
  const Json& v = j[kPipelineSigmasKey];
  if (v.is_string() && v.get<std::string>() == "native_flow") {
    s.rule = Rule::kNativeFlow;
    return s;
  }
  VGEN_CHECK(v.is_array() && !v.empty(), ExitCode::kModel, "{}: '{}' must be \"native_flow\" or a list of sigmas, got {}",
             source, kPipelineSigmasKey, v.dump());
  for (const Json& e : v) {
    VGEN_CHECK(e.is_number(), ExitCode::kModel, "{}: '{}' holds a non-number: {}", source, kPipelineSigmasKey, e.dump());
    const double x = e.get<double>();
    VGEN_CHECK(x > 0.0 && x <= 1.0 && (s.fixed.empty() || x < s.fixed.back()), ExitCode::kModel,
               "{}: the fixed sigmas must fall strictly within (0, 1], got {}", source, v.dump());
    s.fixed.push_back(x);
  }
  s.rule = Rule::kFixed;
  return s;
}

Json with_pipeline_sigmas(Json scheduler_config, const PipelineSigmas& s) {
  if (s.rule == PipelineSigmas::Rule::kNativeFlow) scheduler_config[kPipelineSigmasKey] = "native_flow";
  if (s.rule == PipelineSigmas::Rule::kFixed) scheduler_config[kPipelineSigmasKey] = s.fixed;
  return scheduler_config;
}

}  // namespace vgen
