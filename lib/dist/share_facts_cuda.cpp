// local_share_facts (dist/device_share.h): the handle types from the driver, the fabric registration
// from NVML's GPU fabric info (libnvidia-ml opened at run time, so vgen needs no link against it;
// no fabric where it is absent or reports none).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstring>

#include "core/cuda_stream.h"
#include "core/log.h"
#include "dist/cuda_vmm_api.h"
#include "dist/device_share.h"

namespace vgen {
namespace {

// NVML's v1 fabric info (nvml.h, r550+), declared here: the toolkit ships no nvml.h.
struct NvmlFabricInfo {
  unsigned char cluster_uuid[16];
  int status;  // nvmlReturn_t
  unsigned int clique_id;
  unsigned char state;  // nvmlGpuFabricState_t
};
constexpr unsigned char kFabricStateCompleted = 3;
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlByBusId = int (*)(const char*, void**);
using NvmlFabric = int (*)(void*, NvmlFabricInfo*);

// The current device's fabric registration into f; false where NVML reports none.
bool fill_fabric(RankShareFacts* f) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<NvmlShutdown>(dlsym(lib, "nvmlShutdown"));
  auto by_bus = reinterpret_cast<NvmlByBusId>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto fabric = reinterpret_cast<NvmlFabric>(dlsym(lib, "nvmlDeviceGetGpuFabricInfo"));
  bool ok = false;
  if (init && shutdown && by_bus && fabric && init() == 0) {
    char bus[32] = {};
    void* dev = nullptr;
    NvmlFabricInfo info{};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), cuda_current_device()) == cudaSuccess && by_bus(bus, &dev) == 0 &&
        fabric(dev, &info) == 0 && info.state == kFabricStateCompleted && info.status == 0) {
      std::memcpy(f->cluster_uuid.data(), info.cluster_uuid, sizeof(info.cluster_uuid));
      f->clique_id = info.clique_id;
      ok = true;
    }
    shutdown();
  }
  (void)cudaGetLastError();
  dlclose(lib);
  return ok;
}

bool attribute(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  return cuda_vmm_api().device_attribute(&v, a, dev) == CUDA_SUCCESS && v != 0;
}

}  // namespace

RankShareFacts local_share_facts() {
  RankShareFacts f;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  f.host = host;
  f.fabric = fill_fabric(&f);
  if (!cuda_vmm_api().complete()) return f;
  const CUdevice dev = cu_current_device();
  f.posix_fd = attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) &&
               attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
  f.fabric_handle = attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED) &&
                    attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
  return f;
}

}  // namespace vgen
