// Weights of the VAE decoder (vae_layers.h): the host's checkpoint tensors as stored; the device's
// read to the device as f32, then permuted to the channels-last conv layout [Cout, kt, kh, kw, Cin]
// and converted to the compute dtype there; or random device fills.
#include <memory>

#include "dist/weight_stream.h"
#include "model/wan/vae/vae_layers.h"
#include "ops/device_ops.h"
#include "ops/dit_device_ops.h"
#include "ops/vae_device_ops.h"
#include "ops/vae_subpixel_ops.h"

namespace vgen {

VaeConvWeights VaeWeightSource::conv(const std::string& prefix, int64_t cout, int64_t cin, int64_t kt, int64_t kh,
                                     int64_t kw, int64_t cout_multiple) {
  VaeConvWeights c;
  c.cin = cin;
  c.cout = cout;
  c.kt = kt == 0 ? 1 : kt;
  c.kh = kh;
  c.kw = kw;
  const Shape file_shape = kt == 0 ? Shape{cout, cin, kh, kw} : Shape{cout, cin, kt, kh, kw};
  if (headers_only_) {
    ws_->check_float(prefix + ".weight", file_shape);
    ws_->check_float(prefix + ".bias", {cout});
    return c;
  }
  if (ws_) {
    c.cout_store = cout;
    c.w = ws_->get_f32(prefix + ".weight", file_shape);
    c.b = ws_->get_f32(prefix + ".bias", {cout});
    bytes_ += c.w.nbytes() + c.b.nbytes();
    return c;
  }
  c.cout_store = (cout + cout_multiple - 1) / cout_multiple * cout_multiple;
  const Shape dev_shape = c.pointwise() ? Shape{c.cout_store, cin} : Shape{c.cout_store, c.kt, kh, kw, cin};
  const bool ring = c.kt > 1 && size_t(shape_numel(dev_shape)) * dtype_size(dt_) <= ring_max_bytes_;
  const bool bias16 = c.pointwise() && dt_ == DType::kBF16;  // vae_pointwise's epilogue bias
  if (!stream_) {
    c.w = Tensor::empty(dev_shape, dt_, Device::kCUDA);
    cuda_fill_normal(c.w, seed_++, 0.0f, std_);
    c.b = Tensor::empty({c.cout_store}, DType::kF32, Device::kCUDA);
    cuda_fill_normal(c.b, seed_++, 0.0f, std_);
    if (ring) vae_conv_tap_rotations(c.w, c.w_rot);
    if (bias16) c.b16 = cuda_cast(c.b, DType::kBF16);
  } else {
    Tensor w32 = Tensor::empty(file_shape, DType::kF32, Device::kCUDA);  // [cout, cin, taps] as stored
    Tensor b32 = Tensor::empty({cout}, DType::kF32, Device::kCUDA);
    stream_->request(comp_, prefix + ".weight", w32, file_shape);
    stream_->request(comp_, prefix + ".bias", b32, {cout});
    c.w = Tensor::empty(dev_shape, dt_, Device::kCUDA);  // [cout_s, taps, cin]
    c.b = Tensor::zeros({c.cout_store}, DType::kF32, Device::kCUDA);
    if (ring)  // filled once w has arrived
      for (int64_t r = 1; r < c.kt; ++r) c.w_rot.push_back(Tensor::empty(dev_shape, dt_, Device::kCUDA));
    if (bias16) c.b16 = Tensor::empty({c.cout_store}, DType::kBF16, Device::kCUDA);
    stream_->on_done([w32, b32, w = c.w, b = c.b, b16 = c.b16, rot = c.w_rot]() mutable {
      cuda_vae_conv_weight_layout(w32, w);
      b.narrow(0, b32.dim(0)).copy_from(b32);
      if (b16.defined()) b16.copy_from(cuda_cast(b, DType::kBF16));
      if (!rot.empty()) vae_conv_tap_rotations(w, rot);
    });
  }
  bytes_ += c.w.nbytes() * (1 + c.w_rot.size()) + c.b.nbytes() + (c.b16.defined() ? c.b16.nbytes() : 0);
  return c;
}

VaeConvWeights VaeWeightSource::subpixel_conv(const std::string& prefix, int64_t cout, int64_t cin) {
  VaeConvWeights c;
  c.cin = cin;
  c.cout = c.cout_store = 4 * cout;
  c.kh = c.kw = 2;
  const Shape file_shape{cout, cin, 3, 3};
  if (headers_only_) {
    ws_->check_float(prefix + ".weight", file_shape);
    ws_->check_float(prefix + ".bias", {cout});
    return c;
  }
  if (ws_) {
    c.w = vae_subpixel_weight(ws_->get_f32(prefix + ".weight", file_shape));  // [4·cout, cin, 2, 2]
    const Tensor b = ws_->get_f32(prefix + ".bias", {cout});
    c.b = Tensor::empty({4 * cout}, DType::kF32);
    for (int64_t p = 0; p < 4; ++p) c.b.narrow(p * cout, cout).copy_from(b);
    bytes_ += c.w.nbytes() + c.b.nbytes();
    return c;
  }
  c.w = Tensor::empty({4 * cout, 1, 2, 2, cin}, dt_, Device::kCUDA);  // [4·cout, kt, kh, kw, cin]
  c.b = Tensor::empty({4 * cout}, DType::kF32, Device::kCUDA);
  if (!stream_) {
    cuda_fill_normal(c.w, seed_++, 0.0f, std_);
    cuda_fill_normal(c.b, seed_++, 0.0f, std_);
  } else {
    Tensor w32 = Tensor::empty(file_shape, DType::kF32, Device::kCUDA);  // [cout, cin, 3, 3] as stored
    Tensor b32 = Tensor::empty({cout}, DType::kF32, Device::kCUDA);
    stream_->request(comp_, prefix + ".weight", w32, file_shape);
    stream_->request(comp_, prefix + ".bias", b32, {cout});
    stream_->on_done([w32, b32, w = c.w, b = c.b, cout]() mutable {
      cuda_vae_conv_weight_layout(vae_subpixel_weight(w32), w);  // folded in f32, one rounding
      for (int64_t p = 0; p < 4; ++p) b.narrow(p * cout, cout).copy_from(b32);
    });
  }
  bytes_ += c.w.nbytes() + c.b.nbytes();
  return c;
}

Tensor VaeWeightSource::gamma(const std::string& name, const Shape& shape) {
  Tensor g;
  if (headers_only_) {
    ws_->check_float(name, shape);
    return g;
  }
  if (ws_) {
    g = ws_->get_f32(name, shape);
  } else {
    g = Tensor::empty({shape_numel(shape)}, DType::kF32, Device::kCUDA);
    if (!stream_)
      cuda_fill_normal(g, seed_++, 0.0f, std_);
    else
      stream_->request(comp_, name, g, shape);
  }
  bytes_ += g.nbytes();
  return g;
}

VaeResBlock load_vae_res_block(VaeWeightSource& src, const std::string& p, int64_t in, int64_t out) {
  VaeResBlock r;
  r.norm1 = src.gamma(p + ".norm1.gamma", {in, 1, 1, 1});
  r.conv1 = src.conv(p + ".conv1", out, in, 3, 3, 3);
  r.norm2 = src.gamma(p + ".norm2.gamma", {out, 1, 1, 1});
  r.conv2 = src.conv(p + ".conv2", out, out, 3, 3, 3);
  r.has_shortcut = in != out;
  if (r.has_shortcut) r.shortcut = src.conv(p + ".conv_shortcut", out, in, 1, 1, 1);
  return r;
}

VaeAttnBlock load_vae_attn_block(VaeWeightSource& src, const std::string& p, int64_t dim) {
  VaeAttnBlock a;
  a.dim = dim;
  a.norm = src.gamma(p + ".norm.gamma", {dim, 1, 1});
  a.to_qkv = src.conv(p + ".to_qkv", 3 * dim, dim, 0, 1, 1);
  a.proj = src.conv(p + ".proj", dim, dim, 0, 1, 1);
  return a;
}

size_t build_vae_weights(const WeightStore& ws, Device device, DType dtype, WeightStream* stream, int component,
                         const std::function<void(VaeWeightSource&)>& build) {
  if (device == Device::kCPU) {
    VaeWeightSource src(ws);
    build(src);
    return src.bytes();
  }
  std::unique_ptr<WeightStream> own;
  if (!stream) {  // a stream of this call alone
    own = std::make_unique<WeightStream>(nullptr, nullptr);
    stream = own.get();
    component = stream->add_component("vae", ws);
  }
  VaeWeightSource src(stream, component, dtype, 0, 0.0f);
  build(src);
  if (own) own->run();
  return src.bytes();
}

void build_vae_layers(const WanVaeConfig& cfg, VaeWeightSource& src, VaeDecoderLayers& L) {
  const int64_t z = cfg.z_dim;
  const std::vector<int> dims = cfg.decoder_dims();  // [d0, ..., dn]
  const std::vector<bool> tup = cfg.temperal_upsample();
  const int nb = cfg.num_up_blocks();
  L.post_quant_conv = src.conv("post_quant_conv", z, z, 1, 1, 1);
  L.conv_in = src.conv("decoder.conv_in", dims[0], z, 3, 3, 3);
  L.mid0 = load_vae_res_block(src, "decoder.mid_block.resnets.0", dims[0], dims[0]);
  L.attn = load_vae_attn_block(src, "decoder.mid_block.attentions.0", dims[0]);
  L.mid1 = load_vae_res_block(src, "decoder.mid_block.resnets.1", dims[0], dims[0]);
  L.up_res.assign(size_t(nb), {});
  L.has_up.assign(size_t(nb), false);
  L.up.assign(size_t(nb), {});
  L.dup_up.assign(size_t(nb), {});
  for (int i = 0; i < nb; ++i) {
    // Wan 2.1: block i > 0 takes the previous upsampler's output, half of dims[i]; Wan 2.2's
    // residual blocks (WanResidualUpBlock) all of it.
    int64_t in = cfg.up_block_in(i);
    const int64_t out = dims[size_t(i) + 1];
    const std::string p = "decoder.up_blocks." + std::to_string(i);
    for (int r = 0; r < cfg.num_res_blocks + 1; ++r) {
      L.up_res[size_t(i)].push_back(load_vae_res_block(src, p + ".resnets." + std::to_string(r), in, out));
      in = out;
    }
    if (i != nb - 1) {
      L.has_up[size_t(i)] = true;
      VaeUpsampler& u = L.up[size_t(i)];
      u.temporal = tup[size_t(i)];
      const std::string up = p + (cfg.is_residual ? ".upsampler" : ".upsamplers.0");
      if (u.temporal) u.time_conv = src.conv(up + ".time_conv", 2 * out, out, 3, 1, 1);
      u.resample = src.subpixel_conv(up + ".resample.1", cfg.upsampler_out(i), out);
      if (cfg.is_residual) L.dup_up[size_t(i)] = {out, u.temporal ? 2 : 1, 2};
    }
  }
  L.norm_out = src.gamma("decoder.norm_out.gamma", {dims.back(), 1, 1, 1});
  // conv_out's few output channels are padded to 8 on the device for cuDNN's tensor-core engines.
  L.conv_out = src.conv("decoder.conv_out", cfg.out_channels, dims.back(), 3, 3, 3, 8);
}

}  // namespace vgen
