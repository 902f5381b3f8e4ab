#include "model/clip/golden_clip.h"

#include <filesystem>

#include "dist/device_mesh.h"
#include "model/clip/clip_vision.h"

namespace vgen {

void golden_clip_image_encode(GoldenCase& c) {
  const std::string component = c.params.contains("model") ? c.params["model"].get<std::string>() : "image_encoder";
  ClipVisionEncoder enc = ClipVisionEncoder::load((std::filesystem::path(c.model_dir()) / component).string());
  // device: cuda runs the tower on this rank's GPU (every rank runs the case, so the collective
  // first device selection is safe here).
  if (c.recipe && c.recipe->is_cuda()) {
    select_mesh_device();
    enc.set_attention(c.recipe->attention);
    enc.to_device(c.recipe->compute_dtype());
  }
  const Tensor px = c.tensors.get_f32("pixel_values");                // [B, C, H, W]
  const Tensor ref = c.tensors.get_f32("penultimate_hidden_states");  // [B, 1 + P, D]
  const Tensor out = enc.penultimate_hidden_states(px);               // [B, 1 + P, D]
  VGEN_CHECK(out.shape() == ref.shape(), ExitCode::kInput, "case {}: output {} vs reference {}", c.name, out.str(),
             ref.str());
  c.rel_l2("penultimate_hidden_states", out, ref, c.bf16 ? 3e-2 : 1e-4);
}

}  // namespace vgen
