#include "model/wan/vae/vae_parallel.h"

#include <cstring>

namespace vgen {

namespace {
// Messages of the two halo phases; MPI keeps same-tag messages between a pair in order, so
// consecutive exchanges cannot mix.
constexpr int kTagToRight = 7301, kTagToLeft = 7302;

// x [C, T, H, W] viewed as [outer, extent, inner] along the split dim.
struct SplitView {
  int64_t outer, extent, inner;
};
SplitView split_view(const Tensor& x, VaeSplitDim d) {
  VGEN_ASSERT(x.ndim() == 4, "parallel VAE: activation {} must be [C,T,H,W]", x.str());
  if (d == VaeSplitDim::kWidth) return {x.dim(0) * x.dim(1) * x.dim(2), x.dim(3), 1};
  return {x.dim(0) * x.dim(1), x.dim(2), x.dim(3)};
}

// Slices [s0, s0+len) of x along the split dim, as a contiguous [outer, len, inner] buffer.
Tensor take(const Tensor& x, const SplitView& v, int64_t s0, int64_t len) {
  Tensor y = Tensor::empty({v.outer * len * v.inner}, DType::kF32);
  const int64_t row = len * v.inner;
  for (int64_t o = 0; o < v.outer; ++o)
    std::memcpy(y.f32() + o * row, x.f32() + (o * v.extent + s0) * v.inner, size_t(row) * sizeof(float));
  return y;
}

// Concatenates [outer, e_i, inner] parts along the middle dim into dst [outer, Σe_i, inner].
void concat_parts(float* dst, const SplitView& v, const std::vector<const float*>& parts,
                  const std::vector<int64_t>& extents) {
  int64_t total = 0;
  for (int64_t e : extents) total += e;
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < v.outer; ++o) {
    float* out = dst + o * total * v.inner;
    for (size_t p = 0; p < parts.size(); ++p) {
      const int64_t row = extents[p] * v.inner;
      if (row == 0) continue;
      std::memcpy(out, parts[p] + o * row, size_t(row) * sizeof(float));
      out += row;
    }
  }
}

Shape with_extent(const Tensor& x, VaeSplitDim d, int64_t e) {
  Shape s = x.shape();
  s[d == VaeSplitDim::kWidth ? 3 : 2] = e;
  return s;
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
  const int64_t e = split_view(x, dim_).extent, mine = base_[size_t(comm_.rank())];
  VGEN_ASSERT(e % mine == 0, "parallel VAE: local extent {} is not a multiple of the latent extent {}", e, mine);
  std::vector<int64_t> ext(base_.size());
  for (size_t r = 0; r < base_.size(); ++r) ext[r] = base_[r] * (e / mine);
  return ext;
}

Tensor HaloSpatialContext::conv_input(const Shape& shape, DType dt, Device device, int64_t halo, int64_t front,
                                      const std::function<void(Tensor&)>& fill, Conv3dPad& pad) {
  VGEN_ASSERT(device == Device::kCPU && dt == DType::kF32 && front == 0, "parallel VAE: host f32 activations only");
  Tensor x = Tensor::empty(shape, DType::kF32);  // [C, t, H, W]
  fill(x);
  if (halo == 0) {
    pad = {};
    return x;
  }
  return extend(x, halo, pad);
}

Tensor HaloSpatialContext::extend(const Tensor& x, int64_t halo, Conv3dPad& pad) {
  const SplitView v = split_view(x, dim_);
  VGEN_ASSERT(halo >= 1 && halo <= v.extent, "parallel VAE: halo {} for a local extent {}", halo, v.extent);
  const int r = comm_.rank(), P = comm_.size();
  const bool has_left = r > 0, has_right = r < P - 1;
  Tensor left_edge = take(x, v, 0, halo), right_edge = take(x, v, v.extent - halo, halo);
  Tensor from_left, from_right;
  if (has_left) from_left = Tensor::empty({v.outer * halo * v.inner}, DType::kF32);
  if (has_right) from_right = Tensor::empty({v.outer * halo * v.inner}, DType::kF32);
  // Phase 1: right edges travel right; phase 2: left edges travel left (chains, no cycles).
  shift(comm_, has_right ? &right_edge : nullptr, r + 1, has_left ? &from_left : nullptr, r - 1, kTagToRight);
  shift(comm_, has_left ? &left_edge : nullptr, r - 1, has_right ? &from_right : nullptr, r + 1, kTagToLeft);

  std::vector<const float*> parts;
  std::vector<int64_t> extents;
  if (has_left) parts.push_back(from_left.f32()), extents.push_back(halo);
  parts.push_back(x.f32()), extents.push_back(v.extent);
  if (has_right) parts.push_back(from_right.f32()), extents.push_back(halo);
  const int64_t total = v.extent + (has_left ? halo : 0) + (has_right ? halo : 0);
  Tensor xe = Tensor::empty(with_extent(x, dim_, total), DType::kF32);  // [C, T, H', W']
  concat_parts(xe.f32(), v, parts, extents);

  const int64_t lo = has_left ? 0 : halo, hi = has_right ? 0 : halo;
  if (dim_ == VaeSplitDim::kWidth)
    pad = {halo, halo, lo, hi};
  else
    pad = {lo, hi, halo, halo};
  return xe;
}

Tensor HaloSpatialContext::gather(const Tensor& x) {
  const SplitView v = split_view(x, dim_);
  const std::vector<int64_t> ext = extents_for(x);
  std::vector<int64_t> counts(ext.size());
  int64_t total_ext = 0, total = 0;
  for (size_t r = 0; r < ext.size(); ++r) {
    counts[r] = v.outer * ext[r] * v.inner;
    total_ext += ext[r];
    total += counts[r];
  }
  Tensor send = x.reshape({x.numel()});
  Tensor recv = Tensor::empty({total}, DType::kF32);
  comm_.all_gather_v(send, recv, counts);  // rank-ordered [outer, e_r, inner] blocks
  std::vector<const float*> parts;
  int64_t off = 0;
  for (size_t r = 0; r < ext.size(); ++r) {
    parts.push_back(recv.f32() + off);
    off += counts[r];
  }
  Tensor full = Tensor::empty(with_extent(x, dim_, total_ext), DType::kF32);  // [C, T, Hf, Wf]
  concat_parts(full.f32(), v, parts, ext);
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
  const int P = comm.size();
  const VaeSplitPlan plan = vae_split_plan(cfg, z, P, comm.rank(), dim);
  const std::vector<int64_t>& base = plan.sizes;
  const int64_t start = plan.start;

  const int64_t B = z.dim(0), T = z.dim(2), s = cfg.spatial_upscale(), C = cfg.out_channels;
  const int64_t F = cfg.output_frames(T), Ho = s * z.dim(3), Wo = s * z.dim(4);
  Tensor zc = z.to(Device::kCPU).to(DType::kF32);
  Tensor video = Tensor::empty({B, C, F, Ho, Wo}, DType::kF32);  // [B, C, F, sH, sW]
  HaloSpatialContext ctx(comm, dim, base);
  for (int64_t b = 0; b < B; ++b) {
    Tensor zb = zc[b];  // [z, T, H, W]
    const SplitView v = split_view(zb, dim);
    Tensor local = take(zb, v, start, base[size_t(comm.rank())]).reshape(with_extent(zb, dim, base[size_t(comm.rank())]));
    Tensor vb = video[b];  // [C, F, sH, sW]
    dec.decode_stream(local, ctx, [&](const Tensor& y, int64_t f0) {
      vae_write_frames(ctx.gather(y), C, -1.0f, 1.0f, vb, f0);  // [C, f, sH, sW] of the whole frame
    });
  }
  return video;
}

Tensor vae_group_decode(const WanVaeDecoder& dec, const Tensor& z, Communicator* vae, VaeSplitDim dim) {
  if (!vae) return Tensor();
  if (vae->size() == 1) return dec.decode(z);
  return parallel_vae_decode(dec, z, *vae, dim);
}

}  // namespace vgen
