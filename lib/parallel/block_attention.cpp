#include "parallel/block_attention.h"

#include <cmath>

#include "kernels/attention/attention_fp8_ref.h"  // kern::Fp8Qk
#include "kernels/attention/attention_ref.h"
#include "ops/attention_backend.h"
#include "ops/device_ops.h"
#include "ops/fp8.h"
#include "ops/gqa/gqa_ops.h"

namespace vgen {
namespace {

void check_host_f32(const Tensor& t, const char* what) {
  VGEN_CHECK(t.defined() && t.is_cpu() && t.dtype() == DType::kF32, ExitCode::kInternal,
             "block attention {}: expected a host f32 tensor, got {} (the device path is not wired yet)", what,
             t.defined() ? t.str() : std::string("undefined"));
}

}  // namespace

int64_t kv_head_groups(const Tensor& q, const Tensor& k, const char* who) {
  VGEN_ASSERT(q.ndim() == 4 && k.ndim() == 4, "{}: q {}, k {}", who, q.str(), k.str());
  VGEN_CHECK(k.dim(2) >= 1 && q.dim(2) % k.dim(2) == 0, ExitCode::kModel,
             "{}: {} K/V heads do not divide the {} query heads (q {}, k {}); grouped K/V heads need KVH | H", who,
             k.dim(2), q.dim(2), q.str(), k.str());
  return q.dim(2) / k.dim(2);
}

void block_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_valid_kv, Tensor& out,
                     Tensor* lse, const AttentionPolicy& policy) {
  const bool fp8 = policy.fp8;
  const kern::Fp8Qk qk = policy.qk == QkFormat::kInt8 ? kern::Fp8Qk::kInt8 : kern::Fp8Qk::kE4m3;
  const int64_t groups = q.defined() && k.defined() ? kv_head_groups(q, k, "block attention") : 1;
  if (groups > 1 && (fp8 || !q.is_cpu())) {
    // The device kernels and the fp8 emulation take one K/V head per query head: repeat the rank's
    // block here, after every collective moved the grouped heads.
    const Tensor kr = repeat_kv_heads(k, groups), vr = repeat_kv_heads(v, groups);  // [B, Skv, H, D]
    block_attention(q, kr, vr, num_valid_kv, out, lse, policy);
    return;
  }
  if (!q.is_cpu()) {  // device: flash attention (bf16 or f32), same contract
    const float scale = float(1.0 / std::sqrt(double(q.dim(3))));
    if (fp8)
      cuda_attention_fp8(q, k, v, out, lse, num_valid_kv, scale, qk == kern::Fp8Qk::kInt8, policy.backend);
    else
      cuda_attention_auto(q, k, v, out, lse, num_valid_kv, scale, policy.backend, policy.key_split);
    return;
  }
  check_host_f32(q, "q");
  check_host_f32(k, "k");
  check_host_f32(v, "v");
  check_host_f32(out, "out");
  VGEN_ASSERT(k.shape() == v.shape() && k.dim(0) == q.dim(0) && k.dim(3) == q.dim(3) && out.shape() == q.shape(),
              "block attention: q {}, k {}, v {}, out {}", q.str(), k.str(), v.str(), out.str());
  const int64_t B = q.dim(0), Sq = q.dim(1), Skv = k.dim(1), H = q.dim(2), KVH = k.dim(2), D = q.dim(3);
  float* lse_ptr = nullptr;
  if (lse) {
    check_host_f32(*lse, "lse");
    VGEN_ASSERT(lse->shape() == Shape({B, H, Sq}), "block attention: lse {} for q {}", lse->str(), q.str());
    lse_ptr = lse->f32();
  }
  const float scale = float(1.0 / std::sqrt(double(D)));
  if (fp8)  // the CPU emulation of the device path the backend selects: its quantisation, fp32 math
    fp8_attention_host(q, k, v, out, lse, num_valid_kv, scale, qk == kern::Fp8Qk::kInt8, policy.backend);
  else
    kern::attention_grouped_ref(q.f32(), k.f32(), v.f32(), out.f32(), lse_ptr, B, Sq, Skv, H, KVH, D, num_valid_kv,
                                scale);
}

void block_attention_merge(Tensor& out, Tensor& lse, const Tensor& o2, const Tensor& lse2) {
  if (out.defined() && !out.is_cpu()) {
    cuda_attention_merge(out, lse, o2, lse2);
    return;
  }
  check_host_f32(out, "merge out");
  check_host_f32(lse, "merge lse");
  check_host_f32(o2, "merge partial out");
  check_host_f32(lse2, "merge partial lse");
  VGEN_ASSERT(out.ndim() == 4 && o2.shape() == out.shape() && lse2.shape() == lse.shape() &&
                  lse.shape() == Shape({out.dim(0), out.dim(2), out.dim(1)}),
              "merge: out {}, lse {}, partial {}, partial lse {}", out.str(), lse.str(), o2.str(), lse2.str());
  kern::attention_merge_ref(out.f32(), lse.f32(), o2.f32(), lse2.f32(), out.dim(0), out.dim(1), out.dim(2),
                            out.dim(3));
}

}  // namespace vgen
