#include "model/wan/lent_vae.h"

#include "dist/node_comm.h"
#include "io/diffusers_dir.h"
#include "model/latents.h"
#include "model/wan/plan_image.h"
#include "model/wan/vae/autoencoder.h"

namespace vgen {

std::unique_ptr<VideoAutoencoder> load_wan_vae_autoencoder(const Recipe& recipe, Mesh& mesh,
                                                           int64_t latent_channels, bool encodes) {
  const DiffusersDir dir(recipe.model);
  const bool cuda = recipe.is_cuda();
  const WanVaeConfig cfg = parse_wan_vae_config(dir.component_config("vae"), dir.component_path("vae") + "/config.json");
  VGEN_CHECK(cfg.z_dim == latent_channels, ExitCode::kModel,
             "{}/vae/config.json: z_dim {} but the transformer's latents have {} channels", dir.root(), cfg.z_dim,
             latent_channels);
  const WeightStreamOptions sopt = WeightStreamOptions::from_env();
  std::shared_ptr<Communicator> node_host = sopt.share ? node_host_communicator() : nullptr;
  std::shared_ptr<Communicator> node_dev = cuda && node_host ? node_device_communicator(node_host) : nullptr;
  WeightStream stream(node_host, node_dev, sopt);
  const WeightStore store = WeightStore::open(dir.component_path("vae"));
  const int c_vae = stream.add_component("vae", store);
  const bool decodes = mesh.in_vae_group() || (!cuda && mesh.is_replica_leader());
  std::unique_ptr<WanVideoAutoencoder> ae;
  if (decodes) {
    WanAutoencoderPlacement p;
    p.mesh = mesh;
    p.split = recipe.parallel.parallel_vae_split_dim;
    p.cuda = cuda;
    p.dtype = recipe.compute_dtype();
    p.height = recipe.generation.height;
    p.width = recipe.generation.width;
    p.num_frames = recipe.generation.num_frames;
    p.warm_up = cuda && wan_vae_warmup_enabled();
    p.encode_frames = encodes ? 1 : 0;  // a borrower encodes a first frame alone (Cosmos 3's I2V)
    ae = std::make_unique<WanVideoAutoencoder>(cfg, LatentStats{cfg.latents_mean, cfg.latents_std}, p);
    ae->start_warm_up();
  }
  if (cuda) {  // straight to the device, in place after the run
    if (ae) {
      WanVaeOptions vopt;
      vopt.device = Device::kCUDA;
      vopt.dtype = recipe.compute_dtype();
      ae->set_decoder(std::make_shared<WanVaeDecoder>(cfg, store, vopt, &stream, c_vae));
      if (encodes) ae->set_encoder(std::make_shared<WanVaeEncoder>(cfg, store, vopt, &stream, c_vae));
    }
    stream.run();
  } else {
    if (ae) stream.request_host(c_vae);
    stream.run();
    if (ae) ae->set_decoder(std::make_shared<WanVaeDecoder>(cfg, store));
    if (ae && encodes) ae->set_encoder(std::make_shared<WanVaeEncoder>(cfg, store));
  }
  return ae;
}

void plan_lent_wan_vae(const DiffusersDir& dir, PlanModel& m, bool headers) {
  plan_wan_vae_decoder(dir, m, headers);
  if (dir.has_component("vae")) plan_wan_vae_encoder(dir, m);
}

}  // namespace vgen
