#include "ops/attention_backend.h"

#include <algorithm>

#include "ops/device_ops.h"

namespace vgen {

AttentionBackend parse_attention_backend(const std::string& name) {
  if (name == "auto") return AttentionBackend::kAuto;
  if (name == "native") return AttentionBackend::kNative;
  if (name == "cudnn") return AttentionBackend::kCudnn;
  VGEN_THROW(ExitCode::kUsage, "attention_config.backend: unknown backend '{}' (expected auto, native or cudnn)",
             name);
}

std::vector<std::pair<int64_t, int64_t>> attention_kv_plan(int64_t num_valid, int64_t chunk) {
  constexpr int64_t kAlign = 128, kMaxParts = 16;
  const int64_t main = num_valid / kAlign * kAlign, tail = num_valid - main;
  if (chunk == 0 || main == 0 || (chunk < 0 && (num_valid < kKvSplitMinKeys || tail == 0)) ||
      (chunk > 0 && num_valid <= chunk))
    return {{0, num_valid}};
  std::vector<std::pair<int64_t, int64_t>> plan;
  int64_t n = chunk > 0 ? std::min(kMaxParts - 1, (main + chunk - 1) / chunk) : 1;
  const int64_t step = ((main + n - 1) / n + kAlign - 1) / kAlign * kAlign;  // 128-multiple pieces
  for (int64_t c0 = 0; c0 < main; c0 += step) plan.emplace_back(c0, std::min(step, main - c0));
  if (tail > 0) plan.emplace_back(main, tail);
  return plan;
}

AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, const std::string& backend,
                                     const AttentionKeySplit& split) {
  return cuda_attention_auto(q, k, v, out, lse, num_valid_kv, scale, parse_attention_backend(backend), split);
}

#ifndef VGEN_WITH_CUDA
bool cudnn_attention_available(std::string* why) {
  if (why) *why = "this vgen was built without the CUDA backend (VGEN_CUDA=OFF)";
  return false;
}

AttentionBackend cuda_attention_auto(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*, int64_t, float,
                                     AttentionBackend, const AttentionKeySplit&) {
  VGEN_THROW(ExitCode::kUsage,
             "cuda_attention_auto: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu");
}
#endif

}  // namespace vgen
