// Attention kernel selection on the device (attention_config.backend: auto | native | cudnn).
//   native: the project's flash kernel (kernels/attention/attention.cuh), any supported shape.
//   cudnn:  cuDNN's fused SDPA (kernels/attention/attention_cudnn.cuh) where it serves the call
//           (bf16 q/k/v and out, D a multiple of 8 up to 128, ...), the native kernel otherwise;
//           a build or device without cuDNN is a kUsage error naming attention_config.backend.
//   auto:   cudnn when available and the call is served, native otherwise.
// Both keep the contract of cuda_attention (ops/device_ops.h), which also checks the arguments.
#pragma once
#include <string>

#include "core/tensor.h"

namespace vgen {

enum class AttentionBackend { kAuto, kNative, kCudnn };

// "auto" | "native" | "cudnn"; anything else is kUsage naming attention_config.backend.
AttentionBackend parse_attention_backend(const std::string& name);
const char* attention_backend_name(AttentionBackend b);

// The process-wide backend of the model's attention calls (self- and cross-attention), set once
// from the recipe's attention_config.backend (default auto).
void set_attention_backend(AttentionBackend backend);
AttentionBackend attention_backend();

// Whether cuDNN attention can run here (built with cuDNN and it initialises on the current
// device); otherwise false with the reason in *why. Always false without the CUDA backend.
bool cudnn_attention_available(std::string* why = nullptr);

// cuda_attention through the backend named by `backend` (attention_config.backend). Returns the
// kernel that ran (kNative or kCudnn).
AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, const std::string& backend);
AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, AttentionBackend backend);

}  // namespace vgen
