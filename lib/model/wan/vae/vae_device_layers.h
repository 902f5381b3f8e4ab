// Device layers of the Wan VAE decoder (internal to vae_device*.cpp): weights as WanVaeDecoder's
// (model/wan/vae/vae_layers.h) in the device layout of model/wan/vae/vae_device.h.
#pragma once
#include <vector>

#include "dist/weight_stream.h"
#include "model/wan/vae/vae_device.h"

namespace vgen {

struct VaeDevResBlock {
  Tensor norm1, norm2;  // gamma f32 [in], [out]
  VaeDevConv conv1, conv2, shortcut;
  bool has_shortcut = false;
};

struct VaeDevAttn {
  Tensor norm;  // gamma f32 [C]
  VaeDevConv to_qkv, proj;
  int64_t dim = 0;
};

struct VaeDevUpsampler {
  bool temporal = false;
  VaeDevConv time_conv, resample;
};

struct WanVaeDeviceDecoder::Layers {
  VaeDevConv post_quant_conv, conv_in, conv_out;
  VaeDevResBlock mid0, mid1;
  VaeDevAttn attn;
  std::vector<std::vector<VaeDevResBlock>> up_res;  // [block][resnet]
  std::vector<bool> has_up;
  std::vector<VaeDevUpsampler> up;  // one per block (unused where has_up is false)
  Tensor norm_out;
};

// Where the weights come from: a checkpoint component requested from a WeightStream (read as f32 on
// the device, permuted to the device layout and converted when the stream's run is done) or random
// device fills.
class VaeWeightSource {
 public:
  VaeWeightSource(WeightStream* stream, int component, DType dtype, uint64_t seed, float std)
      : stream_(stream), comp_(component), dt_(dtype), seed_(seed), std_(std) {}
  // `<prefix>.weight` [cout, cin, kt, kh, kw] (kt = 0: a Conv2d [cout, cin, kh, kw]) and `.bias`;
  // cout is stored rounded up to `cout_multiple` with zero rows.
  VaeDevConv conv(const std::string& prefix, int64_t cout, int64_t cin, int64_t kt, int64_t kh, int64_t kw,
                  int64_t cout_multiple = 1);
  // A norm gamma of C elements (host shape `shape`), f32 on the device.
  Tensor gamma(const std::string& name, const Shape& shape);
  size_t bytes() const { return bytes_; }

 private:
  WeightStream* stream_;
  int comp_;
  DType dt_;
  uint64_t seed_;
  float std_;
  size_t bytes_ = 0;
};

// Fills L with the decoder's weights from `src` (the structure of WanVaeDecoder's constructor).
void build_vae_device_layers(const WanVaeConfig& cfg, VaeWeightSource& src, WanVaeDeviceDecoder::Layers& L);

}  // namespace vgen
