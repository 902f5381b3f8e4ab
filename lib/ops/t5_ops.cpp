#include "ops/t5_ops.h"

#include <algorithm>
#include <cstring>

#include "kernels/t5/bias_attention_ref.h"
#include "kernels/t5/rel_bias_ref.h"
#include "kernels/t5/t5_norm_ref.h"
#include "ops/check.h"
#include "ops/t5_device_ops.h"

namespace vgen {

Tensor t5_rms_norm(const Tensor& x, const Tensor& w, float eps) {
  if (x.defined() && !x.is_cpu()) return cuda_t5_rms_norm(x, w, eps);
  check_cpu_f32(x, "t5_rms_norm", "x");
  check_cpu_f32(w, "t5_rms_norm", "weight");
  int64_t D = x.dim(-1);
  VGEN_ASSERT(w.numel() == D, "t5_rms_norm: x {} vs w {}", x.str(), w.str());
  Tensor y = Tensor::empty(x.shape(), DType::kF32);  // [..., D]
  kern::t5_rms_norm_ref(x.f32(), w.f32(), y.f32(), x.numel() / D, D, eps);
  return y;
}

T5Positions t5_positions(int64_t Lq, int64_t Lk, bool bidirectional, int num_buckets, int max_distance,
                         Device device) {
  T5Positions p{Lq, Lk, bidirectional, max_distance, Tensor()};
  if (device != Device::kCPU)
    p.buckets = t5_relative_buckets(Lq, Lk, bidirectional, num_buckets, max_distance).to(device);  // [Lq+Lk-1]
  return p;
}

Tensor t5_relative_bias(const Tensor& table, const T5Positions& pos) {
  if (table.defined() && !table.is_cpu()) return cuda_t5_relative_bias(table, pos.buckets);
  check_cpu_f32(table, "t5_relative_bias", "table");
  const int64_t Lq = pos.Lq, Lk = pos.Lk;
  VGEN_ASSERT(table.ndim() == 2 && Lq >= 1 && Lk >= 1, "t5_relative_bias: table {} Lq {} Lk {}", table.str(), Lq, Lk);
  int64_t H = table.dim(1), R = Lq + Lk - 1;
  Tensor bias = Tensor::empty({H, R}, DType::kF32);  // [H, Lq+Lk-1]
  kern::t5_rel_bias_ref(table.f32(), bias.f32(), H, -(Lq - 1), R, pos.bidirectional, int(table.dim(0)),
                        pos.max_distance);
  return bias;
}

Tensor t5_relative_buckets(int64_t Lq, int64_t Lk, bool bidirectional, int num_buckets, int max_distance) {
  VGEN_ASSERT(Lq >= 1 && Lk >= 1 && num_buckets >= 1, "t5_relative_buckets: Lq {} Lk {} num_buckets {}", Lq, Lk,
              num_buckets);
  const int64_t R = Lq + Lk - 1;
  Tensor b = Tensor::empty({R}, DType::kI64);  // [Lq+Lk-1]
  int64_t* p = b.data<int64_t>();
  for (int64_t t = 0; t < R; ++t)
    p[t] = kern::t5_relative_bucket(t - (Lq - 1), bidirectional, num_buckets, max_distance);  // rel = t − (Lq−1)
  return b;
}

Tensor t5_gated_act(const Tensor& gate, const Tensor& lin, kern::T5Act act) {
  if (gate.defined() && !gate.is_cpu()) return cuda_t5_gated_act(gate, lin, act);
  check_cpu_f32(gate, "t5_gated_act", "gate");
  if (lin.defined()) {
    check_cpu_f32(lin, "t5_gated_act", "lin");
    VGEN_ASSERT(lin.shape() == gate.shape(), "t5_gated_act: gate {} vs lin {}", gate.str(), lin.str());
  }
  Tensor out = Tensor::empty(gate.shape(), DType::kF32);  // [..., F]
  kern::gated_act_ref(gate.f32(), lin.defined() ? lin.f32() : nullptr, out.f32(), gate.numel(), act);
  return out;
}

Tensor t5_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias, int64_t num_heads,
                    int64_t num_valid) {
  if (q.defined() && !q.is_cpu()) return cuda_t5_attention(q, k, v, rel_bias, num_heads, num_valid);
  for (const Tensor* t : {&q, &k, &v}) check_cpu_f32(*t, "t5_attention", "q, k and v");
  int64_t Lq = q.dim(0), Lk = k.dim(0), W = q.dim(1);
  VGEN_ASSERT(q.ndim() == 2 && k.shape() == v.shape() && k.dim(1) == W && W % num_heads == 0,
              "t5_attention: q {} k {} v {} heads {}", q.str(), k.str(), v.str(), num_heads);
  if (rel_bias.defined()) {
    check_cpu_f32(rel_bias, "t5_attention", "rel_bias");
    VGEN_ASSERT(rel_bias.numel() == num_heads * (Lq + Lk - 1), "t5_attention: rel_bias {} for Lq {} Lk {}",
                rel_bias.str(), Lq, Lk);
  }
  Tensor out = Tensor::empty({Lq, W}, DType::kF32);  // [Lq, H*D]
  kern::t5_attention_ref(q.f32(), k.f32(), v.f32(), rel_bias.defined() ? rel_bias.f32() : nullptr, out.f32(), Lq,
                         Lk, num_heads, W / num_heads, num_valid);
  return out;
}

Tensor embedding(const Tensor& table, const std::vector<int64_t>& ids) {
  const int64_t rows = int64_t(ids.size());
  if (table.defined() && !table.is_cpu()) {
    Tensor dev_ids = Tensor::empty({rows}, DType::kI64);  // [rows]
    std::copy(ids.begin(), ids.end(), dev_ids.data<int64_t>());
    return cuda_embedding(table, dev_ids.to(table.device()));
  }
  check_cpu_f32(table, "embedding", "table");
  VGEN_ASSERT(table.ndim() == 2, "embedding: table {} must be [vocab, D]", table.str());
  const int64_t D = table.dim(1);
  Tensor out = Tensor::empty({rows, D}, DType::kF32);  // [rows, D]
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out.f32() + r * D, table.f32() + ids[size_t(r)] * D, size_t(D) * sizeof(float));
  return out;
}

}  // namespace vgen
