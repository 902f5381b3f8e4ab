// Building blocks of the Wan 2.1 and 2.2 VAE decoders (wan_spec §5.2), one frame at a time with the causal
// temporal feature cache, for the host fp32 oracle and the device decoder alike: activations of
// one batch item in the device's layout (ops/vae_ops.h), every spatial conv's input made through
// the VaeSpatialContext, so the same code runs split across ranks.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/wan/vae/vae_config.h"
#include "model/wan/vae/vae_spatial.h"

namespace vgen {

class WeightStream;  // dist/weight_stream.h

struct VaeResBlock {
  Tensor norm1, norm2;  // gamma f32, [in], [out] elements
  VaeConvWeights conv1, conv2, shortcut;
  bool has_shortcut = false;  // in != out
};

// Single-head self-attention over each frame (mid block); keys span the whole frame.
struct VaeAttnBlock {
  Tensor norm;  // gamma f32 [C]
  VaeConvWeights to_qkv, proj;
  int64_t dim = 0;
};

// upsample2d / upsample3d: optional causal time_conv (dim → 2·dim, 3×1×1, frames interleaved),
// then nearest ×2 and a 3×3 Conv2d dim → dim/2 (Wan 2.2 residual blocks: dim → dim).
struct VaeUpsampler {
  bool temporal = false;
  VaeConvWeights time_conv, resample;
};

// DupUp3D, the shortcut of a Wan 2.2 residual up block (no weights): the block's input channels
// duplicated onto the upsampled grid (ops/vae_up_ops.h), added to the upsampler's output.
struct VaeDupUp {
  int64_t cout = 0;  // 0: the block has no shortcut (the last block, or Wan 2.1)
  int64_t factor_t = 1, factor_s = 2;
};

struct VaeDecoderLayers {
  VaeConvWeights post_quant_conv, conv_in, conv_out;
  VaeResBlock mid0, mid1;
  VaeAttnBlock attn;
  std::vector<std::vector<VaeResBlock>> up_res;  // [block][resnet]
  std::vector<bool> has_up;
  std::vector<VaeUpsampler> up;  // one per block (unused where has_up is false)
  std::vector<VaeDupUp> dup_up;  // one per block (Wan 2.2 residual blocks that upsample)
  Tensor norm_out;
};

// Where the weights come from: the host reads the checkpoint's tensors as f32 in their stored
// layout; the device requests them from a WeightStream (read as f32 to the device, permuted to the
// channels-last conv layout and converted to the compute dtype once the stream's run is done), or
// fills them with random values (stream null; benchmarks and warm-ups).
class VaeWeightSource {
 public:
  explicit VaeWeightSource(const WeightStore& ws) : ws_(&ws) {}
  // The checkpoint's headers checked alone (names, shapes, float dtypes), every tensor left
  // undefined: the preflight's check of the decoder's weights.
  static VaeWeightSource headers_only(const WeightStore& ws) {
    VaeWeightSource s(ws);
    s.headers_only_ = true;
    return s;
  }
  VaeWeightSource(WeightStream* stream, int component, DType dtype, uint64_t seed, float std)
      : stream_(stream), comp_(component), dt_(dtype), seed_(seed), std_(std) {}
  // `<prefix>.weight` [cout, cin, kt, kh, kw] (kt = 0: a Conv2d [cout, cin, kh, kw]) and `.bias`;
  // on the device cout is stored rounded up to `cout_multiple` with zero rows.
  VaeConvWeights conv(const std::string& prefix, int64_t cout, int64_t cin, int64_t kt, int64_t kh, int64_t kw,
                      int64_t cout_multiple = 1);
  // An upsampler's 3×3 Conv2d `<prefix>` [cout, cin, 3, 3] held as its sub-pixel 2×2 conv
  // (ops/vae_subpixel_ops.h): 4·cout output channels (four phases), bias repeated per phase.
  VaeConvWeights subpixel_conv(const std::string& prefix, int64_t cout, int64_t cin);
  // Device convs with kt > 1 whose weight takes at most `bytes` also get the rotations of the ring
  // mode (ops/vae_ops.h vae_ring_applies); 0 (the default) gives none.
  void ring_weights_up_to(size_t bytes) { ring_max_bytes_ = bytes; }
  // A norm gamma of C elements (checkpoint shape `shape`), f32.
  Tensor gamma(const std::string& name, const Shape& shape);
  size_t bytes() const { return bytes_; }

