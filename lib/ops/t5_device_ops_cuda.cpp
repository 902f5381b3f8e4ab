// Device paths of the T5 ops (contracts in t5_device_ops.h); CUDA builds only.
#include <cuda_runtime.h>

#include "core/cuda_stream.h"
#include "kernels/t5/bias_attention.cuh"
#include "kernels/t5/embedding.cuh"
#include "kernels/t5/gated_act.cuh"
#include "kernels/t5/rel_bias.cuh"
#include "kernels/t5/t5_norm.cuh"
#include "ops/device_op_checks.h"
#include "ops/t5_device_ops.h"

namespace vgen {

using namespace device_ops;

Tensor cuda_t5_rms_norm(const Tensor& x, const Tensor& w, float eps) {
  const kern::FloatType t = act_type(x, "t5_rms_norm", "x");
  VGEN_ASSERT(x.ndim() >= 1, "t5_rms_norm: x {} has no feature dim", x.str());
  const int64_t D = x.dim(-1);
  VGEN_ASSERT(act_type(w, "t5_rms_norm", "weight") == t && w.numel() == D,
              "t5_rms_norm: weight {} must have x's dtype and {} elements (x {})", w.str(), D, x.str());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);  // [..., D]
  const int64_t rows = D ? x.numel() / D : 0;
  launched(kern::t5_rms_norm(x.raw(), w.raw(), y.raw(), t, rows, D, eps, compute_stream()), "t5_rms_norm", x);
  return y;
}

Tensor cuda_t5_gated_act(const Tensor& gate, const Tensor& lin, kern::T5Act act) {
  const kern::FloatType t = act_type(gate, "t5_gated_act", "gate");
  if (lin.defined())
    VGEN_ASSERT(act_type(lin, "t5_gated_act", "lin") == t && lin.shape() == gate.shape(),
                "t5_gated_act: gate {} vs lin {}", gate.str(), lin.str());
  Tensor out = Tensor::empty(gate.shape(), gate.dtype(), Device::kCUDA);  // [..., F]
  launched(kern::t5_gated_act(gate.raw(), lin.defined() ? lin.raw() : nullptr, out.raw(), t, gate.numel(), act,
                              compute_stream()),
           "t5_gated_act", gate);
  return out;
}

Tensor cuda_t5_relative_bias(const Tensor& table, const Tensor& buckets) {
  const kern::FloatType t = act_type(table, "t5_relative_bias", "table");
  check_dev(buckets, "t5_relative_bias", "buckets");
  VGEN_ASSERT(table.ndim() == 2 && buckets.ndim() == 1 && buckets.dtype() == DType::kI64,
              "t5_relative_bias: table {} must be [num_buckets, H], buckets {} i64 [Lq+Lk-1]", table.str(),
              buckets.str());
  const int64_t nb = table.dim(0), H = table.dim(1), R = buckets.dim(0);
  Tensor bias = Tensor::empty({H, R}, DType::kF32, Device::kCUDA);  // [H, Lq+Lk-1]
  launched(kern::t5_rel_bias_gather(table.raw(), t, buckets.data<int64_t>(), bias.f32(), H, R, nb, compute_stream()),
           "t5_relative_bias", table);
  return bias;
}

void cuda_t5_attention_out(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias,
                           int64_t num_heads, int64_t num_valid, Tensor& out) {
  const kern::FloatType t = act_type(q, "t5_attention", "q");
  VGEN_ASSERT(act_type(k, "t5_attention", "k") == t && act_type(v, "t5_attention", "v") == t &&
                  act_type(out, "t5_attention", "out") == t,
              "t5_attention: q {} k {} v {} out {} must share one dtype", q.str(), k.str(), v.str(), out.str());
  VGEN_ASSERT(q.ndim() == 2 && k.ndim() == 2 && k.shape() == v.shape() && out.shape() == q.shape() && num_heads >= 1,
              "t5_attention: q {} [Lq, H*D], k {} and v {} [Lk, H*D], out {} [Lq, H*D], heads {}", q.str(), k.str(),
              v.str(), out.str(), num_heads);
  const int64_t Lq = q.dim(0), Lk = k.dim(0), W = q.dim(1);
  VGEN_ASSERT(k.dim(1) == W && W % num_heads == 0, "t5_attention: q {} k {} with {} heads", q.str(), k.str(),
              num_heads);
  const int64_t D = W / num_heads;
  VGEN_ASSERT(D >= 1 && D <= kern::kT5AttnMaxHeadDim, "t5_attention: head dim {} outside [1, {}] (q {}, {} heads)", D,
              kern::kT5AttnMaxHeadDim, q.str(), num_heads);
  VGEN_ASSERT(out.raw() != q.raw() && out.raw() != k.raw() && out.raw() != v.raw(),
              "t5_attention: out must not alias q, k or v");
  const float* bias = nullptr;
  if (rel_bias.defined()) {
    check_dev(rel_bias, "t5_attention", "rel_bias");
    VGEN_ASSERT(rel_bias.dtype() == DType::kF32 && rel_bias.numel() == num_heads * (Lq + Lk - 1),
                "t5_attention: rel_bias {} must be f32 [{}, {}] for Lq {} Lk {}", rel_bias.str(), num_heads,
                Lq + Lk - 1, Lq, Lk);
    bias = rel_bias.f32();
  }
  launched(kern::t5_attention(q.raw(), k.raw(), v.raw(), bias, out.raw(), t, Lq, Lk, num_heads, D, num_valid,
                              compute_stream()),
           "t5_attention", q);
}

Tensor cuda_t5_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias, int64_t num_heads,
                         int64_t num_valid) {
  check_dev(q, "t5_attention", "q");
  Tensor out = Tensor::empty(q.shape(), q.dtype(), Device::kCUDA);  // [Lq, H*D]
  cuda_t5_attention_out(q, k, v, rel_bias, num_heads, num_valid, out);
  return out;
}

Tensor cuda_embedding(const Tensor& table, const Tensor& ids) {
  const kern::FloatType t = act_type(table, "embedding", "table");
  check_dev(ids, "embedding", "ids");
  VGEN_ASSERT(table.ndim() == 2 && ids.ndim() == 1 && ids.dtype() == DType::kI64,
              "embedding: table {} must be [vocab, D], ids {} i64 [rows]", table.str(), ids.str());
  const int64_t V = table.dim(0), D = table.dim(1), rows = ids.dim(0);
  Tensor out = Tensor::empty({rows, D}, table.dtype(), Device::kCUDA);  // [rows, D]
  launched(kern::embedding_gather(table.raw(), ids.data<int64_t>(), out.raw(), t, rows, D, V, compute_stream()),
           "embedding", table);
  return out;
}

}  // namespace vgen
