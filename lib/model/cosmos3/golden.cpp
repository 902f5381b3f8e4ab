// The Cosmos 3 component cases of tests/golden-cosmos3 through `vgen golden` (README there): mRoPE
// ids and tables, the understanding tower's K/V, one transformer forward (cond and uncond prompts,
// every frame noisy and a clean first frame). Host fp32 tolerances of the README; on the device in
// bf16, 3e-2 (the device tests' bound); precision fp8 (the forward's generation tower), the fp8
// tolerance of a DiT forward (golden_fp8_tolerance: the CPU emulation's or the GPU's).
#include <cmath>
#include <string>
#include <vector>

#include "dist/device_mesh.h"
#include "io/recipe.h"
#include "model/cosmos3/family.h"
#include "model/cosmos3/fp8_options.h"
#include "model/cosmos3/mrope.h"
#include "model/cosmos3/transformer.h"
#include "model/golden_case.h"

namespace vgen {
namespace {

std::string transformer_dir(const GoldenCase& c) { return c.model_dir() + "/transformer"; }

std::vector<int64_t> case_ids(const GoldenCase& c, const std::string& name) {
  const Tensor t = c.tensors.get(name);
  VGEN_CHECK(t.dtype() == DType::kI64, ExitCode::kInput, "case {}: {} is not int64", c.name, name);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

// On the recipe's device in its compute dtype; precision fp8: the generation tower's quantised
// copies (every forward of a case runs in fp8: no denoising steps here).
Cosmos3Transformer load_model(const GoldenCase& c) {
  const bool cuda = c.recipe && c.recipe->is_cuda();
  VGEN_CHECK(!c.recipe || !c.recipe->is_fp4(), ExitCode::kRecipe, "precision fp4 is not implemented for Cosmos 3");
  if (cuda) select_mesh_device();  // every rank runs the case: the collective selection is safe here
  Cosmos3Transformer model = Cosmos3Transformer::load(transformer_dir(c), cuda ? Device::kCUDA : Device::kCPU,
                                                      c.recipe ? c.recipe->compute_dtype() : DType::kF32);
  if (c.recipe) {
    model.attention_policy.backend = c.recipe->attention.backend;
    model.enable_fp8(cosmos3_fp8_options(*c.recipe));
  }
  return model;
}

// The understanding tower (never in fp8) and, outside precision fp8, the forward.
double forward_tol(const GoldenCase& c) { return c.bf16 ? 3e-2 : 1e-4; }
// The forward: precision fp8's tolerance of one DiT forward (golden_case.h), else forward_tol.
double velocity_tol(const GoldenCase& c) {
  return c.recipe && c.recipe->is_fp8() ? golden_quantised_tolerance(*c.recipe, "dit_forward") : forward_tol(c);
}

// diffusers' table layout cat(f(angles), f(angles)) [N, Dh] from angles [N, Dh/2].
Tensor half_layout(const Tensor& angles, bool cosine) {
  const int64_t N = angles.dim(0), half = angles.dim(1);
  Tensor t = Tensor::empty({N, 2 * half}, DType::kF32);  // [N, Dh]
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < half; ++j) {
      const double a = angles.f32()[n * half + j];
      t.f32()[n * 2 * half + j] = t.f32()[n * 2 * half + half + j] = float(cosine ? std::cos(a) : std::sin(a));
    }
  return t;
}

void golden_mrope(GoldenCase& c) {
  const Cosmos3Config cfg = Cosmos3Config::load(transformer_dir(c));
  const Json& g = c.params.at("grid");
  const Tensor ids = mrope_position_ids(cfg, c.params.at("prompt_len").get<int64_t>(),
                                        {g[0].get<int64_t>(), g[1].get<int64_t>(), g[2].get<int64_t>()},
                                        c.params.at("fps").get<double>(), c.params.at("temporal_compression").get<int>());
  c.exact("position_ids", ids, c.tensors.get_f32("position_ids"));
  const std::vector<float> inv = mrope_inv_freq(cfg);
  c.exact("inv_freq", Tensor::from_vector(inv, {int64_t(inv.size())}), c.tensors.get_f32("inv_freq"));
  const Tensor ang = mrope_angles(cfg, ids);  // [N, Dh/2]
  c.max_abs("cos", half_layout(ang, true), c.tensors.get_f32("cos"), 1e-5);
  c.max_abs("sin", half_layout(ang, false), c.tensors.get_f32("sin"), 1e-5);
}

void golden_und_kv(GoldenCase& c) {
  const Cosmos3Transformer model = load_model(c);
  const Cosmos3PromptKv kv = model.prefill(case_ids(c, "input_ids"));
  const int64_t layers = c.params.at("num_layers").get<int64_t>();
  VGEN_CHECK(int64_t(kv.k.size()) == layers, ExitCode::kInput, "case {}: {} layers, the model has {}", c.name, layers,
             kv.k.size());
  for (int64_t i = 0; i < layers; ++i) {
    // The keys are kept in the rope_ pair layout (weights.h): permute the reference the same way.
    const Tensor k_ref = c.tensors.get_f32("k_" + std::to_string(i));
    const Tensor k_pairs = permute_rope_rows(k_ref.reshape({k_ref.numel(), 1}), model.config().head_dim);
    const Tensor k = kv.k[size_t(i)].to(Device::kCPU).to(DType::kF32), v = kv.v[size_t(i)].to(Device::kCPU).to(DType::kF32);
    c.rel_l2("k_" + std::to_string(i), k, k_pairs, forward_tol(c));
    c.rel_l2("v_" + std::to_string(i), v, c.tensors.get_f32("v_" + std::to_string(i)), forward_tol(c));
  }
}

void golden_transformer_forward(GoldenCase& c) {
  const Cosmos3Transformer model = load_model(c);
  const Cosmos3PromptKv cond = model.prefill(case_ids(c, "input_ids_cond"));
  const Cosmos3PromptKv uncond = model.prefill(case_ids(c, "input_ids_uncond"));
  for (const char* mode : {"t2v", "i2v"}) {
    Cosmos3VideoInput in;
    in.latents = c.tensors.get_f32("latents");  // [1, 48, T, H, W]
    in.timestep = c.params.at("timestep").get<float>();
    in.fps = c.params.at("fps").get<double>();
    in.noisy_frames = c.params.at("noisy_frames").at(mode).get<std::vector<int64_t>>();
    for (const auto& [which, kv] : {std::pair{"cond", &cond}, std::pair{"uncond", &uncond}}) {
      const std::string what = std::string("velocity_") + mode + "_" + which;
      c.rel_l2(what, model.forward(*kv, in).to(Device::kCPU), c.tensors.get_f32(what), velocity_tol(c));
    }
  }
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

bool Cosmos3Family::run_golden_case(const std::string& kind, GoldenCase& c) const {
  // Kinds by prefix: the set names a case per checkpoint style (mrope_video, mrope_video_edge, ...).
  if (starts_with(kind, "mrope_")) golden_mrope(c);
  else if (starts_with(kind, "und_kv")) golden_und_kv(c);
  else if (starts_with(kind, "transformer_forward")) golden_transformer_forward(c);
  else return false;
  return true;
}

}  // namespace vgen
