#include "model/plan_facts.h"

#include "core/error.h"

namespace vgen {

std::vector<bool> plan_bf16_linears(const PlanModel& m, const std::vector<std::string>& names) {
  std::vector<bool> bf16(m.block_linears.size(), false);
  for (size_t j = 0; j < names.size(); ++j) {
    const int i = m.linear_index(names[j]);
    if (i < 0) {
      std::string all;
      for (const PlanLinear& l : m.block_linears) all += (all.empty() ? "" : ", ") + l.name;
      VGEN_THROW(ExitCode::kRecipe, "fp8_config.bf16_linears[{}] is '{}', not a block linear; one of {}", j, names[j],
                 all);
    }
    bf16[size_t(i)] = true;
  }
  return bf16;
}

}  // namespace vgen
