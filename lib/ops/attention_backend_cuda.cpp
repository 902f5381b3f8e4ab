// Attention backend dispatch on the device (CUDA builds): the own Hopper kernel where it serves the
// call (auto, native), cuDNN SDPA (auto, cudnn), the native flash kernel (cuda_attention) otherwise.
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <vector>

#include "core/cuda_stream.h"
#include "core/log.h"
#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_cudnn.cuh"
#include "ops/attention_backend.h"
#include "ops/device_ops.h"
#include "ops/path_table.h"

namespace vgen {

namespace {

bool on_device(const Tensor& t) { return t.defined() && t.device() == Device::kCUDA; }

// The cuDNN and Hopper paths take bf16 q/k/v/out of consistent shapes and an f32 [B,H,Sq] lse.
// Anything else goes to cuda_attention, which names the offending tensor when the call is invalid.
bool bf16_args(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse, int64_t num_valid_kv,
                float scale, kern::AttnArgs* a, std::string* why) {
  if (!on_device(q) || !on_device(k) || !on_device(v) || !on_device(out) || (lse && !on_device(*lse))) {
    *why = "a tensor is not on the device";
    return false;
  }
  if (q.dtype() != DType::kBF16 || k.dtype() != DType::kBF16 || v.dtype() != DType::kBF16 ||
      out.dtype() != DType::kBF16) {
    *why = "cuDNN SDPA and the Hopper kernel take bf16 q/k/v and a bf16 out";
    return false;
  }
  if (q.ndim() != 4 || k.ndim() != 4 || v.shape() != k.shape() || out.shape() != q.shape() || k.dim(0) != q.dim(0) ||
      k.dim(2) != q.dim(2) || k.dim(3) != q.dim(3)) {
    *why = "inconsistent shapes";
    return false;
  }
  const int64_t B = q.dim(0), Sq = q.dim(1), H = q.dim(2), D = q.dim(3), Skv = k.dim(1);
  if (lse && (lse->dtype() != DType::kF32 || lse->shape() != (Shape{B, H, Sq}))) {
    *why = "lse is not f32 [B, H, Sq]";
    return false;
  }
  a->q = q.raw(), a->k = k.raw(), a->v = v.raw(), a->out = out.raw();
  a->lse = lse ? lse->f32() : nullptr;
  a->B = B, a->Sq = Sq, a->Skv = Skv, a->H = H, a->D = D, a->num_valid_kv = num_valid_kv, a->scale = scale;
  return true;
}

// One log line per distinct reason: the fallback is expected for some shapes (e.g. D = 12).
void note_fallback(AttentionBackend requested, const std::string& why, const Tensor& q, const Tensor& k) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  if (!seen.insert(why).second) return;
  if (requested == AttentionBackend::kCudnn)
    log_info("attention_config.backend cudnn: q {} k {} runs on the native kernel ({})", q.str(), k.str(), why);
  else
    log_debug("attention backend auto: q {} k {} runs on the native kernel ({})", q.str(), k.str(), why);
}

// One log line per process when the Hopper kernel first serves a call (which kernel a run used).
void note_hopper(const Tensor& q, const Tensor& k) {
  static std::once_flag once;
  std::call_once(once, [&] { log_info("attention: the own Hopper kernel (sm_90, wgmma) serves q {} k {}", q.str(), k.str()); });
}

static_assert(kern::kAttnMaxMergeParts >= 16, "attention_kv_plan makes up to 16 key ranges");

// The arguments of key range [c0, c0 + len): keys of every batch entry (bf16), the batch stride
// stays Skv tokens (kSlice).
kern::AttnArgs range_args(const kern::AttnArgs& a, int64_t c0, int64_t len) {
  const int64_t ks = a.k_stride ? a.k_stride : a.H * a.D, vs = a.v_stride ? a.v_stride : a.H * a.D;
  kern::AttnArgs c = a;
  c.k = static_cast<const char*>(a.k) + c0 * ks * 2;
  c.v = static_cast<const char*>(a.v) + c0 * vs * 2;
  c.num_valid_kv = len;
  return c;
}

// cuDNN over the key ranges of attention_kv_plan under `split`, merged into a.out (and a.lse) by
// LSE; the remainder range (< 128 keys) folded in by attention_tail_merge_bf16 where it serves the
// call and split.tail_fold asks for it.
// cudaErrorNotSupported when the plan is one range or a range is outside cuDNN's support surface
// (checked before anything is launched; the caller then runs one call).
cudaError_t cudnn_chunked(const kern::AttnArgs& a, const AttentionKeySplit& split, cudaStream_t stream) {
  const auto plan = attention_kv_plan(std::min(a.num_valid_kv, a.Skv), split.kv_chunk);
  if (plan.size() < 2 || a.o_stride != 0) return cudaErrorNotSupported;
  const kern::AttnArgs tail = range_args(a, plan.back().first, plan.back().second);
  const bool fold = split.tail_fold && tail.num_valid_kv <= kern::kAttnTailMaxKeys &&
                    kern::attention_tail_merge_supports(tail);
  const size_t n_cudnn = plan.size() - (fold ? 1 : 0);
  for (size_t i = 0; i < n_cudnn; ++i)
    if (!kern::attention_cudnn_supports(range_args(a, plan[i].first, plan[i].second), kern::AttnOut::kBF16))
      return cudaErrorNotSupported;
  std::vector<Tensor> parts, lses;
  std::vector<const void*> pp;
  std::vector<const float*> lp;
  for (size_t i = 0; i < n_cudnn; ++i) {
    // The first range writes a.out itself, merged in place (one [B, Sq, H, D] buffer less).
    if (!pp.empty()) parts.push_back(Tensor::empty({a.B, a.Sq, a.H, a.D}, DType::kBF16, Device::kCUDA));
    lses.push_back(Tensor::empty({a.B, a.H, a.Sq}, DType::kF32, Device::kCUDA));  // [B, H, Sq]
    kern::AttnArgs c = range_args(a, plan[i].first, plan[i].second);
    c.out = pp.empty() ? a.out : parts.back().raw();  // [B, Sq, H, D]
    c.lse = lses.back().f32();
    const cudaError_t e = kern::attention_fwd_cudnn(c, kern::AttnOut::kBF16, stream);
    if (e != cudaSuccess) return e;
    pp.push_back(c.out);
    lp.push_back(lses.back().f32());
  }
  const float* lse_cudnn = lp[0];  // the LSE over the cuDNN ranges
  if (pp.size() > 1) {
    float* lse_merged = a.lse;
    if (fold) {  // the remainder still follows: it needs the merged LSE
      lses.push_back(Tensor::empty({a.B, a.H, a.Sq}, DType::kF32, Device::kCUDA));  // [B, H, Sq]
      lse_merged = lses.back().f32();
      lse_cudnn = lse_merged;
    }
    const cudaError_t e = kern::attention_merge_parts_bf16(pp.data(), lp.data(), int(pp.size()), a.out, lse_merged,
                                                           a.B, a.Sq, a.H, a.D, stream);
    if (e != cudaSuccess)
      VGEN_THROW(ExitCode::kInternal, "attention_merge_parts_bf16 of {} key ranges (B {} Sq {} H {} D {}) failed: {}",
                 pp.size(), a.B, a.Sq, a.H, a.D, cudaGetErrorString(e));
  }
  if (fold) {
    kern::AttnArgs c = tail;
    c.out = a.out;
    c.lse = a.lse;
    const cudaError_t e = kern::attention_tail_merge_bf16(c, lse_cudnn, stream);
    if (e != cudaSuccess)
      VGEN_THROW(ExitCode::kInternal, "attention_tail_merge_bf16 of {} keys (B {} Sq {} H {} D {}) failed: {}",
                 c.num_valid_kv, a.B, a.Sq, a.H, a.D, cudaGetErrorString(e));
  }
  return cudaSuccess;
}

}  // namespace

