// generation.scheduler of the recipe: which flow-matching scheduler steps the latents (the
// checkpoint's scheduler_config.json gives its settings; sched/scheduler.h).
#pragma once
#include <cstdint>

#include "config/named.h"

namespace vgen {

enum class SchedulerKind : uint8_t { kUniPC, kEuler };
inline constexpr Named<SchedulerKind> kSchedulerKindNames[] = {{SchedulerKind::kUniPC, "unipc"},
                                                               {SchedulerKind::kEuler, "euler"}};
inline const char* scheduler_kind_name(SchedulerKind k) { return name_in(kSchedulerKindNames, k); }

}  // namespace vgen
