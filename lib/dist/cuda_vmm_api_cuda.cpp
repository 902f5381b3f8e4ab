#include <cuda_runtime.h>
#include <fmt/format.h>

#include "core/cuda_stream.h"
#include "core/error.h"
#include "dist/cuda_vmm_api.h"

namespace vgen {
namespace {

template <typename F>
void resolve(F& f, const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess)
    f = reinterpret_cast<F>(p);
}

}  // namespace

bool CudaVmmApi::complete() const {
  return device_get && device_attribute && granularity && create && release && reserve && address_free && map &&
         unmap && set_access && export_handle && import_handle && error_name;
}

const CudaVmmApi& cuda_vmm_api() {
  static const CudaVmmApi api = [] {
    CudaVmmApi a;
    resolve(a.device_get, "cuDeviceGet");
    resolve(a.device_attribute, "cuDeviceGetAttribute");
    resolve(a.granularity, "cuMemGetAllocationGranularity");
    resolve(a.create, "cuMemCreate");
    resolve(a.release, "cuMemRelease");
    resolve(a.reserve, "cuMemAddressReserve");
    resolve(a.address_free, "cuMemAddressFree");
    resolve(a.map, "cuMemMap");
    resolve(a.unmap, "cuMemUnmap");
    resolve(a.set_access, "cuMemSetAccess");
    resolve(a.export_handle, "cuMemExportToShareableHandle");
    resolve(a.import_handle, "cuMemImportFromShareableHandle");
    resolve(a.error_name, "cuGetErrorName");
    return a;
  }();
  return api;
}

std::string cu_error_text(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return "";
  const char* name = nullptr;
  const CudaVmmApi& api = cuda_vmm_api();
  if (!api.error_name || api.error_name(r, &name) != CUDA_SUCCESS || !name) name = "CUDA error";
  return fmt::format("{}: {} ({})", what, name, int(r));
}

CUdevice cu_current_device() {
  const CudaVmmApi& api = cuda_vmm_api();
  VGEN_CHECK(api.complete(), ExitCode::kUsage,
             "the CUDA driver lacks the virtual-memory API (cuMemCreate and its kin); set "
             "parallel_config.dwdp_transport ipc");
  VGEN_CUDA_CHECK(cudaFree(nullptr));  // the runtime's primary context is current from here on
  CUdevice dev = 0;
  const CUresult r = api.device_get(&dev, cuda_current_device());
  VGEN_CHECK(r == CUDA_SUCCESS, ExitCode::kInternal, "{}", cu_error_text(r, "cuDeviceGet"));
  return dev;
}

}  // namespace vgen
