// The Wan VAE behind the model seam (model.h VideoAutoencoder): the host decoder (fp32, the CPU
// oracle) or the device decoder, split over the replica's VAE group when parallel_vae_size > 1,
// with the latents' denormalisation of vae/config.json. On the GPU a decoder used alone warms up on
// a thread beside the load; a split one after the load, collectively.
#pragma once
#include <exception>
#include <memory>
#include <thread>

#include "dist/mesh.h"
#include "model/latents.h"
#include "model/model.h"
#include "model/wan/vae/vae_decoder.h"
#include "model/wan/vae/vae_encoder.h"
#include "model/wan/vae/vae_parallel.h"

namespace vgen {

struct WanAutoencoderPlacement {
  Mesh mesh;              // the host mesh: its `vae` group decodes (null on the CPU leader: alone)
  VaeSplitDim split = VaeSplitDim::kWidth;
  bool cuda = false;
  DType dtype = DType::kF32;  // the device decoder's compute dtype
  // The warm-up's shapes: the recipe's frame size and frame count.
  int height = 0, width = 0, num_frames = 0;
  // Frames of the condition videos the encoder sees (0: this autoencoder does not encode): a first
  // frame alone (TI2V, Cosmos 3) is 1, a Wan I2V condition video the first chunk and a later one.
  int64_t encode_frames = 0;
  bool warm_up = false;  // device only: VGEN_VAE_WARMUP is not 0
};

class WanVideoAutoencoder final : public VideoAutoencoder {
 public:
  WanVideoAutoencoder(const WanVaeConfig& cfg, LatentStats stats, WanAutoencoderPlacement place);
  ~WanVideoAutoencoder() override;

  // Starts the warm-up of a decoder (and encoder) used alone (device, one-rank group) on a thread
  // with random weights of the config's shapes; joined by finish_warm_up or the destructor.
  void start_warm_up();
  void set_decoder(std::shared_ptr<const WanVaeDecoder> dec) { dec_ = std::move(dec); }
  // The encoder of an image-conditioned checkpoint (replica leader only).
  void set_encoder(std::shared_ptr<const WanVaeEncoder> enc) { enc_ = std::move(enc); }

  Tensor decode(const Tensor& latents) const override;
  // The posterior's mode, normalised with the config's latents_mean / latents_std (diffusers'
  // WanImageToVideoPipeline.prepare_latents).
  Tensor encode(const Tensor& video) const override;
  void finish_warm_up() override;

 private:
  bool is_split() const;
  // One decode of two latent frames of the recipe's size by `dec` (collective over `comm`).
  void warm_up(const WanVaeDecoder& dec, Communicator* comm) const;
  // One encode of place_.encode_frames random frames of the recipe's size by `enc` (collective over
  // `comm`).
  void warm_up_encoder(const WanVaeEncoder& enc, Communicator* comm) const;

  WanVaeConfig cfg_;
  LatentStats stats_;
  WanAutoencoderPlacement place_;
  std::shared_ptr<const WanVaeDecoder> dec_;
  std::shared_ptr<const WanVaeEncoder> enc_;
  std::shared_ptr<Communicator> device_group_;  // NCCL over the VAE group (finish_warm_up)
  std::thread warm_thread_;
  std::exception_ptr warm_error_;
};

// VGEN_VAE_WARMUP=0 turns the device decoder's warm-up off.
bool wan_vae_warmup_enabled();

}  // namespace vgen
