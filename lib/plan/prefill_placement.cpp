#include "plan/prefill_placement.h"

#include <optional>

#include "core/device_probe.h"
#include "core/gpu_info.h"
#include "core/log.h"
#include "plan/hardware_choice.h"
#include "plan/plan_fit.h"

namespace vgen {
namespace {

constexpr double kGiB = double(1ull << 30);
constexpr double kBudget = 0.95;  // of the GPU's memory, as plan_fit_advice and Prediction::fits

std::string gib(double b) { return fmt::format("{:.1f} GiB", b / kGiB); }

double estimate(const Recipe& recipe, int world, const PlanModel& model, bool streamed) {
  PlanModel m = model;
  m.prompt_prefix->streamed = streamed;
  return plan_memory_total(make_plan(recipe, world, m, false));
}

}  // namespace

bool prefill_should_stream(double resident_bytes, double streamed_bytes, double device_bytes) {
  const double budget = kBudget * device_bytes;
  return resident_bytes > budget && streamed_bytes <= budget;
}

PrefillPlacement place_prefill(const Recipe& recipe, int world, PlanModel& model, double device_bytes,
                               const std::string& gpu) {
  PrefillPlacement p;
  if (!model.prompt_prefix || !recipe.is_cuda() || recipe.text.device != TextDevice::kAuto || device_bytes <= 0)
    return p;
  p.decided = true;
  p.device_bytes = device_bytes;
  p.resident_bytes = estimate(recipe, world, model, false);
  p.streamed_bytes = estimate(recipe, world, model, true);
  p.streamed = prefill_should_stream(p.resident_bytes, p.streamed_bytes, device_bytes);
  const std::string budget = fmt::format("95% of {}'s {}", gpu, gib(device_bytes));
  if (p.streamed)
    p.why = fmt::format("text.device auto: the estimate with it resident, {}, exceeds {}; streamed, {}",
                        gib(p.resident_bytes), budget, gib(p.streamed_bytes));
  else if (p.resident_bytes <= kBudget * device_bytes)
    p.why = fmt::format("text.device auto: the estimate with it resident, {}, fits {}", gib(p.resident_bytes), budget);
  else
    p.why = fmt::format("text.device auto: neither the estimate with it resident, {}, nor streamed, {}, fits {}",
                        gib(p.resident_bytes), gib(p.streamed_bytes), budget);
  model.prompt_prefix->streamed = p.streamed;
  model.prompt_prefix->why = p.why;
  return p;
}

PrefillPlacement place_prefill(const Recipe& recipe, int world, PlanModel& model, const HardwareProfile& hw) {
  return place_prefill(recipe, world, model, hw.memory_gib * kGiB, "hardware profile " + hw.name);
}

void resolve_prefill_placement(Recipe& recipe, int world, int local_rank) {
  if (!recipe.is_cuda() || recipe.text.device != TextDevice::kAuto) return;
  try {
    PlanModel model = read_plan_model(recipe);
    if (!model.prompt_prefix) return;
    double device_bytes = 0;
    std::string gpu;
    const DeviceCount d = cuda_device_probe();
    if (d.count > 0)
      if (const std::optional<DeviceMemoryInfo> m = cuda_device_memory(local_rank % d.count)) {
        device_bytes = double(m->total_bytes);
        gpu = fmt::format("GPU {} ({})", m->device, m->name);
      }
    if (device_bytes <= 0)
      if (const std::optional<HardwareProfile> hw = known_hardware(recipe, first_gpu_name())) {
        device_bytes = hw->memory_gib * kGiB;
        gpu = fmt::format("hardware profile {}", hw->name);
      }
    const PrefillPlacement p = place_prefill(recipe, world, model, device_bytes, gpu);
    if (!p.decided) return;
    if (p.streamed) recipe.text.device = TextDevice::kStream;
    recipe.resolved["text"]["device_choice"] = {{"understanding_tower", p.streamed ? "stream" : "resident"},
                                                {"estimate_resident_bytes", p.resident_bytes},
                                                {"estimate_streamed_bytes", p.streamed_bytes},
                                                {"device_bytes", p.device_bytes},
                                                {"why", p.why}};
    log_info("understanding tower {} ({})", p.streamed ? "streamed from host memory for the prefill" : "resident",
             p.why);
  } catch (const Error& e) {  // the preflight reports what is wrong with the recipe or the model
    log_debug("text.device auto: not weighed ({})", e.message());
  }
}

}  // namespace vgen
