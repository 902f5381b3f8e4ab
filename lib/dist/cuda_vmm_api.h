// The CUDA driver's virtual-memory calls, resolved through the runtime's entry-point query (as
// kernels/common/tensor_map.cuh does), so vgen needs no link against libcuda. Host code of the
// CUDA build only (*_cuda.cpp).
#pragma once
#include <cuda.h>

#include <string>

namespace vgen {

struct CudaVmmApi {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetAttribute) device_attribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemAddressFree) address_free = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) import_handle = nullptr;
  decltype(&::cuGetErrorName) error_name = nullptr;
  bool complete() const;
};

// Resolved once; members null where the driver lacks them (complete() false).
const CudaVmmApi& cuda_vmm_api();
// "cuMemCreate: CUDA_ERROR_NOT_PERMITTED (801)" for a failed call, "" for CUDA_SUCCESS.
std::string cu_error_text(CUresult r, const char* what);
// The driver's handle of the runtime's current device (its primary context made current).
CUdevice cu_current_device();

}  // namespace vgen
