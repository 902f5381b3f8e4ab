#include "model/wan/vae/vae_encoder_parallel.h"

#include <limits>

#include "ops/vae_down_ops.h"

namespace vgen {

namespace {

// The next rank's first row/col travels to this rank (distinct from the halo exchange's tags).
constexpr int kTagDownHalo = 7311;

// An activation (the device's layout) viewed as [outer, extent, inner] along the split dim.
struct SplitView {
  int64_t outer, extent, inner;
  int axis;
};
SplitView split_view(const Shape& s, Device device, VaeSplitDim d) {
  VGEN_ASSERT(s.size() == 4, "parallel VAE encode: activation {} must be 4-D", shape_str(s));
  const bool w = d == VaeSplitDim::kWidth;
  const int a = device == Device::kCPU ? (w ? 3 : 2) : (w ? 2 : 1);  // [C, t, H, W] | [t, H, W, C]
  SplitView v{1, s[size_t(a)], 1, a};
  for (int i = 0; i < a; ++i) v.outer *= s[size_t(i)];
  for (int i = a + 1; i < 4; ++i) v.inner *= s[size_t(i)];
  return v;
}

// Rows/cols [s0, s0 + len) of src [outer, sext, inner] into dst [outer, dext, inner] at `off` (null
// src: zeros).
void copy_rows(Tensor& dst, int64_t dext, int64_t off, const void* src, int64_t sext, int64_t s0, int64_t len,
               const SplitView& v) {
  const size_t es = dtype_size(dst.dtype()), w = size_t(len * v.inner) * es;
  char* d = static_cast<char*>(dst.raw()) + size_t(off * v.inner) * es;
  if (src)
    copy_2d(dst.device(), d, size_t(dext * v.inner) * es, static_cast<const char*>(src) + size_t(s0 * v.inner) * es,
            size_t(sext * v.inner) * es, w, size_t(v.outer));
  else
    zero_2d(dst.device(), d, size_t(dext * v.inner) * es, w, size_t(v.outer));
}

// This rank's pixels of one video item [in, F, H, W]: rows or cols [p0, p0 + len) → [in, F, h, w]
// on the video's device.
Tensor video_part(const Tensor& video, VaeSplitDim dim, int64_t p0, int64_t len) {
  Shape s = video.shape();
  const bool w = dim == VaeSplitDim::kWidth;
  const SplitView v{w ? s[0] * s[1] * s[2] : s[0] * s[1], w ? s[3] : s[2], w ? 1 : s[3], w ? 3 : 2};
  s[size_t(v.axis)] = len;
  Tensor y = Tensor::empty(s, video.dtype(), video.device());  // [in, F, h, w]
  copy_rows(y, len, 0, video.raw(), v.extent, p0, len, v);
  return y;
}

}  // namespace

HaloEncoderContext::HaloEncoderContext(Communicator& comm, VaeSplitDim dim, std::vector<int64_t> base)
    : halo_(comm, dim, std::move(base)), comm_(comm), dim_(dim) {}

Tensor HaloEncoderContext::down_conv_input(const Tensor& x, Conv3dPad& pad) {
  const SplitView v = split_view(x.shape(), x.device(), dim_);
  const int r = comm_.rank(), P = comm_.size();
  const bool has_prev = r > 0, has_next = r < P - 1;
  Tensor first, next;
  if (has_prev) {
    first = Tensor::empty({v.outer * v.inner}, x.dtype(), x.device());  // this part's first row/col
    copy_rows(first, 1, 0, x.raw(), v.extent, 0, 1, v);
  }
  if (has_next) next = Tensor::empty({v.outer * v.inner}, x.dtype(), x.device());
  if (has_prev && has_next)
    comm_.sendrecv(first, r - 1, next, r + 1, kTagDownHalo);
  else if (has_prev)
    comm_.send(first, r - 1, kTagDownHalo);
  else if (has_next)
    comm_.recv(next, r + 1, kTagDownHalo);
  Shape s = x.shape();
  s[size_t(v.axis)] = v.extent + 1;
  Tensor buf = Tensor::empty(s, x.dtype(), x.device());  // [.., extent + 1, ..]
  copy_rows(buf, v.extent + 1, 0, x.raw(), v.extent, 0, v.extent, v);
  copy_rows(buf, v.extent + 1, v.extent, has_next ? next.raw() : nullptr, 1, 0, 1, v);
  // The split dim is extended (zeros past the frame's end); the other keeps the pad's row/col.
  pad = dim_ == VaeSplitDim::kWidth ? Conv3dPad{0, 1, 0, 0} : Conv3dPad{0, 0, 0, 1};
  return buf;
}

Tensor parallel_vae_encode(const WanVaeEncoder& enc, const Tensor& video, Communicator& comm, VaeSplitDim dim) {
  const Shape ms = enc.moments_shape(video);  // [B, 2z, T, h, w]
  const int64_t s = vae_encoder_spatial_factor(enc.config()), z2 = ms[1];
  const char* dim_name = dim == VaeSplitDim::kWidth ? "width" : "height";
  const int64_t extent = dim == VaeSplitDim::kWidth ? ms[4] : ms[3];
  VGEN_CHECK(extent >= comm.size(), ExitCode::kRecipe,
             "parallel_config.parallel_vae_size = {} exceeds the latent {} {} (each VAE rank needs at least one "
             "latent row/col; use a smaller parallel_vae_size or the other parallel_vae_split_dim)",
             comm.size(), dim_name, extent);
  const std::vector<int64_t> sizes = vae_split_sizes(extent, comm.size());
  int64_t start = 0;
  for (int r = 0; r < comm.rank(); ++r) start += sizes[size_t(r)];
  const int64_t mine = sizes[size_t(comm.rank())];
  Tensor out = Tensor::empty(ms, DType::kF32, enc.options().device);  // [B, 2z, T, h, w]
  const float inf = std::numeric_limits<float>::infinity();
  HaloEncoderContext ctx(comm, dim, sizes);
  for (int64_t b = 0; b < ms[0]; ++b) {
    const Tensor part = video_part(video[b], dim, start * s, mine * s);  // [in, F, H_r, W_r]
    Tensor ob = out[b];                                                 // [2z, T, h, w]
    enc.encode_stream(part, ctx, [&](const Tensor& y, int64_t t0) {
      vae_write_frames(ctx.gather(y), z2, -inf, inf, ob, t0);  // the whole frame's latent frames
    });
  }
  return out;
}

Tensor vae_group_encode(const WanVaeEncoder& enc, const Tensor& video, Communicator* vae, VaeSplitDim dim) {
  if (!vae) return Tensor();
  if (vae->size() == 1) return enc.encode_moments(video);
  return parallel_vae_encode(enc, video, *vae, dim);
}

}  // namespace vgen