 private:
  const WeightStore* ws_ = nullptr;  // host
  bool headers_only_ = false;
  WeightStream* stream_ = nullptr;
  int comp_ = -1;
  DType dt_ = DType::kF32;
  uint64_t seed_ = 0;
  float std_ = 0.0f;
  size_t bytes_ = 0;
  size_t ring_max_bytes_ = 0;
};

// Fills L with the decoder's weights from `src`, in checkpoint order.
void build_vae_layers(const WanVaeConfig& cfg, VaeWeightSource& src, VaeDecoderLayers& L);
// One resnet (`<p>.norm1/conv1/norm2/conv2`, `conv_shortcut` where in != out) or one attention block
// (`<p>.norm/to_qkv/proj`) of the encoder or the decoder.
VaeResBlock load_vae_res_block(VaeWeightSource& src, const std::string& p, int64_t in, int64_t out);
VaeAttnBlock load_vae_attn_block(VaeWeightSource& src, const std::string& p, int64_t dim);
// A VAE part's weights built by `build` from where `device` takes them: on the host the tensors of
// `ws` as f32; on the device component `component` of `stream` (null: a stream of this call alone,
// run here; else in place once the caller's stream has run). Returns their bytes.
size_t build_vae_weights(const WeightStore& ws, Device device, DType dtype, WeightStream* stream, int component,
                         const std::function<void(VaeWeightSource&)>& build);

// How a decode runs: where, in which dtype, and how the causal caches are kept.
struct VaeRun {
  Device device = Device::kCPU;
  DType dtype = DType::kF32;
  bool cache_copy = false;  // device: caches as 2-frame copies instead of views of the conv buffers
  VaeConvPolicy conv;       // device: the convs' backend (WanVaeOptions::conv)
};

struct VaeResState {
  VaeConvCache c1, c2;
};
struct VaeUpState {
  bool seen = false;  // diffusers' "Rep": the first chunk skips time_conv
  VaeConvCache cache;
};

using VaeFill = std::function<void(Tensor&)>;

// Causal conv over a chunk whose input `fill` writes (`in_shape`: this rank's part in the device's
// layout): the context makes the halo-extended conv input, the cache (kt > 1) supplies the frames in
// front of it and keeps the last kt − 1 → Cout_s channels, plus `residual` (that shape) where given
// (on the device in the conv's epilogue).
Tensor vae_conv(const VaeConvWeights& c, const Shape& in_shape, VaeConvCache* cache, const VaeRun& run,
                VaeSpatialContext& ctx, const VaeFill& fill, const Tensor* residual = nullptr);
Tensor vae_res_forward(const VaeResBlock& r, const Tensor& x, VaeResState& st, const VaeRun& run,
                       VaeSpatialContext& ctx);
Tensor vae_attn_forward(const VaeAttnBlock& a, const Tensor& x, VaeSpatialContext& ctx);
// One output frame at a time (frame 2τ+k = channel half k of time_conv's frame τ), each handed to
// `next` before the following one is made.
void vae_up_forward(const VaeUpsampler& u, const Tensor& x, VaeUpState& st, const VaeRun& run, VaeSpatialContext& ctx,
                    const std::function<void(const Tensor&)>& next);
// A Wan 2.2 residual up block's upsampler over h (the block's resnets' output) with the DupUp3D
// shortcut of the block's input x added to each output frame: time phase k of x's frame for
// output frame 2τ+k, the last phase alone while the upsampler's first chunk skips time_conv
// (diffusers' first_chunk). The shortcut is pixel-local, so a split rank needs no halo for it.
void vae_residual_up_forward(const VaeUpsampler& u, const VaeDupUp& s, const Tensor& x, const Tensor& h,
                             VaeUpState& st, const VaeRun& run, VaeSpatialContext& ctx,
                             const std::function<void(const Tensor&)>& next);

}  // namespace vgen
