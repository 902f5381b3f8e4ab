// Wan 2.1 VAE decoder on the GPU (wan_spec §5; the CPU WanVaeDecoder is the reference).
//
// Layout: activations channels-last [t, H, W, C] (one batch item), so 1×1 convs are GEMMs
// (cuda_linear) and the 3×3(×3) convs run on cuDNN NDHWC / NHWC (kernels/conv3d/conv3d.cuh).
// Precision: kF32 keeps everything fp32 (no TF32; validation against the CPU path); kBF16 stores
// conv / linear weights and activations in bf16 with fp32 accumulation, norms computed in fp32
// (gammas, biases fp32), one rounding per op.
//
// Streaming: the decoder runs one frame at a time at every level — a latent frame through the mid
// block and up block 0, each frame an upsampler emits through the next block, and so on — so every
// causal conv sees [2 cached frames, 1 new frame] and activation memory does not grow with T (the
// per-frame order is exact: every conv after the first chunk is causal over frames, wan_spec §5.4).
// The cache of a causal conv is its last two input frames: by default a view of the conv's input
// buffer (no copy-out; the buffer of 3 frames stays alive), with cache_copy a copy of 2 frames.
//
// Spatial split: every conv input goes through a VaeDeviceContext, so the same code runs on one
// GPU (LocalDeviceContext) or split over a device communicator (model/wan/vae/vae_parallel_device.h).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/safetensors.h"
#include "kernels/conv3d/conv3d_ref.h"
#include "model/wan/vae/vae_config.h"

namespace vgen {
class WeightStream;  // dist/weight_stream.h
}

namespace vgen {

class VaeDeviceContext {
 public:
  virtual ~VaeDeviceContext() = default;
  // A conv input buffer [front + t, H', W', C] of dtype `dt`: frames [front, front + t) hold what
  // `fill` writes into a dense [t, H, W, C] tensor (`shape`), extended by `halo` rows/cols of the
  // neighbouring ranks along the split dim (zeros at the global frame edges); the leading `front`
  // frames are left to the caller (the causal cache). `pad` receives the zero padding the conv
  // still needs (symmetric in each dim).
  virtual Tensor conv_input(const Shape& shape, DType dt, int64_t halo, int64_t front,
                            const std::function<void(Tensor&)>& fill, kern::Conv3dPad& pad) = 0;
  // The whole frame [t, H_full, W_full, C] assembled from every rank's part (collective).
  virtual Tensor gather(const Tensor& x) = 0;
};

class LocalDeviceContext final : public VaeDeviceContext {
 public:
  Tensor conv_input(const Shape& shape, DType dt, int64_t halo, int64_t front, const std::function<void(Tensor&)>& fill,
                    kern::Conv3dPad& pad) override;
  Tensor gather(const Tensor& x) override { return x; }
};

struct VaeDeviceOptions {
  DType dtype = DType::kBF16;  // kF32 or kBF16
  bool cache_copy = false;     // causal caches as 2-frame copies (less memory, more copies)
};

// Device weights of one conv: w [Cout_s, kt, kh, kw, Cin] (or [Cout_s, Cin] for 1×1) in the
// compute dtype, b [Cout_s] f32; Cout_s = Cout, or Cout rounded up to 8 with zero rows (conv_out's
// 3 channels) so cuDNN's tensor-core engines accept it.
struct VaeDevConv {
  Tensor w, b;
  int64_t cin = 0, cout = 0, cout_store = 0, kt = 1, kh = 1, kw = 1;
  bool pointwise() const { return kt == 1 && kh == 1 && kw == 1; }
};

class WanVaeDeviceDecoder {
 public:
  // Weights of a VAE folder (config.json + safetensors; same names and shapes as WanVaeDecoder),
  // uploaded once to the current device. Throws kModel on missing/misshaped tensors.
  static std::shared_ptr<WanVaeDeviceDecoder> load(const std::string& vae_dir, const VaeDeviceOptions& opt);
  // Without `stream` a stream of this rank alone reads the weights here; with one, they are
  // requested from its component `component` and in place once stream->run() has returned.
  WanVaeDeviceDecoder(const WanVaeConfig& cfg, const WeightStore& ws, const VaeDeviceOptions& opt,
                      WeightStream* stream = nullptr, int component = -1);
  // Random device weights of the config's shapes (benchmarks): every parameter N(0, std²), like
  // the diffusers peer benchmark's init.
  static std::shared_ptr<WanVaeDeviceDecoder> random(const WanVaeConfig& cfg, const VaeDeviceOptions& opt,
                                                     uint64_t seed, float std = 0.02f);
  ~WanVaeDeviceDecoder();

  const WanVaeConfig& config() const { return cfg_; }
  const VaeDeviceOptions& options() const { return opt_; }
  size_t weight_bytes() const { return weight_bytes_; }

  // z [B, z_dim, T, H, W] already denormalised (any device, f32 / bf16) → video [B, out_channels, F,
  // s·H, s·W] f32 on the device, clamped to [-1, 1].
  Tensor decode(const Tensor& z) const;

  // One batch item, this rank's part z [z_dim, T, H, W] (any device) in the context `ctx`
  // (collective when ctx is): calls emit(frames, first_frame) for every group of output frames in
  // order; frames [f, s·H, s·W, Cx] are channels-last in the compute dtype, not clamped, with the
  // output channels first (Cx >= out_channels; the rest is padding).
  using FrameSink = std::function<void(const Tensor& frames, int64_t first_frame)>;
  void decode_stream(const Tensor& z, VaeDeviceContext& ctx, const FrameSink& emit) const;

  struct Layers;  // vae_device.cpp
  struct State;

 private:
  WanVaeDeviceDecoder(const WanVaeConfig& cfg, const VaeDeviceOptions& opt);
  void run_block(size_t i, const Tensor& x, State& st, VaeDeviceContext& ctx, const FrameSink& emit,
                 int64_t& frame) const;

  WanVaeConfig cfg_;
  VaeDeviceOptions opt_;
  std::unique_ptr<Layers> L_;
  size_t weight_bytes_ = 0;
};

}  // namespace vgen
