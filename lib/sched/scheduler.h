// Flow-matching schedulers of the Wan pipeline (wan_spec.md §3): UniPC multistep (bh2, flow
// prediction; the default) and FlowMatchEulerDiscrete. Host f32 arithmetic on the latents.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/scheduler_kind.h"
#include "core/json.h"
#include "core/tensor.h"

namespace vgen {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual const char* name() const = 0;  // "unipc" | "euler" | "euler_sde"

  // Computes the schedule of n steps and resets the multistep state.
  virtual void set_timesteps(int n) = 0;
  // One update at step_index(): model_output (flow prediction v) and sample of the same shape, host
  // f32; returns the next sample and advances the step index.
  virtual Tensor step(const Tensor& model_output, const Tensor& sample) = 0;

  const std::vector<double>& timesteps() const { return timesteps_; }  // n entries
  bool integer_timesteps() const { return integer_timesteps_; }        // int64 in diffusers (UniPC)
  const std::vector<float>& sigmas() const { return sigmas_; }         // n + 1 entries, f32
  int step_index() const { return step_index_; }
  int num_inference_steps() const { return int(timesteps_.size()); }
  int num_train_timesteps() const { return num_train_timesteps_; }
  double shift() const { return shift_; }

  // bf16 path: emulate the bf16 roundings of the reference (e.g. bf16(σ·v)); off for fp32.
  bool round_bf16 = false;
  // The job's seed: a stochastic scheduler's per-step noise derives from it (euler_sde.h).
  uint64_t noise_seed = 0;

 protected:
  std::vector<double> timesteps_;
  bool integer_timesteps_ = false;
  std::vector<float> sigmas_;
  int step_index_ = 0;
  int num_train_timesteps_ = 1000;
  double shift_ = 1.0;
};

// Recipe-level choices that override the checkpoint's scheduler_config.json.
struct SchedulerOverrides {
  std::optional<SchedulerKind> kind;  // generation.scheduler
  std::optional<double> flow_shift;  // generation.flow_shift
};

// class_name: diffusers class ("UniPCMultistepScheduler", "FlowMatchEulerDiscreteScheduler");
// config: its config object. With overrides.kind set, that scheduler is built from the same
// config (num_train_timesteps, the shift and the pipeline's sigmas carry over: UniPC "flow_shift" ↔
// Euler "shift"; stochastic sampling does not). An Euler config with stochastic_sampling gives the
// stochastic Euler (euler_sde.h). overrides.flow_shift on a UniPC config with Karras sigmas gives
// flow sigmas at that shift instead (as diffusers' Cosmos 3 examples set it up).
// Unsupported settings throw kModel naming the key.
std::unique_ptr<Scheduler> make_scheduler(const std::string& class_name, const Json& config,
                                          const SchedulerOverrides& overrides = {});
// From a scheduler_config.json object (class in "_class_name").
std::unique_ptr<Scheduler> make_scheduler(const Json& scheduler_config, const SchedulerOverrides& overrides = {});

// numpy.linspace(start, stop, num) in float64, element for element (k·step + start, last = stop).
std::vector<double> np_linspace(double start, double stop, int num);

}  // namespace vgen
