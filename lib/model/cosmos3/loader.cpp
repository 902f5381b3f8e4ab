// Loading a Cosmos 3 checkpoint on one rank: the transformer's tensors that load_cosmos3_weights
// names (lm_head, the final understanding norm and the sound and action heads are never read; the
// embedding table stays a view), read from the mapped files on the host or through the node's
// weight stream onto a GPU (text.device stream: the understanding tower into pinned host memory),
// the prompt tokenizer and the image conditioner on the replica leader, and the Wan 2.2 VAE on the
// ranks that decode (lent by the registry, through its weight stream). DWDP: the generation layers
// shared over the dwdp group, placed while streaming on a GPU, once the weights are final on the host.
#include <memory>

#include "core/log.h"
#include "dist/node_comm.h"
#include "dist/weight_stream.h"
#include "model/cosmos3/denoiser.h"
#include "model/cosmos3/family.h"
#include "model/cosmos3/fp8_options.h"
#include "model/cosmos3/image_condition.h"
#include "model/cosmos3/prompt_encoder.h"

namespace vgen {
namespace {

// The host reads its weights from the mapped files; a GPU through a weight stream shared by the
// ranks of its node (each byte read once per node, converted on the device), collective over it.
// und_streamed (text.device stream): the understanding tower into this process's pinned host memory.
Cosmos3Transformer load_transformer(const std::string& dir, Device device, DType dtype, bool und_streamed,
                                    const Cosmos3DwdpOptions& dwdp) {
  if (device == Device::kCPU) return Cosmos3Transformer::load(dir, device, dtype);
  const WeightStreamOptions sopt = WeightStreamOptions::from_env();
  const std::shared_ptr<Communicator> node_host = sopt.share ? node_host_communicator() : nullptr;
  const std::shared_ptr<Communicator> node_dev = node_host ? node_device_communicator(node_host) : nullptr;
  WeightStream stream(node_host, node_dev, sopt);
  return Cosmos3Transformer::stream_to_device(dir, stream, dtype, und_streamed, dwdp);
}

}  // namespace

LoadedModel Cosmos3Family::load(const Recipe& recipe, Mesh& mesh) const {
  const DiffusersDir dir(recipe.model);
  check_configs(dir);
  check_recipe(recipe, dir);
  LoadedModel out;
  out.traits = traits(dir);
  const Device device = recipe.is_cuda() ? Device::kCUDA : Device::kCPU;
  const DType dtype = recipe.compute_dtype();
  // text.device stream (or auto settled to it: plan/prefill_placement.h); the host holds every weight anyway.
  const bool und_streamed = device == Device::kCUDA && recipe.text.device == TextDevice::kStream;
  // Device DWDP places the generation layers while streaming (collective over the world).
  Cosmos3DwdpOptions dwdp;
  if (device == Device::kCUDA) {
    dwdp.size = recipe.parallel.dwdp_size;
    dwdp.transport = recipe.parallel.dwdp_transport;
    dwdp.world = mesh.world;
  }
  auto loaded = std::make_shared<Cosmos3Transformer>(
      load_transformer(dir.component_path("transformer"), device, dtype, und_streamed, dwdp));
  if (und_streamed)
    log_info("cosmos3: understanding tower in pinned host memory ({:.2f} GiB), copied to the GPU layer by layer "
             "for each prefill",
             double(loaded->weights().und_host.layer_bytes * loaded->weights().layers.size()) / double(1ull << 30));
  loaded->attention_policy.backend = recipe.attention.backend;
  loaded->enable_fp8(cosmos3_fp8_options(recipe));  // precision fp8: the generation tower's quantised copies
  // Host DWDP shares the generation layers over the world (collective), on the final weights.
  if (device == Device::kCPU && recipe.parallel.dwdp_size > 1)
    loaded->enable_host_dwdp(recipe.parallel.dwdp_size, *mesh.world);
  std::shared_ptr<const Cosmos3Transformer> model = loaded;
  // The mRoPE time axis follows the output's frame rate, as diffusers' `fps` argument.
  const double fps = double(recipe.output.fps.value_or(out.traits.native_fps));
  out.experts.push_back(std::make_unique<Cosmos3Denoiser>(model, fps, out.traits.scale_temporal, device));
  if (mesh.is_replica_leader())
    out.prompt_encoder = std::make_unique<Cosmos3PromptEncoder>(dir.root(), dir.component_path("text_tokenizer"));
  VGEN_CHECK(vae_ != nullptr, ExitCode::kInternal, "cosmos3: no autoencoder loader registered");
  // The ranks that decode also encode a line's first frame (image to video).
  out.autoencoder = vae_(recipe, mesh, out.traits.latent_channels, true);
  if (mesh.is_replica_leader()) out.image_conditioner = std::make_unique<Cosmos3ImageConditioner>();
  out.scheduler_config = cosmos3_scheduler_config(dir);  // with the pipeline's own sigmas
  log_debug("cosmos3: {} loaded (fps {})", out.traits.variant, fps);
  return out;
}

}  // namespace vgen
