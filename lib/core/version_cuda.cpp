// The GPU libraries' versions of a CUDA build: what this process loads, read without a GPU.
#include <cuda_runtime.h>
#include <nccl.h>

#include <fmt/format.h>

#include "core/version.h"
#include "kernels/attention/attention_cudnn.cuh"

namespace vgen {

std::string gpu_library_versions() {
  int rt = 0, drv = 0, nccl = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);  // 0 when no driver is installed
  ncclGetVersion(&nccl);
  const int64_t cudnn = kern::attention_cudnn_version();
  std::string s = fmt::format("CUDA runtime {}.{}, driver {}", rt / 1000, rt % 1000 / 10,
                              drv ? fmt::format("{}.{}", drv / 1000, drv % 1000 / 10) : std::string("none"));
  s += fmt::format(", NCCL {}.{}.{}", nccl / 10000, nccl / 100 % 100, nccl % 100);
  s += cudnn ? fmt::format(", cuDNN {}.{}.{}", cudnn / 10000, cudnn / 100 % 100, cudnn % 100)
             : std::string(", cuDNN off");
  return s;
}

}  // namespace vgen
