#include "model/wan/dit/rope_tables.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vgen {
namespace {

// diffusers get_1d_rotary_pos_embed(dim, max_len, theta, use_real, repeat_interleave_real, float64):
// inv[k] = 1/theta^(2k/dim), angle = p·inv[k], each value repeated twice; cast to float32.
void axis_table(int dim, int64_t max_len, double theta, std::vector<float>& cos, std::vector<float>& sin) {
  cos.assign(size_t(max_len * dim), 0.0f);
  sin.assign(size_t(max_len * dim), 0.0f);
  for (int64_t p = 0; p < max_len; ++p)
    for (int k = 0; k < dim / 2; ++k) {
      const double inv = 1.0 / std::pow(theta, double(2 * k) / double(dim));
      const double a = double(p) * inv;
      const float c = float(std::cos(a)), s = float(std::sin(a));
      cos[size_t(p * dim + 2 * k)] = cos[size_t(p * dim + 2 * k + 1)] = c;
      sin[size_t(p * dim + 2 * k)] = sin[size_t(p * dim + 2 * k + 1)] = s;
    }
}

}  // namespace

WanRopeTables::WanRopeTables(const WanTransformerConfig& cfg, double theta)
    : head_dim_(cfg.attention_head_dim),
      dt_(cfg.rope_t_dim()),
      dh_(cfg.rope_h_dim()),
      dw_(cfg.rope_w_dim()),
      max_len_(cfg.rope_positions()) {
  axis_table(dt_, max_len_, theta, cos_t_, sin_t_);
  axis_table(dh_, max_len_, theta, cos_h_, sin_h_);
  axis_table(dw_, max_len_, theta, cos_w_, sin_w_);
}

void WanRopeTables::make(int64_t frames, int64_t rows, int64_t cols, int64_t begin, int64_t count, Tensor& cos,
                         Tensor& sin) const {
  VGEN_CHECK(frames <= max_len_ && rows <= max_len_ && cols <= max_len_, ExitCode::kInput,
             "the post-patch grid {}x{}x{} exceeds the transformer's rope_max_seq_len {}", frames, rows, cols,
             max_len_);
  const int64_t S = frames * rows * cols;
  cos = Tensor::empty({count, head_dim_}, DType::kF32);
  sin = Tensor::empty({count, head_dim_}, DType::kF32);
  float* c = cos.f32();
  float* s = sin.f32();
  for (int64_t i = 0; i < count; ++i) {
    float* ci = c + i * head_dim_;
    float* si = s + i * head_dim_;
    const int64_t tok = begin + i;
    if (tok >= S) {
      for (int d = 0; d < head_dim_; ++d) {
        ci[d] = 1.0f;
        si[d] = 0.0f;
      }
      continue;
    }
    const int64_t f = tok / (rows * cols), h = (tok / cols) % rows, w = tok % cols;
    std::memcpy(ci, &cos_t_[size_t(f * dt_)], size_t(dt_) * 4);
    std::memcpy(si, &sin_t_[size_t(f * dt_)], size_t(dt_) * 4);
    std::memcpy(ci + dt_, &cos_h_[size_t(h * dh_)], size_t(dh_) * 4);
    std::memcpy(si + dt_, &sin_h_[size_t(h * dh_)], size_t(dh_) * 4);
    std::memcpy(ci + dt_ + dh_, &cos_w_[size_t(w * dw_)], size_t(dw_) * 4);
    std::memcpy(si + dt_ + dh_, &sin_w_[size_t(w * dw_)], size_t(dw_) * 4);
  }
}

void WanRopeRows::rows(int64_t frames, int64_t rows, int64_t cols, int64_t begin, int64_t count, Device dev,
                       Tensor& cos, Tensor& sin) const {
  std::lock_guard<std::mutex> lk(mu_);
  const int64_t key[6] = {frames, rows, cols, begin, count, int64_t(dev)};
  if (!std::equal(key, key + 6, key_)) {
    Tensor c, s;  // [count, Dh] f32 on the host, from global positions
    tables_.make(frames, rows, cols, begin, count, c, s);
    cos_ = dev == Device::kCPU ? c : c.to(dev);
    sin_ = dev == Device::kCPU ? s : s.to(dev);
    std::copy(key, key + 6, key_);
  }
  cos = cos_;
  sin = sin_;
}

}  // namespace vgen
