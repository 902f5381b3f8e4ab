// The Cosmos 3 denoising loop on the host in fp32 against the pipeline cases of tests/golden-cosmos3
// (diffusers Cosmos3OmniPipeline): the prompt ids of the case, one prefill per prompt, per step the
// cond and uncond forwards, CFG and the checkpoint's UniPC scheduler; then the Wan 2.2 VAE decode of
// the final latents. T2V (every latent frame noisy) and I2V (the first latent frame clean).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/json.h"
#include "cosmos3_test_util.h"
#include "io/safetensors.h"
#include "model/cosmos3/transformer.h"
#include "model/wan/vae/vae_decoder.h"
#include "model/wan/vae/vae_encoder.h"
#include "ops/elementwise.h"
#include "sched/scheduler.h"

namespace vgen {
namespace {

using testing::ids_of;

const std::string kRoot = testing::kCosmos3Fixtures;

double rel_l2(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.numel(), b.numel()) << a.str() << " vs " << b.str();
  double num = 0, den = 0;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i) {
    const double d = double(a.f32()[i]) - double(b.f32()[i]);
    num += d * d;
    den += double(b.f32()[i]) * double(b.f32()[i]);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

// frames [F, H, W, 3] (to_frames01) against the pipeline's [F, 3, H, W]: max |a − b|.
double frames_max_abs(const Tensor& fhwc, const Tensor& fchw) {
  const int64_t F = fchw.dim(0), C = fchw.dim(1), H = fchw.dim(2), W = fchw.dim(3);
  EXPECT_EQ(fhwc.shape(), Shape({F, H, W, C}));
  double m = 0;
  for (int64_t f = 0; f < F; ++f)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          m = std::max(m, std::fabs(double(fhwc.f32()[((f * H + y) * W + x) * C + c]) -
                                    double(fchw.f32()[((f * C + c) * H + y) * W + x])));
  return m;
}

void run_pipeline_case(const std::string& name, const std::vector<int64_t>& clean_frames) {
  SCOPED_TRACE(name);
  const Json p = read_json_file(kRoot + "/cases/" + name + ".json", ExitCode::kInput);
  const WeightStore ws = WeightStore::open(kRoot + "/cases/" + name + ".safetensors");
  const std::string model_dir = kRoot + "/" + p["model_dir"].get<std::string>();
  const Cosmos3Transformer model = Cosmos3Transformer::load(model_dir + "/transformer", Device::kCPU, DType::kF32);
  auto sched = make_scheduler(read_json_file(model_dir + "/scheduler/scheduler_config.json", ExitCode::kModel));
  const int steps = p["num_inference_steps"].get<int>();
  const float gs = p["guidance_scale"].get<float>();
  sched->set_timesteps(steps);

  const Cosmos3PromptKv cond = model.prefill(ids_of(ws, "input_ids_cond"));
  const Cosmos3PromptKv uncond = model.prefill(ids_of(ws, "input_ids_uncond"));
  Cosmos3VideoInput in;
  in.latents = ws.get_f32("initial_latents").clone();  // [1, 48, T, H, W]
  in.fps = p["fps"].get<double>();
  for (int64_t f = 0; f < in.latents.dim(2); ++f)
    if (std::find(clean_frames.begin(), clean_frames.end(), f) == clean_frames.end()) in.noisy_frames.push_back(f);
  const Tensor ref_steps = ws.get_f32("step_latents"), ref_t = ws.get_f32("step_timesteps");
  for (int i = 0; i < steps; ++i) {
    const double t = sched->timesteps()[size_t(i)];
    EXPECT_EQ(float(t), ref_t.f32()[i]) << "timestep of step " << i;
    in.timestep = float(t);
    const Tensor v = cfg_combine(model.forward(cond, in), model.forward(uncond, in), gs);  // [1, 48, T, H, W]
    in.latents = sched->step(v, in.latents);
    const double e = rel_l2(in.latents, ref_steps[i]);
    std::printf("  step %d (t %.0f) latents rel-l2 %.3e (tol 1e-3)\n", i, t, e);
    EXPECT_LE(e, 1e-3) << "step " << i;
  }
  const WanVaeDecoder dec = WanVaeDecoder::load(model_dir + "/vae");
  const Tensor frames = to_frames01(dec.decode(vae_denormalize(in.latents, dec.config())));  // [F, H, W, 3]
  const double e = frames_max_abs(frames, ws.get_f32("frames"));
  std::printf("  frames max-abs %.3e (tol 2e-3)\n", e);
  EXPECT_LE(e, 2e-3);
}

TEST(GoldenCosmos3Pipeline, TextToVideo) { run_pipeline_case("pipeline_t2v", {}); }
TEST(GoldenCosmos3Pipeline, ImageToVideoLatents) { run_pipeline_case("pipeline_i2v", {0}); }

// The I2V condition: the preprocessed image repeated over every frame, the posterior's mode,
// normalised (what prepare_latents puts into the first latent frame).
TEST(GoldenCosmos3Pipeline, ImageToVideoConditionLatents) {
  const Json p = read_json_file(kRoot + "/cases/pipeline_i2v.json", ExitCode::kInput);
  const WeightStore ws = WeightStore::open(kRoot + "/cases/pipeline_i2v.safetensors");
  const WanVaeEncoder enc = WanVaeEncoder::load(kRoot + "/" + p["model_dir"].get<std::string>() + "/vae");
  const Tensor image = ws.get_f32("image_preprocessed");  // [1, 3, H, W]
  const int64_t F = p["num_frames"].get<int64_t>(), H = image.dim(2), W = image.dim(3), plane = H * W;
  Tensor video = Tensor::empty({1, 3, F, H, W}, DType::kF32);  // [1, 3, F, H, W]
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t f = 0; f < F; ++f)
      std::copy(image.f32() + c * plane, image.f32() + (c + 1) * plane, video.f32() + (c * F + f) * plane);
  const Tensor z = vae_normalize(enc.encode_mode(video), enc.config());  // [1, 48, T, h, w]
  const double e = rel_l2(z, ws.get_f32("condition_latents"));
  std::printf("  condition latents rel-l2 %.3e (tol 1e-4)\n", e);
  EXPECT_LE(e, 1e-4);
}

}  // namespace
}  // namespace vgen
