// Building blocks of the Wan 2.1 VAE decoder (wan_spec §5.2) on one chunk of frames, with the
// causal temporal feature cache. Activations are [C, T, H, W] f32 (batch item already selected);
// every spatial conv goes through the VaeSpatialContext, so the same code runs split across ranks.
#pragma once
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/wan/vae/vae_spatial.h"

namespace vgen {

// A (causal) 3-D or 2-D convolution: weight [Cout, Cin, kt, kh, kw] or [Cout, Cin, kh, kw], bias [Cout].
struct VaeConv {
  Tensor w, b;
  int64_t cin = 0, cout = 0, kt = 1, kh = 1, kw = 1;
  // Loads `<prefix>.weight` / `<prefix>.bias` with the expected shape (kt = 0: a Conv2d).
  static VaeConv load(const WeightStore& ws, const std::string& prefix, int64_t cout, int64_t cin, int64_t kt,
                      int64_t kh, int64_t kw);
};

// Causal conv over the chunk x [Cin, t, H, W] → [Cout, t, H, W]: the cache holds the last kt−1
// (halo-extended) input frames of the previous chunks, zeros before the first chunk — exactly
// diffusers' feat_cache protocol (CACHE_T = 2). Convs with kt = 1 ignore the cache.
Tensor causal_conv(const VaeConv& conv, const Tensor& x, Tensor& cache, VaeSpatialContext& ctx);

struct VaeResBlock {
  Tensor norm1, norm2;  // gamma [in], [out]
  VaeConv conv1, conv2, shortcut;  // shortcut.w undefined when in == out
  struct State {
    Tensor cache1, cache2;
  };
  static VaeResBlock load(const WeightStore& ws, const std::string& prefix, int64_t in, int64_t out);
  Tensor forward(const Tensor& x, State& st, VaeSpatialContext& ctx) const;
};

// Single-head self-attention over each frame (mid block); keys span the whole frame.
struct VaeAttnBlock {
  Tensor norm;  // gamma [C]
  VaeConv to_qkv, proj;
  int64_t dim = 0;
  static VaeAttnBlock load(const WeightStore& ws, const std::string& prefix, int64_t dim);
  Tensor forward(const Tensor& x, VaeSpatialContext& ctx) const;
};

// upsample2d / upsample3d: optional causal time_conv (dim → 2·dim, 3×1×1, frames interleaved),
// then nearest ×2 and a 3×3 Conv2d dim → dim/2.
struct VaeUpsampler {
  bool temporal = false;
  VaeConv time_conv, resample;
  struct State {
    bool seen = false;  // diffusers' "Rep": the first chunk skips time_conv
    Tensor cache;
  };
  static VaeUpsampler load(const WeightStore& ws, const std::string& prefix, int64_t dim, bool temporal);
  Tensor forward(const Tensor& x, State& st, VaeSpatialContext& ctx) const;
};

}  // namespace vgen
