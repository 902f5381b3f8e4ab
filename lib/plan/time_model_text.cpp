// The text of `vgen plan --predict` and the mesh labels of its tables (time_model.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iterator>
#include <string>

#include "plan/time_model.h"

namespace vgen {

std::string mesh_label(const ParallelConfig& pc) {
  std::string cp = pc.ring_size > 1 ? fmt::format(" × ring {}", pc.ring_size)
                   : pc.attn2d_size[0] * pc.attn2d_size[1] > 1
                       ? fmt::format(" × attn2d {}×{}", pc.attn2d_size[0], pc.attn2d_size[1])
                       : std::string();
  return fmt::format("dp {} × cfg {} × ulysses {}{}, vae {}, dwdp {}{}", pc.dp_size, pc.cfg_size, pc.ulysses_size, cp,
                     pc.parallel_vae_size, pc.dwdp_size, pc.async_ulysses ? ", async ulysses" : "");
}

std::string format_prediction(const Recipe& recipe, const HardwareProfile& hw, const Prediction& p) {
  fmt::memory_buffer o;
  auto out = std::back_inserter(o);
  const GenerationConfig& g = recipe.generation;
  fmt::format_to(out, "\npredicted on {} ({}, profile {}): {}\n", hw.name, hw.gpu, hw.source_path, p.mesh);
  fmt::format_to(out, "  DiT forward {:.3f} s (one stream, one rank):", p.forward_s);
  for (auto& [what, sec] : p.forward_parts)
    if (sec > 0) fmt::format_to(out, " {} {:.3f}", what, sec);
  fmt::format_to(out, "\n");
  if (p.precision == Precision::kFp8) {
    const int steps = g.num_inference_steps;
    const char* attn = !recipe.fp8.attention ? "bf16"
                       : recipe.fp8.qk_int8()
                           ? "INT8 Q·Kᵀ + e4m3 P·V (priced as e4m3; measured ~4–5% slower)"
                           : "e4m3";
    fmt::format_to(out, "  precision fp8: self-attention {}, block GEMMs {}; {} of {} steps in fp8", attn,
                   recipe.fp8.gemm ? recipe.fp8.gemm_label() : "bf16", p.fp8_steps, steps);
    if (p.fp8_steps < steps)
      fmt::format_to(out, ", {} in bf16 (forward {:.3f} s, step {:.3f} s)", steps - p.fp8_steps, p.forward_bf16_s,
                     p.step_bf16_s);
    if (p.fp8_bf16_blocks > 0)
      fmt::format_to(out, "; {} block{} wholly in bf16 (bf16_blocks)", p.fp8_bf16_blocks, p.fp8_bf16_blocks > 1 ? "s" : "");
    if (p.fp8_bf16_gemm_blocks > 0)
      fmt::format_to(out, "; {} more block{} with bf16 GEMMs (bf16_gemm_blocks)", p.fp8_bf16_gemm_blocks,
                     p.fp8_bf16_gemm_blocks > 1 ? "s" : "");
    if (recipe.fp8.gemm && !recipe.fp8.bf16_linears.empty())
      fmt::format_to(out, "; in bf16 in every block (bf16_linears): {}", fmt::join(recipe.fp8.bf16_linears, ", "));
    fmt::format_to(out, "\n");
  }
  fmt::format_to(out, "  {:<24} {:>9.3f} s\n", p.precision == Precision::kFp8 ? "per fp8 step" : "per step", p.step_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  ({} steps)\n", "denoise", p.denoise_s, g.num_inference_steps);
  fmt::format_to(out, "  {:<24} {:>9.3f} s{}\n", p.text_what, p.text_s, p.text_note);
  if (p.image_s > 0)
    fmt::format_to(out, "  {:<24} {:>9.3f} s  (an image line: image encoder + VAE encode)\n", "image encode", p.image_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  (parallel_vae_size {}: decode {:.3f} + frames to the host {:.3f})\n",
                 "VAE", p.vae_s, p.pc.parallel_vae_size, p.vae_decode_s, p.vae_s - p.vae_decode_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s\n", "MP4 encode", p.mp4_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  (once per job)\n", "load", p.load_s);
  fmt::format_to(out, "  {:<24} {:>9.3f} s  ({}{} + denoise + VAE + MP4)\n", "end to end per video", p.e2e_s,
                 p.text_what == "text encode" ? "text" : "prefill", p.image_s > 0 ? " + image" : "");
  fmt::format_to(out, "  {:<24} {:>9.1f}    (dp {})\n", "videos per hour", p.videos_per_hour, p.pc.dp_size);
  fmt::format_to(out, "  {:<24} {:>9.3f}    (against one GPU of {})\n", "efficiency", p.efficiency, hw.name);
  fmt::format_to(out, "  {:<24} {:>9.1f} GiB of {:.0f}{}\n", "memory estimate", p.memory_gib, hw.memory_gib,
                 p.fits ? "" : "  (does not fit)");
  return fmt::to_string(o);
}

}  // namespace vgen
