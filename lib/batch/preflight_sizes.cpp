#include "batch/preflight_sizes.h"

#include "core/log.h"
#include "plan/plan_fit.h"

namespace vgen {
namespace {

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / double(1ull << 30)); }

// CFG on two ranks computes the unconditional stream on the cfg-1 ranks; with guidance <= 1 there is
// none (CFG is off), so those ranks idle through every step.
void warn_idle_cfg(const Recipe& recipe) {
  const GenerationConfig& g = recipe.generation;
  if (recipe.parallel.cfg_size != 2 || g.guidance_scale > 1.0) return;
  log_warn_job("{}: parallel_config.cfg_size 2 with generation.guidance_scale {} (<= 1): CFG is off, so there is no "
               "unconditional stream and the cfg-1 ranks (half of the job) idle through every step; set "
               "parallel_config.cfg_size 1 and give those ranks to ulysses_size or dp_size, or guidance_scale > 1",
               recipe.source_path.empty() ? "recipe" : recipe.source_path, g.guidance_scale);
}

}  // namespace

void preflight_sizes(const Recipe& recipe, const SizeLimits& limits, const std::string& prompts_path,
                     std::vector<PromptItem>& prompts) {
  for (PromptItem& it : prompts) {
    if (!it.ok() || !it.num_frames) continue;
    const std::string why = frames_problem(*it.num_frames, limits);
    if (why.empty()) continue;
    it.error = fmt::format("{}:{}: num_frames: {}", prompts_path, it.line, why);
    log_warn_job("{} (prompt {} will be marked failed)", it.error, it.index);
  }
  warn_idle_cfg(recipe);
}

void preflight_line_sizes(const SizeLimits& limits, const std::string& prompts_path, std::vector<PromptItem>& prompts) {
  for (PromptItem& it : prompts) {
    if (!it.ok() || !it.height || !it.width) continue;
    std::string why = pixels_problem(*it.height, 1, limits);
    if (why.empty()) why = pixels_problem(*it.width, 2, limits);
    if (why.empty()) continue;
    it.error = fmt::format("{}:{}: image {}: its frame size {}x{} (generation.image_max_area): {}", prompts_path,
                           it.line, it.image ? it.image->path : "?", *it.width, *it.height, why);
    log_warn_job("{} (prompt {} will be marked failed)", it.error, it.index);
  }
}

void check_device_memory(const Recipe& recipe, int world, const PlanModel& model, const DeviceMemoryInfo& gpu,
                         int ranks_on_device) {
  const int sharing = std::max(ranks_on_device, 1);
  const double estimate = plan_memory_total(make_plan(recipe, world, model, /*with_ranks=*/false));
  if (estimate * sharing <= double(gpu.free_bytes)) return;
  // The advice as for an out-of-memory (plan/plan_fit.h), for this rank's share of the free memory.
  const DeviceOomAdvice advice = plan_fit_advice(recipe, world, model, double(gpu.free_bytes) / sharing);
  VGEN_THROW(ExitCode::kDeviceOutOfMemory,
             "device memory: GPU {} ({}) has {} free of {}{}, less than vgen plan's estimate for this recipe; nothing "
             "was loaded. {}",
             gpu.device, gpu.name, gib(double(gpu.free_bytes)), gib(double(gpu.total_bytes)),
             sharing > 1 ? fmt::format(", shared by {} ranks of this node", sharing) : std::string(), advice.text);
}

void preflight_device_memory(const Recipe& recipe, const DistEnv& env) {
  if (!recipe.is_cuda()) return;
  const DeviceCount d = cuda_device_probe();
  if (d.count <= 0) return;  // preflight_device said so already (kNoDevice)
  const int device = env.local_rank % d.count;
  const std::optional<DeviceMemoryInfo> gpu = cuda_device_memory(device);
  if (!gpu) {
    log_debug("device memory: CUDA device {} does not report its memory; not checked before the load", device);
    return;
  }
  // Local ranks l with l % count == device share it.
  const int sharing = (env.local_size - 1 - device) / d.count + 1;
  check_device_memory(recipe, env.world_size, read_plan_model(recipe), *gpu, sharing);
}

}  // namespace vgen
