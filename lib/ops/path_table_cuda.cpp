// path_table.h on the CUDA runtime: the current device's facts and the paths the dispatch follows.
#include <cuda_runtime.h>
#include <nccl.h>

#include <fmt/format.h>

#include <array>
#include <mutex>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_cudnn.cuh"
#include "kernels/attention/attention_cudnn_fp8.cuh"
#include "kernels/attention/attention_fp8.cuh"
#include "kernels/gemm/gemm_int8.cuh"
#include "ops/path_table.h"

#ifndef VGEN_CUDA_ARCHS_BUILT
#error "VGEN_CUDA_ARCHS_BUILT (the build's resolved VGEN_CUDA_ARCHS) is set by lib/CMakeLists.txt"
#endif

namespace vgen {

const std::vector<CudaArch>& built_cuda_archs() {
  static const std::vector<CudaArch> archs = parse_cuda_archs(VGEN_CUDA_ARCHS_BUILT);
  return archs;
}

bool current_device_query(PathQuery& q, std::string* gpu_name, std::string* why) {
  int dev = 0;
  cudaDeviceProp prop{};
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, dev);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // an answer, not a sticky error for later calls
    if (why) *why = fmt::format("no usable CUDA device: {}", cudaGetErrorString(e));
    return false;
  }
  if (gpu_name) *gpu_name = prop.name;
  q.cc = prop.major * 10 + prop.minor;
  q.built = built_cuda_archs();
  // Each family's own check: false at once off compute capability 9.0, a probe kernel on it.
  q.sm90a_attention_loads = kern::attention_wgmma_available();
  q.sm90a_fp8_loads = kern::attention_fp8_available();
  q.sm90a_int8_loads = kern::linear_int8_available();
  // cuDNN is initialised only where the choice may take it (not on a GPU the Hopper kernel serves).
  q.cudnn_usable = false;
  q.cudnn_why.clear();
  const ExecutionPaths first = choose_execution_paths(q);
  const bool fp8_own = !q.fp8.attention || first.fp8_self_attention == AttentionPath::kFp8Hopper;
  const bool wants_cudnn = first.attention != AttentionPath::kHopper ||
                           (q.precision == Precision::kFp8 && !fp8_own && q.cc >= kCudnnFp8AttentionMinCc);
  if (first.refusal.empty() && q.backend != AttentionBackend::kNative && wants_cudnn)
    q.cudnn_usable = kern::attention_cudnn_available(&q.cudnn_why);
  // cuDNN's FP8 SDPA is probed (a graph built once per device) only where the fp8 run would take it.
  q.cudnn_fp8_usable = true;
  q.cudnn_fp8_why.clear();
  if (q.precision == Precision::kFp8 && q.fp8.attention && q.cudnn_usable &&
      choose_execution_paths(q).fp8_self_attention == AttentionPath::kCudnnFp8)
    q.cudnn_fp8_usable = kern::attention_cudnn_fp8_available(&q.cudnn_fp8_why);
  return true;
}

AttentionPath device_attention_path(AttentionBackend backend) {
  constexpr int kMaxDevices = 64, kBackends = 3;
  static std::mutex mu;
  static std::array<std::array<int, kBackends>, kMaxDevices> cache{};  // 0 unknown, else path + 1
  int dev = 0;
  const int b = int(backend);
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices || b >= kBackends) {
    (void)cudaGetLastError();
    return AttentionPath::kFlash;  // the dispatch's last resort checks the call itself
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache[size_t(dev)][size_t(b)] != 0) return AttentionPath(cache[size_t(dev)][size_t(b)] - 1);
  PathQuery q;
  q.backend = backend;
  if (!current_device_query(q, nullptr, nullptr)) return AttentionPath::kFlash;
  const ExecutionPaths p = choose_execution_paths(q);
  // sm_90a code on a 9.0 device whose kernels did not load may be a passing failure (an error
  // pending from other work, sm90a_check.cuh): asked again next time rather than remembered.
  if (!(p.sm90a && !q.sm90a_attention_loads)) cache[size_t(dev)][size_t(b)] = int(p.attention) + 1;
  return p.attention;
}

AttentionPath device_fp8_attention_path(AttentionBackend backend, const Fp8Config& f) {
  constexpr int kMaxDevices = 64, kBackends = 3;
  static std::mutex mu;
  // 0 unknown, else path + 1; per device, backend and Q·Kᵀ format (the switches the choice reads).
  static std::array<std::array<std::array<int, 2>, kBackends>, kMaxDevices> cache{};
  int dev = 0;
  const int b = int(backend), qk = f.qk_int8() ? 1 : 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices || b >= kBackends) {
    (void)cudaGetLastError();
    return AttentionPath::kFp8Hopper;  // the own kernel's launch check names the problem
  }
  std::lock_guard<std::mutex> lock(mu);
  int& slot = cache[size_t(dev)][size_t(b)][size_t(qk)];
  if (slot != 0) return AttentionPath(slot - 1);
  PathQuery q;
  q.backend = backend;
  q.precision = Precision::kFp8;
  q.fp8 = f;
  q.fp8.attention = true;
  q.fp8.gemm = false;  // the GEMM switches do not decide the attention
  if (!current_device_query(q, nullptr, nullptr)) return AttentionPath::kFp8Hopper;
  const ExecutionPaths p = choose_execution_paths(q);
  if (!(p.sm90a && !q.sm90a_fp8_loads)) slot = int(p.fp8_self_attention) + 1;
  return p.fp8_self_attention;
}

std::string nccl_version_string() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

}  // namespace vgen