bool cudnn_attention_available(std::string* why) { return kern::attention_cudnn_available(why); }

AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, AttentionBackend backend,
                                     const AttentionKeySplit& split) {
  // The path table (ops/path_table.h) says whether this device runs the own Hopper kernel.
  if (device_attention_path(backend) == AttentionPath::kHopper) {
    // The own Hopper kernel: faster than cuDNN's SDPA on the H200 at Wan's shapes (720p
    // 188-190 ms against 191-195 for cuDNN with the key split; 480p 35.2 against 38.0 ms;
    // results/dit/1xh200/2026-12-01_h200_issue7_runs56-61.json, 348b122), and it needs no key split (any key
    // count, masked in its last tile).
    kern::AttnArgs a;
    std::string why;
    if (bf16_args(q, k, v, out, lse, num_valid_kv, scale, &a, &why)) {
      // cudaErrorNotSupported (nothing launched) outside attention_wgmma_supports: the next kernel.
      const cudaError_t e = kern::attention_fwd_wgmma_bf16(a, compute_stream());
      if (e == cudaSuccess) {
        note_hopper(q, k);
        return AttentionBackend::kNative;
      }
      if (e != cudaErrorNotSupported)
        VGEN_THROW(ExitCode::kInternal, "cuda_attention (attention_config.backend {}, Hopper kernel) failed: {}: q {} k {}",
                   attention_backend_name(backend), cudaGetErrorName(e), q.str(), k.str());
    }
  }
  if (backend != AttentionBackend::kNative) {
    std::string why;
    if (!kern::attention_cudnn_available(&why)) {
      if (backend == AttentionBackend::kCudnn)
        VGEN_THROW(ExitCode::kUsage,
                   "attention_config.backend: cudnn was requested but cuDNN attention is unavailable: {} "
                   "(use auto or native)",
                   why);
      note_fallback(backend, why, q, k);
    } else {
      kern::AttnArgs a;
      if (bf16_args(q, k, v, out, lse, num_valid_kv, scale, &a, &why)) {
        cudaError_t e = cudnn_chunked(a, split, compute_stream());
        if (e == cudaErrorNotSupported) e = kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream());
        if (e == cudaSuccess) return AttentionBackend::kCudnn;
        if (e != cudaErrorNotSupported)
          VGEN_THROW(ExitCode::kInternal,
                     "cuda_attention (attention_config.backend {}, cuDNN) failed: {} ({}): q {} k {}; "
                     "attention_config.backend native avoids cuDNN",
                     attention_backend_name(backend), kern::attention_cudnn_last_error(), cudaGetErrorName(e), q.str(),
                     k.str());
        why = kern::attention_cudnn_last_error();
      }
      note_fallback(backend, why, q, k);
    }
  }
  cuda_attention(q, k, v, out, lse, num_valid_kv, scale);
  return AttentionBackend::kNative;
}

}  // namespace vgen
