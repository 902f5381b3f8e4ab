#include "sched/scheduler.h"

#include "core/log.h"
#include "sched/euler.h"
#include "sched/euler_sde.h"
#include "sched/unipc.h"

namespace vgen {

std::vector<double> np_linspace(double start, double stop, int num) {
  std::vector<double> y(size_t(std::max(num, 0)));
  if (num == 1) y[0] = start;
  if (num < 2) return y;
  const double step = (stop - start) / double(num - 1);
  for (int k = 0; k < num; ++k) y[size_t(k)] = double(k) * step + start;
  y.back() = stop;
  return y;
}

namespace {

enum class Kind { kUniPC, kEuler };

Kind kind_of_class(const std::string& class_name) {
  if (class_name == "UniPCMultistepScheduler") return Kind::kUniPC;
  if (class_name == "FlowMatchEulerDiscreteScheduler") return Kind::kEuler;
  VGEN_THROW(ExitCode::kModel,
             "scheduler class '{}' is not supported (UniPCMultistepScheduler or FlowMatchEulerDiscreteScheduler)",
             class_name);
}

Kind kind_of(SchedulerKind k) { return k == SchedulerKind::kEuler ? Kind::kEuler : Kind::kUniPC; }

}  // namespace

std::unique_ptr<Scheduler> make_scheduler(const std::string& class_name, const Json& config,
                                          const SchedulerOverrides& ov) {
  const Kind native = kind_of_class(class_name);
  const Kind kind = ov.kind ? kind_of(*ov.kind) : native;
  const std::string source = "scheduler config (" + class_name + ")";
  if (ov.flow_shift)
    VGEN_CHECK(*ov.flow_shift > 0, ExitCode::kRecipe, "generation.flow_shift must be > 0, got {}", *ov.flow_shift);
  if (kind == Kind::kUniPC) {
    UniPCConfig c;
    if (native == Kind::kUniPC) {
      c = UniPCConfig::from_json(config, source);
    } else {  // Euler checkpoint, UniPC requested: keep the training length and shift
      EulerConfig e = EulerConfig::from_json(config, source);
      c.num_train_timesteps = e.num_train_timesteps;
      c.flow_shift = e.shift;
      c.sigmas = e.sigmas;
    }
    if (ov.flow_shift) c.flow_shift = *ov.flow_shift;
    if (ov.flow_shift && c.karras) {
      // A shift acts on flow sigmas only: they replace Karras', as diffusers' Cosmos 3 examples
      // configure it (from_config(..., flow_shift=..., use_karras_sigmas=False)).
      c.karras = false;
      log_debug("generation.flow_shift {}: flow sigmas replace the checkpoint's Karras sigmas", *ov.flow_shift);
    }
    return std::make_unique<UniPCScheduler>(c);
  }
  EulerConfig c;
  if (native == Kind::kEuler) {
    c = EulerConfig::from_json(config, source);
  } else {
    UniPCConfig u = UniPCConfig::from_json(config, source);
    VGEN_CHECK(!u.karras || ov.flow_shift, ExitCode::kRecipe,
               "generation.scheduler euler: the checkpoint's UniPC asks for Karras sigmas (use_karras_sigmas), "
               "which the Euler scheduler does not take; set generation.flow_shift for flow sigmas");
    c.num_train_timesteps = u.num_train_timesteps;
    c.shift = u.flow_shift;
    c.sigmas = u.sigmas;
  }
  if (ov.flow_shift) c.shift = *ov.flow_shift;
  if (c.stochastic) return std::make_unique<StochasticEulerScheduler>(c);
  return std::make_unique<FlowMatchEulerScheduler>(c);
}

std::unique_ptr<Scheduler> make_scheduler(const Json& scheduler_config, const SchedulerOverrides& ov) {
  VGEN_CHECK(scheduler_config.is_object() && scheduler_config.contains("_class_name") &&
                 scheduler_config["_class_name"].is_string(),
             ExitCode::kModel, "scheduler_config.json has no '_class_name'");
  return make_scheduler(scheduler_config["_class_name"].get<std::string>(), scheduler_config, ov);
}

}  // namespace vgen
