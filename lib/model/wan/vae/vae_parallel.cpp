#include "model/wan/vae/vae_parallel.h"

#include <cstring>

namespace vgen {

namespace {
// Messages of the two halo phases (MPI keeps same-tag messages between a pair in order, NCCL matches
// point-to-point messages in call order), so consecutive exchanges cannot mix.
constexpr int kTagToRight = 7301, kTagToLeft = 7302;

// An activation (the device's layout, ops/vae_ops.h) viewed as [outer, extent, inner] along the
// split dim.
struct SplitView {
  int64_t outer, extent, inner;
};
int split_axis(Device device, VaeSplitDim d) {
  const bool w = d == VaeSplitDim::kWidth;
  return device == Device::kCPU ? (w ? 3 : 2) : (w ? 2 : 1);  // [C, t, H, W] | [t, H, W, C]
}
SplitView split_view(const Shape& s, Device device, VaeSplitDim d) {
  VGEN_ASSERT(s.size() == 4, "parallel VAE: activation {} must be 4-D", shape_str(s));
  const int a = split_axis(device, d);
  SplitView v{1, s[size_t(a)], 1};
  for (int i = 0; i < a; ++i) v.outer *= s[size_t(i)];
  for (int i = a + 1; i < 4; ++i) v.inner *= s[size_t(i)];
  return v;
}
Shape with_extent(Shape s, Device device, VaeSplitDim d, int64_t e) {
  s[size_t(split_axis(device, d))] = e;
  return s;
}

char* bytes(Tensor& t) { return static_cast<char*>(t.raw()); }
const char* bytes(const Tensor& t) { return static_cast<const char*>(t.raw()); }

// [s0, s0 + len) of x along the split dim as a contiguous [outer, len, inner] tensor.
Tensor take(const Tensor& x, const SplitView& v, int64_t s0, int64_t len) {
  const size_t es = dtype_size(x.dtype());
  Tensor y = Tensor::empty({v.outer * len * v.inner}, x.dtype(), x.device());
  copy_2d(x.device(), y.raw(), size_t(len * v.inner) * es, bytes(x) + size_t(s0 * v.inner) * es,
          size_t(v.extent * v.inner) * es, size_t(len * v.inner) * es, size_t(v.outer));
  return y;
}

// Writes src [outer, len, inner] into dst [outer, dext, inner] at [off, off + len) (null src: zeros).
void place(Tensor& dst, int64_t dext, const void* src, const SplitView& v, int64_t off, int64_t len) {
  const size_t es = dtype_size(dst.dtype()), w = size_t(len * v.inner) * es;
  char* d = bytes(dst) + size_t(off * v.inner) * es;
  if (src)
    copy_2d(dst.device(), d, size_t(dext * v.inner) * es, src, w, w, size_t(v.outer));
  else
    zero_2d(dst.device(), d, size_t(dext * v.inner) * es, w, size_t(v.outer));
}

void shift(Communicator& comm, const Tensor* send, int dst, Tensor* recv, int src, int tag) {
  if (send && recv)
    comm.sendrecv(*send, dst, *recv, src, tag);
  else if (send)
    comm.send(*send, dst, tag);
  else if (recv)
    comm.recv(*recv, src, tag);
}
}  // namespace

std::vector<int64_t> vae_split_sizes(int64_t extent, int parts) {
  VGEN_ASSERT(parts >= 1, "vae_split_sizes: {} parts", parts);
  std::vector<int64_t> sizes(size_t(parts), extent / parts);
  for (int64_t r = 0; r < extent % parts; ++r) sizes[size_t(r)] += 1;
  return sizes;
}

HaloSpatialContext::HaloSpatialContext(Communicator& comm, VaeSplitDim dim, std::vector<int64_t> base)
    : comm_(comm), dim_(dim), base_(std::move(base)) {
  VGEN_ASSERT(int(base_.size()) == comm_.size(), "HaloSpatialContext: {} extents for {} ranks", base_.size(),
              comm_.size());
  for (int64_t e : base_) VGEN_ASSERT(e >= 1, "HaloSpatialContext: a rank holds no rows/cols");
}

std::vector<int64_t> HaloSpatialContext::extents_for(const Tensor& x) const {
  const int64_t e = split_view(x.shape(), x.device(), dim_).extent, mine = base_[size_t(comm_.rank())];
  VGEN_ASSERT(e % mine == 0, "parallel VAE: local extent {} is not a multiple of the latent extent {}", e, mine);
  std::vector<int64_t> ext(base_.size());
  for (size_t r = 0; r < base_.size(); ++r) ext[r] = base_[r] * (e / mine);
  return ext;
}

Tensor HaloSpatialContext::conv_input(const Shape& shape, DType dt, Device device, int64_t halo, const VaeBufferAlloc& alloc,
                                      const std::function<void(Tensor&)>& fill, Conv3dPad& pad) {
  if (halo == 0) {  // a kernel without spatial extent needs no neighbour
    VaeConvBuffer b = alloc(shape);
    fill(b.body);
    pad = {};
    return b.buf;
  }
  Tensor x = Tensor::empty(shape, dt, device);  // this rank's part
  fill(x);
  const SplitView v = split_view(shape, device, dim_);
  VGEN_ASSERT(halo >= 1 && halo <= v.extent, "parallel VAE: halo {} for a local extent {}", halo, v.extent);
  const int r = comm_.rank(), P = comm_.size();
  const bool has_left = r > 0, has_right = r < P - 1;
  Tensor left_edge = take(x, v, 0, halo), right_edge = take(x, v, v.extent - halo, halo);
  Tensor from_left, from_right;
  if (has_left) from_left = Tensor::empty({v.outer * halo * v.inner}, dt, device);
  if (has_right) from_right = Tensor::empty({v.outer * halo * v.inner}, dt, device);
  // Phase 1: right edges travel right; phase 2: left edges travel left (chains, no cycles).
  shift(comm_, has_right ? &right_edge : nullptr, r + 1, has_left ? &from_left : nullptr, r - 1, kTagToRight);
  shift(comm_, has_left ? &left_edge : nullptr, r - 1, has_right ? &from_right : nullptr, r + 1, kTagToLeft);

  const int64_t total = v.extent + 2 * halo;  // zeros stand in for a missing neighbour
  VaeConvBuffer b = alloc(with_extent(shape, device, dim_, total));
  place(b.body, total, has_left ? from_left.raw() : nullptr, v, 0, halo);
  place(b.body, total, x.raw(), v, halo, v.extent);
  place(b.body, total, has_right ? from_right.raw() : nullptr, v, halo + v.extent, halo);
  if (dim_ == VaeSplitDim::kWidth)
    pad = {halo, halo, 0, 0};
  else
    pad = {0, 0, halo, halo};
  return b.buf;
}

Tensor HaloSpatialContext::gather(const Tensor& x) {
  const SplitView v = split_view(x.shape(), x.device(), dim_);
  const std::vector<int64_t> ext = extents_for(x);
  std::vector<int64_t> counts(ext.size());
  int64_t total_ext = 0, total = 0;
  for (size_t r = 0; r < ext.size(); ++r) {
    counts[r] = v.outer * ext[r] * v.inner;
    total_ext += ext[r];
    total += counts[r];
  }
  Tensor send = x.reshape({x.numel()});
  Tensor recv = Tensor::empty({total}, x.dtype(), x.device());
  comm_.all_gather_v(send, recv, counts);  // rank-ordered [outer, e_r, inner] blocks
  Tensor full = Tensor::empty(with_extent(x.shape(), x.device(), dim_, total_ext), x.dtype(), x.device());
  const size_t es = dtype_size(x.dtype());
  int64_t off = 0, pos = 0;
  for (size_t r = 0; r < ext.size(); ++r) {
    place(full, total_ext, bytes(recv) + size_t(off) * es, v, pos, ext[r]);
    off += counts[r];
    pos += ext[r];
  }
  return full;
}

VaeSplitPlan vae_split_plan(const WanVaeConfig& cfg, const Tensor& z, int parts, int rank, VaeSplitDim dim) {
  VGEN_CHECK(z.ndim() == 5 && z.dim(1) == cfg.z_dim, ExitCode::kInput,
             "parallel VAE decode: latents {} must be [B, {}, T, H, W]", z.str(), cfg.z_dim);
  const char* dim_name = dim == VaeSplitDim::kWidth ? "width" : "height";
  const int64_t extent = dim == VaeSplitDim::kWidth ? z.dim(4) : z.dim(3);
  VGEN_CHECK(extent >= parts, ExitCode::kRecipe,
             "parallel_config.parallel_vae_size = {} exceeds the latent {} {} (each VAE rank needs at least one "
             "latent row/col; use a smaller parallel_vae_size or the other parallel_vae_split_dim)",
             parts, dim_name, extent);
  VaeSplitPlan plan;
  plan.sizes = vae_split_sizes(extent, parts);
  for (int r = 0; r < rank; ++r) plan.start += plan.sizes[size_t(r)];
  return plan;
}

Tensor parallel_vae_decode(const WanVaeDecoder& dec, const Tensor& z, Communicator& comm, VaeSplitDim dim) {
  const WanVaeConfig& cfg = dec.config();
  const VaeSplitPlan plan = vae_split_plan(cfg, z, comm.size(), comm.rank(), dim);
  const int64_t start = plan.start, mine = plan.sizes[size_t(comm.rank())];
  const int64_t B = z.dim(0), Z = cfg.z_dim, T = z.dim(2), Hl = z.dim(3), Wl = z.dim(4);
  Tensor zc = z.to(Device::kCPU).to(DType::kF32);  // [B, Z, T, H, W]
  Tensor video = Tensor::empty(vae_video_shape(cfg, z.shape()), DType::kF32, dec.options().device);  // [B, C, F, sH, sW]
  HaloSpatialContext ctx(comm, dim, plan.sizes);
  for (int64_t b = 0; b < B; ++b) {
    // This rank's latent part [Z, T, h, w] (host copy; the decoder uploads it).
    const int64_t h = dim == VaeSplitDim::kHeight ? mine : Hl, w = dim == VaeSplitDim::kWidth ? mine : Wl;
    const int64_t h0 = dim == VaeSplitDim::kHeight ? start : 0, w0 = dim == VaeSplitDim::kWidth ? start : 0;
    Tensor local = Tensor::empty({Z, T, h, w}, DType::kF32);
    const float* src = zc.f32() + b * Z * T * Hl * Wl;
    for (int64_t ct = 0; ct < Z * T; ++ct)
      for (int64_t y = 0; y < h; ++y)
        std::memcpy(local.f32() + (ct * h + y) * w, src + (ct * Hl + h0 + y) * Wl + w0, size_t(w) * sizeof(float));
    Tensor vb = video[b];  // [C, F, sH, sW]
    dec.decode_stream(local, ctx, [&](const Tensor& y, int64_t f0) {
      vae_write_video_frames(cfg, ctx.gather(y), vb, f0);  // the whole frame's f frames
    });
  }
  return video;
}

Tensor vae_group_decode(const WanVaeDecoder& dec, const Tensor& z, Communicator* vae, VaeSplitDim dim) {
  if (!vae) return Tensor();
  if (vae->size() == 1) return dec.decode(z);
  return parallel_vae_decode(dec, z, *vae, dim);
}

#ifndef VGEN_WITH_CUDA
std::shared_ptr<Communicator> device_vae_communicator(const Mesh&) {
  VGEN_THROW(ExitCode::kUsage,
             "device_vae_communicator: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu");
}
#endif

}  // namespace vgen
