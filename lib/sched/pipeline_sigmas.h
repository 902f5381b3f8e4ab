// Sigmas a pipeline hands to its scheduler's set_timesteps (diffusers' `sigmas=` argument), decided
// by the pipeline's own config rather than the scheduler's: a rule over the step count or a fixed
// list. They travel inside the scheduler config under one reserved key (the family that reads its
// pipeline config writes it), so make_scheduler builds every scheduler from one object.
#pragma once
#include <string>
#include <vector>

#include "core/json.h"

namespace vgen {

struct PipelineSigmas {
  enum class Rule { kNone, kNativeFlow, kFixed };
  Rule rule = Rule::kNone;
  std::vector<double> fixed;  // kFixed: one sigma per step, before the scheduler's shift

  bool any() const { return rule != Rule::kNone; }
  // The n sigmas handed to set_timesteps for n steps: kNativeFlow linspace(1 − 1/N, 0, n + 1)[:-1]
  // (float64, as numpy), kFixed the list (n must be its length: kRecipe otherwise).
  std::vector<double> for_steps(int n, int num_train_timesteps) const;
  std::string describe() const;  // for logs and errors

  // From the reserved key of a scheduler config (absent → kNone); `source` names it in errors (kModel).
  static PipelineSigmas from_scheduler_config(const Json& j, const std::string& source);
};

// The reserved key: "native_flow" or an array of sigmas.
inline constexpr const char* kPipelineSigmasKey = "_vgen_pipeline_sigmas";

// `scheduler_config` with `s` written under the reserved key (unchanged for kNone).
Json with_pipeline_sigmas(Json scheduler_config, const PipelineSigmas& s);

}  // namespace vgen
