#include "ops/attention_backend.h"

#include "ops/device_ops.h"

namespace vgen {

AttentionBackend parse_attention_backend(const std::string& name) {
  if (name == "auto") return AttentionBackend::kAuto;
  if (name == "native") return AttentionBackend::kNative;
  if (name == "cudnn") return AttentionBackend::kCudnn;
  VGEN_THROW(ExitCode::kUsage, "attention_config.backend: unknown backend '{}' (expected auto, native or cudnn)",
             name);
}

const char* attention_backend_name(AttentionBackend b) {
  switch (b) {
    case AttentionBackend::kAuto: return "auto";
    case AttentionBackend::kNative: return "native";
    case AttentionBackend::kCudnn: return "cudnn";
  }
  return "?";
}

namespace {
AttentionBackend g_backend = AttentionBackend::kAuto;
}  // namespace

void set_attention_backend(AttentionBackend backend) { g_backend = backend; }
AttentionBackend attention_backend() { return g_backend; }

AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, const std::string& backend) {
  return cuda_attention_auto(q, k, v, out, lse, num_valid_kv, scale, parse_attention_backend(backend));
}

#ifndef VGEN_WITH_CUDA
bool cudnn_attention_available(std::string* why) {
  if (why) *why = "this vgen was built without the CUDA backend (VGEN_CUDA=OFF)";
  return false;
}

AttentionBackend cuda_attention_auto(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*, int64_t, float,
                                     AttentionBackend) {
  VGEN_THROW(ExitCode::kUsage,
             "cuda_attention_auto: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu");
}
#endif

}  // namespace vgen
