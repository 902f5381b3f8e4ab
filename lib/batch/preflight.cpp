#include "batch/preflight.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "batch/preflight_images.h"
#include "batch/preflight_sizes.h"
#include "core/log.h"
#include "dist/mesh.h"
#include "io/diffusers_dir.h"
#include "io/mp4_writer.h"
#include "io/safetensors.h"
#include "model/registry.h"
#include "pipeline/device_check.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

std::string absolute(const std::string& p) { return p.empty() ? p : fs::absolute(p).lexically_normal().string(); }

}  // namespace

void preflight_model(const Recipe& recipe, int world_size, int* num_heads, SizeLimits* limits,
                     ModelTraits* traits) {
  VGEN_CHECK(!recipe.model.empty(), ExitCode::kRecipe, "{}: model: required key is missing (path of a Diffusers "
             "pipeline directory)", recipe.source_path);
  preflight_device(recipe, /*will_run=*/true);
  validate_mesh(recipe.parallel, world_size, 0);  // the world size is checked before the model
  DiffusersDir dir(recipe.model);
  const ModelFamily& family = model_family(dir);
  const int heads = family.check_configs(dir);
  validate_mesh(recipe.parallel, world_size, heads);
  family.check_weights(dir);
  family.check_recipe(recipe, dir);  // e.g. fp8_config's block lists against the model's blocks
  const SizeLimits sizes = family.size_limits(dir);
  check_generation_sizes(recipe, sizes);  // frames, pixels and prompt tokens, before any allocation
  if (num_heads) *num_heads = heads;
  if (limits) *limits = sizes;
  if (traits) *traits = family.traits(dir);
}

void check_output_dir(const std::string& dir) {
  VGEN_CHECK(!dir.empty(), ExitCode::kOutput, "output.dir is empty");
  std::error_code ec;
  fs::create_directories(dir, ec);
  VGEN_CHECK(!ec && fs::is_directory(dir), ExitCode::kOutput, "cannot create output directory {}: {}", dir,
             ec ? ec.message() : std::string("a file of that name exists"));
  std::string probe =
      (fs::path(dir) / fmt::format(".vgen-write-probe.{}.{}", process_rank(), static_cast<long>(getpid()))).string();
  FILE* f = std::fopen(probe.c_str(), "wb");
  VGEN_CHECK(f, ExitCode::kOutput, "output directory {} is not writable: {}", dir, std::strerror(errno));
  int err = 0;  // the OS's reason (ENOSPC on a full disk, EDQUOT...)
  if (std::fputs("probe\n", f) < 0 || std::fflush(f) != 0) err = errno;
  if (std::fclose(f) != 0 && !err) err = errno;
  std::remove(probe.c_str());
  VGEN_CHECK(!err, ExitCode::kOutput, "output directory {} is not writable: {}", dir, std::strerror(err));
}

PreflightResult preflight_run(const Recipe& recipe, const RunOptions& opts, const DistEnv& env) {
  PreflightResult r;
  SizeLimits limits;
  ModelTraits traits;
  preflight_model(recipe, env.world_size, &r.num_heads, &limits, &traits);

  const std::string& lat = recipe.generation.initial_latents;
  if (!lat.empty()) {
    VGEN_CHECK(fs::is_regular_file(lat), ExitCode::kInput, "generation.initial_latents: file {} does not exist", lat);
    try {
      WeightStore ws = WeightStore::open(lat);
      VGEN_CHECK(ws.has("initial_latents"), ExitCode::kInput, "{}: no tensor 'initial_latents'", lat);
    } catch (const Error& e) {
      if (e.code() == ExitCode::kInput) throw;
      VGEN_THROW(ExitCode::kInput, "generation.initial_latents: {}", e.message());
    }
  }

  r.prompts_path = absolute(opts.prompts_override.empty() ? recipe.prompts : opts.prompts_override);
  r.prompts = load_prompts(r.prompts_path);
  preflight_sizes(recipe, limits, r.prompts_path, r.prompts);  // each line's num_frames; the CFG warning
  // Each line's images: decoded, hashed and checked against the checkpoint; the ranks agree on the
  // failed lines after the preflight (agree_on_prompt_errors), which counts them.
  ImageInputRules rules = image_input_rules(traits, recipe.model);
  rules.image_max_area = recipe.generation.image_max_area;
  preflight_images(rules, r.prompts_path, r.prompts);
  preflight_line_sizes(limits, r.prompts_path, r.prompts);  // sizes from images (generation.image_max_area)

  r.out_dir = absolute(opts.out_override.empty() ? recipe.output.dir : opts.out_override);
  check_output_dir(r.out_dir);
  {  // the encoder write_video will use: an FFmpeg that cannot write these videos fails now, not per video
    VideoOptions vopt;
    vopt.fps = recipe.output.fps.value_or(16);
    vopt.crf = recipe.output.crf;
    check_video_encoder(recipe.generation.width, recipe.generation.height, vopt,
                        "output (H.264 for " + std::to_string(recipe.generation.width) + "x" +
                            std::to_string(recipe.generation.height) + " videos)");
  }
  preflight_device_memory(recipe, env);  // last: the plan's estimate against this rank's GPU
  if (opts.retry_failed) {
    std::string timing = (fs::path(r.out_dir) / "timing.json").string();
    VGEN_CHECK(fs::is_regular_file(timing), ExitCode::kInput,
               "--retry-failed: no previous {} to take the failed prompts from", timing);
  }
  return r;
}

}  // namespace vgen
