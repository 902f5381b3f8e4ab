// Golden cases pipeline_*: the whole pipeline (text encoder, the image condition of the case's
// `image` / `last_image`, denoising loop with CFG and the Wan 2.2 expert switch, VAE decode; with
// the case's LoRA adapters merged) from the case's initial latents, compared step by step with
// diffusers, and the preprocessed condition images when the case has them.
#include <cmath>
#include <filesystem>

#include "tools/golden.h"
#include "pipeline/video_pipeline.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// image_preprocessed / last_image_preprocessed [1, 3, H, W]: the VAE's condition images (host
// preprocessing on the replica leader in every precision), within the image_resize rule of one
// 8-bit level (2/255 in [-1, 1]) when a resize ran, exact otherwise.
void compare_condition_images(GoldenCase& c, const VideoOutput& out) {
  const char* names[] = {"image_preprocessed", "last_image_preprocessed"};
  for (int64_t i = 0; i < 2; ++i) {
    if (!c.tensors.has(names[i])) continue;
    Tensor ref = c.tensors.get_f32(names[i]);
    Tensor got = Tensor::zeros(ref.shape(), DType::kF32);
    const Tensor& pre = out.condition_images;  // [n, 3, H, W]
    if (c.mesh->is_replica_leader()) {
      VGEN_CHECK(pre.defined() && pre.dim(0) > i && pre[i].numel() == ref.numel(), ExitCode::kInput,
                 "case {}: condition images {} vs reference {} {}", c.name, pre.defined() ? pre.str() : "none",
                 names[i], ref.str());
      got.copy_from(pre[i].reshape(ref.shape()));
    }
    c.mesh->replica->broadcast(got, 0);
    c.max_abs(names[i], got, ref, 2.0 / 255.0 + 1e-6);
  }
}

}  // namespace

void golden_pipeline(GoldenCase& c) {
  const Json& p = c.params;
  Recipe r = *c.recipe;
  r.model = c.model_dir();
  GenerationConfig& g = r.generation;
  g.height = p.at("height").get<int>();
  g.width = p.at("width").get<int>();
  g.num_frames = p.at("num_frames").get<int>();
  g.num_inference_steps = p.at("num_inference_steps").get<int>();
  g.guidance_scale = p.at("guidance_scale").get<double>();
  g.guidance_scale_2 = p.contains("guidance_scale_2") && !p["guidance_scale_2"].is_null()
                           ? std::optional<double>(p["guidance_scale_2"].get<double>())
                           : std::nullopt;
  // A case without a length keeps the recipe's (a prompt that is not padded to one, e.g. token ids).
  if (p.contains("max_sequence_length")) g.max_sequence_length = p["max_sequence_length"].get<int>();
  // The video's frame rate where the pipeline takes one (its prompt and positions may depend on it).
  if (p.contains("fps") && !p["fps"].is_null()) r.output.fps = int(std::lround(p["fps"].get<double>()));
  g.negative_prompt = p.value("negative_prompt", "");
  std::string sched = p.value("scheduler", "UniPCMultistepScheduler");
  g.scheduler = sched.find("Euler") != std::string::npos ? SchedulerKind::kEuler : SchedulerKind::kUniPC;
  if (p.contains("flow_shift") && !p["flow_shift"].is_null()) g.flow_shift = p["flow_shift"].get<double>();
  g.boundary_ratio.reset();  // from model_index.json
  g.initial_latents.clear();
  r.text.cache_embeddings = false;
  // lora: [{file, scale}], files relative to the fixture set (the recipe's own adapters are replaced).
  r.lora.clear();
  if (p.contains("lora"))
    for (const Json& l : p["lora"]) {
      LoraEntry e;
      e.path = (fs::path(c.fixtures_dir) / l.at("file").get<std::string>()).string();
      e.scale = l.value("scale", 1.0);
      r.lora.push_back(e);
    }

  VideoPipeline pipe(r, *c.mesh);
  VideoJob job;
  job.prompt = p.at("prompt").get<std::string>();
  job.negative_prompt = g.negative_prompt;
  job.num_frames = g.num_frames;
  job.height = g.height;
  job.width = g.width;
  job.initial_latents = c.tensors.get_f32("initial_latents");
  if (p.contains("image")) job.image = (fs::path(c.fixtures_dir) / p["image"].get<std::string>()).string();
  if (p.contains("last_image"))
    job.last_image = (fs::path(c.fixtures_dir) / p["last_image"].get<std::string>()).string();
  std::vector<Tensor> steps;
  VideoOutput out = pipe.render(job, [&](const VideoJob&, const DenoiseStepInfo&, const Tensor& lat) {
    steps.push_back(lat.clone());
  });

  compare_condition_images(c, out);
  const bool fp8 = r.is_quantised();
  const double step_tol = fp8 ? golden_quantised_tolerance(r, "step_latents") : c.bf16 ? 5e-2 : 1e-3;
  Tensor ts = Tensor::empty({int64_t(out.step_timesteps.size())}, DType::kF32);
  for (size_t i = 0; i < out.step_timesteps.size(); ++i) ts.f32()[i] = float(out.step_timesteps[i]);
  c.exact("step_timesteps", ts, c.tensors.get_f32("step_timesteps"));
  Tensor ref_steps = c.tensors.get_f32("step_latents");  // [N, B, C, T, H, W]
  VGEN_CHECK(ref_steps.dim(0) == int64_t(steps.size()), ExitCode::kInput, "case {}: {} reference steps, ran {}", c.name,
             ref_steps.dim(0), steps.size());
  for (size_t i = 0; i < steps.size(); ++i)
    c.rel_l2("step_latents[" + std::to_string(i) + "]", steps[i], ref_steps[int64_t(i)], step_tol);

  // Frames [B, F, 3, H, W] in [0, 1]; the video reaches the replica leader, which shares it.
  Tensor ref = c.tensors.get_f32("frames");
  Tensor frames = Tensor::empty(ref.shape(), DType::kF32);
  if (c.mesh->is_replica_leader()) {
    const Tensor v = out.video.to(Device::kCPU).to(DType::kF32);  // [1, 3, F, H, W] in [-1, 1]
    const int64_t F = v.dim(2), HW = v.dim(3) * v.dim(4);
    VGEN_CHECK(ref.numel() == v.numel(), ExitCode::kInput, "case {}: video {} vs reference frames {}", c.name, v.str(),
               ref.str());
    for (int64_t ch = 0; ch < 3; ++ch)
      for (int64_t f = 0; f < F; ++f)
        for (int64_t i = 0; i < HW; ++i) {
          float x = v.f32()[(ch * F + f) * HW + i] * 0.5f + 0.5f;
          frames.f32()[(f * 3 + ch) * HW + i] = std::min(1.0f, std::max(0.0f, x));
        }
  }
  c.mesh->replica->broadcast(frames, 0);
  if (fp8)  // the fp8 noise reaches every pixel: a mean over the frames, as bf16
    c.mean_abs("frames", frames, ref, golden_quantised_tolerance(r, "frames"));
  else if (c.bf16)
    c.mean_abs("frames", frames, ref, 2e-2);
  else
    c.max_abs("frames", frames, ref, 2e-3);
}

}  // namespace vgen
