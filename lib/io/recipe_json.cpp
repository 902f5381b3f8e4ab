// The resolved recipe as JSON (recipe.h): every key with its value after defaults and `--set`
// overrides, as timing.json and `vgen plan --json` record it.
#include "io/recipe.h"

namespace vgen {
namespace {

Json opt_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

Json recipe_to_json(const Recipe& r) {
  const auto& g = r.generation;
  const auto& pc = r.parallel;
  Json j;
  j["model"] = r.model;
  j["device"] = device_name(r.device);
  j["precision"] = precision_name(r.precision);
  j["hardware"] = r.hardware.empty() ? Json(nullptr) : Json(r.hardware);
  j["generation"] = {{"height", g.height},
                     {"width", g.width},
                     {"num_frames", g.num_frames},
                     {"num_inference_steps", g.num_inference_steps},
                     {"guidance_scale", g.guidance_scale},
                     {"guidance_scale_2", opt_json(g.guidance_scale_2)},
                     {"boundary_ratio", opt_json(g.boundary_ratio)},
                     {"scheduler", scheduler_kind_name(g.scheduler)},
                     {"flow_shift", opt_json(g.flow_shift)},
                     {"negative_prompt", g.negative_prompt},
                     {"max_sequence_length", g.max_sequence_length},
                     {"seed", g.seed},
                     {"image_max_area", g.image_max_area},
                     {"initial_latents", g.initial_latents.empty() ? Json(nullptr) : Json(g.initial_latents)}};
  j["parallel_config"] = {{"dp_size", pc.dp_size},
                          {"cfg_size", pc.cfg_size},
                          {"ulysses_size", pc.ulysses_size},
                          {"ring_size", pc.ring_size},
                          {"attn2d_size", {pc.attn2d_size[0], pc.attn2d_size[1]}},
                          {"async_ulysses", pc.async_ulysses},
                          {"parallel_vae_size", pc.parallel_vae_size},
                          {"parallel_vae_split_dim", vae_split_dim_name(pc.parallel_vae_split_dim)},
                          {"dwdp_size", pc.dwdp_size},
                          {"dwdp_transport", dwdp_transport_name(pc.dwdp_transport)},
                          {"auto", pc.auto_mesh}};
  j["attention_config"] = {{"backend", attention_backend_name(r.attention.backend)}};
  j["cache_config"] = {{"first_block_threshold", r.cache.first_block_threshold}};
  j["output"] = {{"dir", r.output.dir},
                 {"fps", r.output.fps ? Json(*r.output.fps) : Json(nullptr)},
                 {"crf", r.output.crf},
                 {"save_tensors", r.output.save_tensors},
                 {"skip_existing", r.output.skip_existing}};
  j["text"] = {{"cache_embeddings", r.text.cache_embeddings},
               {"cache_dir", r.text.cache_dir.empty() ? Json(nullptr) : Json(r.text.cache_dir)},
               {"device", name_in(kTextDeviceNames, r.text.device)}};
  j["runtime"] = {{"collective_timeout_s",
                   r.runtime.collective_timeout_s > 0 ? Json(r.runtime.collective_timeout_s) : Json("auto")}};
  // Under precision fp4, r.fp8 holds the resolved fp4_config: fp8_config shows its defaults then.
  const Fp8Config f8 = r.is_fp4() ? Fp8Config{} : r.fp8;
  j["fp8_config"] = {{"attention", f8.attention},
                     {"gemm", f8.gemm},
                     {"attention_qk", name_in(kQkFormatNames, f8.attention_qk)},
                     {"gemm_format", gemm_format_name(f8.gemm_format)},
                     {"scaling", name_in(kFp8ScalingNames, f8.scaling)},
                     {"bf16_first_steps", f8.bf16_first_steps},
                     {"bf16_last_steps", f8.bf16_last_steps},
                     {"bf16_blocks", f8.bf16_blocks},
                     {"bf16_gemm_blocks", f8.bf16_gemm_blocks},
                     {"bf16_linears", f8.bf16_linears}};
  j["fp4_config"] = {{"gemm", r.fp4.gemm},
                     {"bf16_first_steps", r.fp4.bf16_first_steps},
                     {"bf16_last_steps", r.fp4.bf16_last_steps},
                     {"bf16_blocks", r.fp4.bf16_blocks},
                     {"bf16_gemm_blocks", r.fp4.bf16_gemm_blocks},
                     {"bf16_linears", r.fp4.bf16_linears}};
  j["lora"] = Json::array();
  for (const LoraEntry& l : r.lora) j["lora"].push_back({{"path", l.path}, {"scale", l.scale}, {"target", lora_target_name(l.target)}});
  j["lora_strict"] = r.lora_strict;
  j["prompts"] = r.prompts.empty() ? Json(nullptr) : Json(r.prompts);
  return j;
}

}  // namespace vgen
