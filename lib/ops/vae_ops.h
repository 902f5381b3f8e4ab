// Tensor-level ops of the Wan VAE decoder, dispatched by device. The layout is the device's: an
// activation of one batch item is [C, t, H, W] f32 on the host (the CPU references of kernels/) and
// channels-last [t, H, W, C] in f32 or bf16 on the device (ops/vae_device_ops.h); the decoder
// (model/wan/vae/) reads its extents through vae_dims and makes shapes through vae_shape.
#pragma once
#include <functional>
#include <vector>

#include "core/tensor.h"
#include "kernels/conv3d/conv3d_ref.h"
#include "ops/vae_device_ops.h"

namespace vgen {

using kern::Conv3dPad;

// Channels, frames and spatial extents of an activation in its device's layout.
struct VaeDims {
  int64_t C = 0, t = 0, H = 0, W = 0;
};
VaeDims vae_dims(const Tensor& x);
Shape vae_shape(const VaeDims& d, Device device);
// Frames [t0, t0 + len) of x: a copy on the host, a view on the device.
Tensor vae_frames(const Tensor& x, int64_t t0, int64_t len);
// Latents z [Z, T, H, W] of one batch item (any device, f32 or bf16) as an activation on `device`
// in `dt` (host: f32).
Tensor vae_latents_in(const Tensor& z, DType dt, Device device);

// A conv's weights in its device's layout: host as stored, w [Cout, Cin, kt, kh, kw] (a Conv2d
// [Cout, Cin, kh, kw]) f32, b [Cout]; device w [Cout_s, kt, kh, kw, Cin] ([Cout_s, Cin] when 1×1×1)
// in the compute dtype, b f32 [Cout_s], Cout_s = Cout rounded up with zero rows where asked.
struct VaeConvWeights {
  Tensor w, b;
  // Device 1×1 convs in bf16: b in bf16 (made once at load), so cuBLASLt adds it in the GEMM's
  // epilogue (vae_pointwise); undefined elsewhere.
  Tensor b16;
  // Device, kt > 1, where the decoder asks: w with its temporal taps rotated by r = 1 … kt − 1
  // (w_rot[r − 1][o, s] = w[o, (s − r) mod kt]), the weights of the ring mode below.
  std::vector<Tensor> w_rot;
  int64_t cin = 0, cout = 0, cout_store = 0, kt = 1, kh = 1, kw = 1;
  bool pointwise() const { return kt == 1 && kh == 1 && kw == 1; }
};

// The causal cache of a conv: its last kt − 1 (halo-extended) input frames; undefined = zeros. In
// ring mode (vae_ring_applies) the kt input frames live in `ring` instead and nothing is copied.
struct VaeConvCache {
  Tensor frames;
  Tensor ring;        // [kt, H', W', C]: frame n in slot (n + kt − 1) % kt
  int64_t calls = 0;  // ring mode: frames convolved so far
};

// Device w [Cout_s, kt, kh, kw, Cin] → its kt − 1 rotations (VaeConvWeights::w_rot) into `rot`
// (allocated when empty, else overwritten: a weight stream fills them once w has arrived).
void vae_conv_tap_rotations(const Tensor& w, std::vector<Tensor>& rot);

// Ring mode of a causal conv (device; weights with rotations; one new frame per call, as every
// decoder conv sees): frame n is written into slot (n + kt − 1) % kt of the cache's ring and the
// window [n − kt + 1, n] is the whole ring read in place with the weight rotated by n % kt, so the
// cached frames are never copied to the front of a fresh buffer (results/vae: the VAE decode).
bool vae_ring_applies(const VaeConvWeights& c, const VaeConvCache* cache, const Shape& in_shape, Device device,
                      bool cache_copy);
// The slot of the ring that frame `n` of a kt-tap conv lands in, and the time tap τ < kt that slot s
// holds in frame n's window (ring order → time order).
inline int64_t vae_ring_slot(int64_t n, int64_t kt) { return (n + kt - 1) % kt; }
inline int64_t vae_ring_tap(int64_t s, int64_t n, int64_t kt) { return ((s - n) % kt + kt) % kt; }

// Frames a conv input buffer holds in front of its body for the cache: the device's conv runs over
// one buffer [cache, chunk] (kt − 1 frames), the host's reference takes the cache beside its input (0).
int64_t vae_conv_front(Device device, int64_t kt);
// A conv input buffer: `front` frames, then a body of `shape` (the layout's) → both as tensors.
struct VaeConvBuffer {
  Tensor buf, body;
};
VaeConvBuffer vae_conv_buffer(const Shape& shape, DType dt, Device device, int64_t front);
// Where a conv input goes, given its body's final (halo-extended) shape: a fresh buffer with `front`
// leading frames (vae_buffer_alloc), or the next slot of a conv's ring (vae_ring_alloc).
using VaeBufferAlloc = std::function<VaeConvBuffer(const Shape& body)>;
VaeBufferAlloc vae_buffer_alloc(DType dt, Device device, int64_t front);
VaeBufferAlloc vae_ring_alloc(VaeConvCache& cache, int64_t kt, DType dt, Device device);
// The ring mode's conv over cache.ring (filled through vae_ring_alloc) → [1, H, W, Cout_s], plus
// `residual` (that shape) where given, in the conv's epilogue.
Tensor vae_ring_conv(const VaeConvWeights& c, VaeConvCache& cache, const Conv3dPad& pad, const VaeConvPolicy& conv,
                     const Tensor* residual = nullptr);

// The stride-1 conv of `c` over buf (vae_conv_front frames in front of the chunk) with the zero
// padding `pad`: with kt > 1 over [cache, chunk], the cache then holding the last kt − 1 frames
// (diffusers' feat_cache protocol; device: a view of buf, or with cache_copy a copy) → [Cout_s, t, H, W]
// / [t, H, W, Cout_s]. `conv`: the device conv's backend (the host runs the reference). `residual`
// (the output's shape, Cout_s = Cout) is added where given: on the device in the conv's epilogue.
Tensor vae_causal_conv(const VaeConvWeights& c, const Tensor& buf, const Conv3dPad& pad, VaeConvCache* cache,
                       bool cache_copy, const VaeConvPolicy& conv, const Tensor* residual = nullptr);
// A 1×1×1 conv of x (any number of frames; device: one GEMM) → Cout_s channels.
Tensor vae_pointwise(const VaeConvWeights& c, const Tensor& x);

// Channel RMS norm: x / max(‖x‖ over C, 1e-12) · √C · γ (gamma f32 with C elements), then SiLU if
// asked. The _into form writes y (x's shape; host: contiguous f32; device: any float dtype, a view).
Tensor vae_rms_norm(const Tensor& x, const Tensor& gamma, bool silu);
void vae_rms_norm_into(const Tensor& x, const Tensor& gamma, bool silu, Tensor& y);


// Single-head attention within each frame, scale 1/√C: queries from channels [0, C) of qkv (this
// rank's part), keys and values from channels [C, 2C) and [2C, 3C) of kv (the whole frame) → [C] channels.
Tensor vae_frame_attention(const Tensor& qkv, const Tensor& kv, int64_t C);

void add_(Tensor& y, const Tensor& x);  // y += x, same numel and dtype
void clamp_(Tensor& t, float lo, float hi);

// Decoder output: channels [0, C) of frames x, clamped to [lo, hi], into frames [f0, f0 + t) of
// video [C, F, H, W] f32 on x's device.
void vae_write_frames(const Tensor& x, int64_t C, float lo, float hi, Tensor& video, int64_t f0);

// Strided 2-D copy of `height` rows of `width` bytes between buffers on `device` (device:
// cudaMemcpy2DAsync on compute_stream()), and the zeroing of such rows (cudaMemset2DAsync).
void copy_2d(Device device, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height);
void zero_2d(Device device, void* dst, size_t pitch, size_t width, size_t height);

// Host references, x [Cin, Ti, Hi, Wi], w [Cout, Cin, kt, kh, kw] or 2-D [Cout, Cin, kh, kw] (kt = 1),
// b [Cout] or undefined → [Cout, Tp+Ti−kt+1, Ho, Wo] (stride 1, spatial zero padding `pad`, no
// temporal padding). prev [Cin, Tp, Hi, Wi] (optional): frames in front of x, e.g. the causal cache.
Tensor vae_conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const Conv3dPad& pad,
                  const Tensor& prev = Tensor());
// Concatenates host [C, T_i, H, W] tensors along T (dim 1).
Tensor cat_time(const Tensor& a, const Tensor& b);
// Frames [t0, t0+len) of a host x [C, T, H, W] (a copy).
Tensor slice_time(const Tensor& x, int64_t t0, int64_t len);

}  // namespace vgen
