#include "model/wan/vae/autoencoder.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "core/cuda_stream.h"
#include "core/log.h"
#include "core/timer.h"
#include "dist/device_mesh.h"
#include "model/wan/vae/vae_encoder_parallel.h"
#include "model/wan/vae/vae_parallel.h"

namespace vgen {

bool wan_vae_warmup_enabled() {
  const char* e = std::getenv("VGEN_VAE_WARMUP");
  return !(e && std::string(e) == "0");
}

WanVideoAutoencoder::WanVideoAutoencoder(const WanVaeConfig& cfg, LatentStats stats, WanAutoencoderPlacement place)
    : cfg_(cfg), stats_(std::move(stats)), place_(std::move(place)) {}

WanVideoAutoencoder::~WanVideoAutoencoder() {
  if (warm_thread_.joinable()) warm_thread_.join();  // a load that threw leaves it running
}

bool WanVideoAutoencoder::is_split() const { return place_.mesh.vae && place_.mesh.vae->size() > 1; }

void WanVideoAutoencoder::start_warm_up() {
  // cuDNN's plans depend on the shapes alone, so a decoder used alone warms up with random weights
  // of its shapes while the checkpoint streams in (host work mostly: a first plan build on a machine
  // is seconds of JIT); a split decoder warms up after the load (collective over its group).
  if (!place_.cuda || !place_.warm_up || is_split()) return;
  WanVaeOptions wopt;
  wopt.device = Device::kCUDA;
  wopt.dtype = place_.dtype;
  warm_thread_ = std::thread([this, wopt] {
    try {
      cuda_set_device(select_mesh_device());  // the current device is per thread
      warm_up(*WanVaeDecoder::random(cfg_, wopt, 0x5eedull), nullptr);
      // The encoder's plans too, while the checkpoint still streams (not after the load: seconds).
      if (place_.encode_frames > 0) warm_up_encoder(*WanVaeEncoder::random(cfg_, wopt, 0x5eed3ull), nullptr);
    } catch (...) {
      warm_error_ = std::current_exception();
    }
  });
}

void WanVideoAutoencoder::warm_up(const WanVaeDecoder& dec, Communicator* comm) const {
  // Two latent frames of the recipe's size meet every conv shape of a decode (the first chunk and a
  // later one), so cuDNN's plans and workspaces exist before the first video.
  Timer t;
  const int64_t C = dec.config().z_dim, h = place_.height / cfg_.scale_factor_spatial,
                w = place_.width / cfg_.scale_factor_spatial;
  const int64_t frames = std::min<int64_t>(2, (place_.num_frames - 1) / cfg_.scale_factor_temporal + 1);
  Tensor z = make_initial_latents({1, C, frames, h, w}, "", 0x5eedull);  // [1, C, 2, h, w]
  if (comm)
    vae_group_decode(dec, z, comm, place_.split);
  else
    dec.decode(z);
  sync_compute_stream();
  log_info("VAE warmed up at {}x{} in {:.2f} s", place_.height, place_.width, t.seconds());
}

void WanVideoAutoencoder::warm_up_encoder(const WanVaeEncoder& enc, Communicator* comm) const {
  // A first frame alone meets the first chunk's conv shapes; five frames (the first chunk and a
  // later one) every shape of a condition video's encode.
  Timer t;
  const int64_t frames = std::min<int64_t>(place_.encode_frames, place_.num_frames);
  const int64_t in = cfg_.in_channels / (cfg_.patch() * cfg_.patch());
  Tensor video = make_initial_latents({1, in, frames, place_.height, place_.width}, "", 0x5eed2ull);  // [1, 3, F, H, W]
  // vae_group_encode needs the group; an encoder used alone (comm null) encodes by itself.
  if (comm)
    vae_group_encode(enc, video, comm, place_.split);
  else
    enc.encode_moments(video);
  sync_compute_stream();
  log_info("VAE encoder warmed up at {}x{} ({} frame(s)) in {:.2f} s", place_.height, place_.width, frames,
           t.seconds());
}

void WanVideoAutoencoder::finish_warm_up() {
  if (!place_.cuda) return;
  device_group_ = device_vae_communicator(place_.mesh);  // collective over the group the first time
  if (warm_thread_.joinable()) warm_thread_.join();
  if (warm_error_) std::rethrow_exception(std::exchange(warm_error_, nullptr));
  if (place_.warm_up && is_split()) warm_up(*dec_, device_group_.get());
  if (place_.warm_up && enc_ && is_split())
    warm_up_encoder(*enc_, device_group_.get());  // collective over the group, as the encode
}

Tensor WanVideoAutoencoder::decode(const Tensor& latents) const {
  Tensor z = denormalize_latents(latents, stats_);  // [1, C, T, h, w]
  if (place_.cuda) return vae_group_decode(*dec_, z, device_group_.get(), place_.split);
  if (is_split()) return parallel_vae_decode(*dec_, z, *place_.mesh.vae, place_.split);
  return dec_->decode(z);  // [1, 3, F, H, W]
}

Tensor WanVideoAutoencoder::encode(const Tensor& video) const {
  VGEN_CHECK(enc_ != nullptr, ExitCode::kInternal, "the VAE encoder is not loaded on this rank");
  Tensor moments;  // [1, 2z, T, h, w]: split over the VAE group like the decode
  if (place_.cuda) moments = vae_group_encode(*enc_, video, device_group_.get(), place_.split);
  else if (is_split()) moments = parallel_vae_encode(*enc_, video, *place_.mesh.vae, place_.split);
  else moments = enc_->encode_moments(video);
  return vae_normalize(vae_posterior_mode(moments), cfg_);  // [1, z, T, h, w]
}

}  // namespace vgen
