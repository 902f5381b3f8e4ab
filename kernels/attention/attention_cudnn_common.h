// Host helpers shared by the cuDNN SDPA paths (attention_cudnn.cpp bf16, attention_cudnn_fp8.cpp
// FP8): the rejection text, the alignment test, a device's handle made once. Included by those two
// files only. Never includes lib/.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#ifdef VGEN_WITH_CUDNN
#include <cudnn.h>
#include <cudnn_frontend.h>
#endif

namespace vgen::kern::cudnn_sdpa {

// false with `msg` in *why (why may be null): a shape or setting the path does not take.
inline bool reject(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return false;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

#ifdef VGEN_WITH_CUDNN
// A step's cuDNN frontend error as `<path> <step>: <message>`.
inline std::string fe_error(const char* path, const char* step, cudnn_frontend::error_t e) {
  return std::string(path) + " " + step + ": " + e.get_message();
}

// Creates `handle` on first use (device `dev` current); a failure is kept in `init_error` and
// returned again at every later call (false).
inline bool ensure_handle(cudnnHandle_t& handle, std::string& init_error, int dev) {
  if (!handle && init_error.empty()) {
    const cudnnStatus_t s = cudnnCreate(&handle);
    if (s != CUDNN_STATUS_SUCCESS) {
      handle = nullptr;
      init_error = "cudnnCreate on device " + std::to_string(dev) + ": " + cudnnGetErrorString(s);
    }
  }
  return handle != nullptr;
}
#endif

}  // namespace vgen::kern::cudnn_sdpa
