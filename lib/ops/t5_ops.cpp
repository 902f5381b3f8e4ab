#include "ops/t5_ops.h"

#include "kernels/t5/bias_attention_ref.h"
#include "kernels/t5/rel_bias_ref.h"
#include "kernels/t5/t5_norm_ref.h"

namespace vgen {

namespace {
void check_cpu_f32(const Tensor& t, const char* op) {
  VGEN_ASSERT(t.is_cpu() && t.dtype() == DType::kF32, "{}: CPU f32 path only, got {}", op, t.str());
}
}  // namespace

Tensor t5_rms_norm(const Tensor& x, const Tensor& w, float eps) {
  check_cpu_f32(x, "t5_rms_norm");
  check_cpu_f32(w, "t5_rms_norm");
  int64_t D = x.dim(-1);
  VGEN_ASSERT(w.numel() == D, "t5_rms_norm: x {} vs w {}", x.str(), w.str());
  Tensor y = Tensor::empty(x.shape(), DType::kF32);  // [..., D]
  kern::t5_rms_norm_ref(x.f32(), w.f32(), y.f32(), x.numel() / D, D, eps);
  return y;
}

Tensor t5_relative_bias(const Tensor& table, int64_t Lq, int64_t Lk, bool bidirectional, int max_distance) {
  check_cpu_f32(table, "t5_relative_bias");
  VGEN_ASSERT(table.ndim() == 2 && Lq >= 1 && Lk >= 1, "t5_relative_bias: table {} Lq {} Lk {}", table.str(), Lq, Lk);
  int64_t H = table.dim(1), R = Lq + Lk - 1;
  Tensor bias = Tensor::empty({H, R}, DType::kF32);  // [H, Lq+Lk-1]
  kern::t5_rel_bias_ref(table.f32(), bias.f32(), H, -(Lq - 1), R, bidirectional, int(table.dim(0)), max_distance);
  return bias;
}

Tensor t5_gated_act(const Tensor& gate, const Tensor& lin, kern::T5Act act) {
  check_cpu_f32(gate, "t5_gated_act");
  if (lin.defined()) {
    check_cpu_f32(lin, "t5_gated_act");
    VGEN_ASSERT(lin.shape() == gate.shape(), "t5_gated_act: gate {} vs lin {}", gate.str(), lin.str());
  }
  Tensor out = Tensor::empty(gate.shape(), DType::kF32);  // [..., F]
  kern::gated_act_ref(gate.f32(), lin.defined() ? lin.f32() : nullptr, out.f32(), gate.numel(), act);
  return out;
}

Tensor t5_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias, int64_t num_heads,
                    int64_t num_valid) {
  for (const Tensor* t : {&q, &k, &v}) check_cpu_f32(*t, "t5_attention");
  int64_t Lq = q.dim(0), Lk = k.dim(0), W = q.dim(1);
  VGEN_ASSERT(q.ndim() == 2 && k.shape() == v.shape() && k.dim(1) == W && W % num_heads == 0,
              "t5_attention: q {} k {} v {} heads {}", q.str(), k.str(), v.str(), num_heads);
  if (rel_bias.defined()) {
    check_cpu_f32(rel_bias, "t5_attention");
    VGEN_ASSERT(rel_bias.numel() == num_heads * (Lq + Lk - 1), "t5_attention: rel_bias {} for Lq {} Lk {}",
                rel_bias.str(), Lq, Lk);
  }
  Tensor out = Tensor::empty({Lq, W}, DType::kF32);  // [Lq, H*D]
  kern::t5_attention_ref(q.f32(), k.f32(), v.f32(), rel_bias.defined() ? rel_bias.f32() : nullptr, out.f32(), Lq,
                         Lk, num_heads, W / num_heads, num_valid);
  return out;
}

void t5_residual_add(Tensor& a, const Tensor& b) {
  check_cpu_f32(a, "t5_residual_add");
  check_cpu_f32(b, "t5_residual_add");
  VGEN_ASSERT(a.numel() == b.numel(), "t5_residual_add: {} vs {}", a.str(), b.str());
  float* pa = a.f32();
  const float* pb = b.f32();
  int64_t n = a.numel();
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) pa[i] += pb[i];
}

}  // namespace vgen
