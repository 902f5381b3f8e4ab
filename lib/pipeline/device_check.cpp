#include "pipeline/device_check.h"

#include "core/device_probe.h"
#include "core/log.h"

namespace vgen {

void preflight_device(const Recipe& recipe, bool will_run) {
#ifndef VGEN_WITH_CUDA
  if (recipe.is_cuda() && !will_run)
    log_warn_job("{}: device: cuda: this vgen was built without the CUDA backend (VGEN_CUDA=OFF) and cannot run it",
                 recipe.source_path);
  VGEN_CHECK(!recipe.is_cuda() || !will_run, ExitCode::kRecipe,
             "{}: device: cuda, but this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu "
             "or a CUDA build", recipe.source_path);
#else
  // A CUDA build on a host without a GPU (or without a driver): said before any work, with the
  // runtime's reason, by its own exit code.
  if (recipe.is_cuda() && will_run) {
    const DeviceCount d = cuda_device_probe();
    if (d.count == 0) throw_no_device(d.reason);
  }
#endif
  if (!recipe.is_cuda()) {
    if (recipe.is_bf16())
      log_warn_job("{}: precision bf16 on device: cpu: the models compute in fp32; only the latents between "
                   "denoising steps are rounded to bf16", recipe.source_path);
    if (recipe.attention.backend != AttentionBackend::kAuto)
      log_warn_job("{}: attention_config.backend {} has no effect on device: cpu", recipe.source_path,
                   attention_backend_name(recipe.attention.backend));
  }
}

}  // namespace vgen
