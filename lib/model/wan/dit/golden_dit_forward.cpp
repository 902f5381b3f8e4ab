// Golden case dit_forward: one transformer forward (B = 1, and the `_b2` batch of 2) against
// diffusers, with image tokens where the case has them (the image path). Runs sharded through forward_local on the mesh's sequence group (every cfg rank and
// replica runs the same case), so `mpirun -np N vgen golden` exercises the parallel attentions.
// precision fp8: the recipe's fp8_config on the model (every forward in fp8: no denoising steps
// here), under the fp8 tolerance of golden_fp8_tolerance.
#include <filesystem>

#include "dist/device_mesh.h"
#include "parallel/local_attention.h"
#include "parallel/seq_attention_factory.h"
#include "model/dit_step.h"
#include "model/golden_case.h"
#include "model/wan/family.h"
#include "model/wan/dit/fp8_options.h"
#include "model/wan/dit/transformer.h"

namespace vgen {

// The SeqAttention of a golden run: the registered hook, else the recipe's algorithm for the mesh.
static std::unique_ptr<SeqAttention> golden_seq_attention(GoldenCase& c, Mesh& mesh) {
  if (auto hook = seq_attention_factory()) return hook(mesh);
  return make_seq_attention(mesh, c.recipe->attention);
}

void golden_dit_forward(GoldenCase& c) {
  const std::string component = c.params.contains("model") ? c.params["model"].get<std::string>() : "transformer";
  // device: cuda runs the model on this rank's GPU with NCCL sequence groups (dist/device_mesh.h).
  std::shared_ptr<Mesh> dmesh = c.recipe->is_cuda() ? device_mesh(*c.mesh) : nullptr;
  Mesh& mesh = dmesh ? *dmesh : *c.mesh;
  auto model = WanTransformer::load((std::filesystem::path(c.model_dir()) / component).string());
  const bool fp8 = c.recipe->is_quantised();  // fp8 or fp4
  model->set_attention(c.recipe->attention);  // carried over by to_device
  if (fp8) model->enable_fp8(wan_fp8_options(*c.recipe));      // carried over by to_device
  if (dmesh) {
    WanDeviceOptions o;
    o.dtype = c.recipe->compute_dtype();
    o.dwdp_size = c.recipe->parallel.dwdp_size;
    o.dwdp_transport = c.recipe->parallel.dwdp_transport;
    o.world = c.mesh->world;
    model->to_device(o);
  } else if (c.recipe->parallel.dwdp_size > 1) {
    model->enable_host_dwdp(c.recipe->parallel.dwdp_size, *c.mesh->world);
  }
  auto attention = golden_seq_attention(c, mesh);
  VGEN_CHECK(mesh.seq != nullptr, ExitCode::kInternal, "mesh without a sequence group");
  const double tol = fp8 ? golden_quantised_tolerance(*c.recipe, "dit_forward") : c.bf16 ? 3e-2 : 1e-4;
  for (std::string suffix : {"", "_b2"}) {
    if (!suffix.empty() && !c.tensors.has("output" + suffix)) continue;
    Tensor x = c.tensors.get_f32("hidden_states" + suffix);          // [B, C, T, H, W]
    Tensor t = c.tensors.get_f32("timestep" + suffix);               // [B]
    Tensor ctx = c.tensors.get_f32("encoder_hidden_states" + suffix);  // [B, L, text_dim]
    Tensor ref = c.tensors.get_f32("output" + suffix);               // [B, C, T, H, W]
    // The image path: CLIP tokens [B·images, L_img, image_dim].
    const std::string img_name = "encoder_hidden_states_image" + suffix;
    const Tensor img = c.tensors.has(img_name) ? c.tensors.get_f32(img_name) : Tensor();
    TextContext text = model->prepare_text(ctx, img);
    Tensor out = dit_predict(*model, x, t, text, *mesh.seq, *attention);
    VGEN_CHECK(out.shape() == ref.shape(), ExitCode::kInput, "case {}: output {} vs reference {}", c.name, out.str(),
               ref.str());
    c.rel_l2("output" + suffix, out, ref, tol);
  }
}

}  // namespace vgen
