// DeviceShareBuffer / DeviceSharePeer (contract in dist/device_share.h).
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/log.h"
#include "dist/cuda_vmm_api.h"
#include "dist/device_share.h"

namespace vgen {
namespace {

static_assert(sizeof(cudaIpcMemHandle_t) <= sizeof(DeviceShareHandle::data));
static_assert(sizeof(CUmemFabricHandle) <= sizeof(DeviceShareHandle::data));

void cu_check(CUresult r, const char* what) {
  VGEN_CHECK(r == CUDA_SUCCESS, ExitCode::kDistributed, "device share: {}", cu_error_text(r, what));
}

CUmemAllocationProp allocation_prop(CUdevice dev, unsigned types) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  unsigned h = 0;
  if (types & kSharePosixFd) h |= CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  if (types & kShareFabric) h |= CU_MEM_HANDLE_TYPE_FABRIC;
  p.requestedHandleTypes = CUmemAllocationHandleType(h);
  return p;
}

size_t granularity(const CUmemAllocationProp& p) {
  size_t g = 0;
  cu_check(cuda_vmm_api().granularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity");
  return g;
}

// Maps `handle` (`size` bytes) at a fresh address range with `flags` access from `dev`; the range
// is returned through *ptr (0 on failure, nothing left reserved). Undone by unmap_range.
CUresult map_range(CUmemGenericAllocationHandle handle, size_t size, size_t align, CUdevice dev,
                   CUmemAccess_flags flags, CUdeviceptr* ptr, std::string* error) {
  const CudaVmmApi& api = cuda_vmm_api();
  *ptr = 0;
  CUresult r = api.reserve(ptr, size, align, 0, 0);
  if (r != CUDA_SUCCESS) {
    *ptr = 0;
    return *error = cu_error_text(r, "cuMemAddressReserve"), r;
  }
  r = api.map(*ptr, size, 0, handle, 0);
  if (r != CUDA_SUCCESS) {
    *error = cu_error_text(r, "cuMemMap");
    api.address_free(*ptr, size);
    *ptr = 0;
    return r;
  }
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = flags;
  r = api.set_access(*ptr, size, &access, 1);
  if (r != CUDA_SUCCESS && flags == CU_MEM_ACCESS_FLAGS_PROT_READ) {  // drivers without read-only device mappings
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = api.set_access(*ptr, size, &access, 1);
  }
  if (r != CUDA_SUCCESS) {
    *error = cu_error_text(r, "cuMemSetAccess");
    api.unmap(*ptr, size);
    api.address_free(*ptr, size);
    *ptr = 0;
  }
  return r;
}

void unmap_range(CUdeviceptr ptr, size_t size) {
  const CudaVmmApi& api = cuda_vmm_api();
  (void)api.unmap(ptr, size);  // teardown: nothing useful to report
  (void)api.address_free(ptr, size);
}

}  // namespace

struct DeviceShareBuffer::Impl {
  size_t bytes = 0, mapped = 0;
  unsigned types = 0;
  void* ipc = nullptr;                     // kShareIpc
  CUmemGenericAllocationHandle handle = 0;  // VMM
  CUdeviceptr ptr = 0;
  int exported_fd = -1;

  // A VMM allocation with `t`'s handle types; false (nothing held) when the driver refuses them.
  bool create_vmm(unsigned t, std::string* error) {
    const CudaVmmApi& api = cuda_vmm_api();
    const CUdevice dev = cu_current_device();
    const CUmemAllocationProp prop = allocation_prop(dev, t);
    const size_t g = granularity(prop);
    const size_t size = (bytes + g - 1) / g * g;
    CUresult r = api.create(&handle, size, &prop, 0);
    if (r != CUDA_SUCCESS) return *error = cu_error_text(r, "cuMemCreate"), false;
    if (map_range(handle, size, g, dev, CU_MEM_ACCESS_FLAGS_PROT_READWRITE, &ptr, error) != CUDA_SUCCESS) {
      (void)api.release(handle);
      return false;
    }
    mapped = size;
    types = t;
    return true;
  }
};

DeviceShareBuffer::DeviceShareBuffer(size_t bytes, unsigned types) : impl_(std::make_unique<Impl>()) {
  impl_->bytes = bytes;
  if (bytes == 0) {
    impl_->types = types;
    return;
  }
  // Fabric handles need the IMEX channel, which a host outside a multi-host NVLink domain lacks:
  // then POSIX descriptors alone, then cudaMalloc (IPC).
  const unsigned vmm = cuda_vmm_api().complete() ? types & (kSharePosixFd | kShareFabric) : 0u;
  std::string error = vmm ? "" : "no VMM handle type asked for or no driver support";
  bool ok = vmm != 0 && impl_->create_vmm(vmm, &error);
  if (!ok && vmm == (kSharePosixFd | kShareFabric)) {
    log_debug("device share: no fabric handle ({}); POSIX file descriptors only", error);
    ok = impl_->create_vmm(kSharePosixFd, &error);
  }
  if (ok) return;
  if (vmm) log_debug("device share: no VMM buffer ({}); cudaMalloc", error);
  VGEN_CUDA_CHECK(cudaMalloc(&impl_->ipc, bytes));
  impl_->types = kShareIpc;
}

DeviceShareBuffer::~DeviceShareBuffer() {
  close_exported();
  if (impl_->ipc) (void)cudaFree(impl_->ipc);
  if (impl_->ptr) {
    unmap_range(impl_->ptr, impl_->mapped);
    (void)cuda_vmm_api().release(impl_->handle);
  }
}

void* DeviceShareBuffer::data() const {
  return impl_->ptr ? reinterpret_cast<void*>(impl_->ptr) : impl_->ipc;
}
size_t DeviceShareBuffer::bytes() const { return impl_->bytes; }
unsigned DeviceShareBuffer::types() const { return impl_->types; }

DeviceShareHandle DeviceShareBuffer::export_handle(ShareKind kind) {
  DeviceShareHandle h;
  if (impl_->bytes == 0) return h;
  const unsigned need =
      kind == ShareKind::kIpc ? kShareIpc : kind == ShareKind::kPosixFd ? kSharePosixFd : kShareFabric;
  VGEN_CHECK((impl_->types & need) != 0, ExitCode::kInternal, "device share: a {} handle of a buffer with types {:#x}",
             share_kind_name(kind), impl_->types);
  h.kind = int32_t(kind);
  h.bytes = impl_->mapped;
  if (kind == ShareKind::kIpc) {
    cudaIpcMemHandle_t ipc;
    VGEN_CUDA_CHECK(cudaIpcGetMemHandle(&ipc, impl_->ipc));
    std::memcpy(h.data, &ipc, sizeof(ipc));
  } else if (kind == ShareKind::kPosixFd) {
    close_exported();
    int fd = -1;
    cu_check(cuda_vmm_api().export_handle(&fd, impl_->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             "cuMemExportToShareableHandle (POSIX file descriptor)");
    impl_->exported_fd = fd;
    h.pid = int32_t(getpid());
    h.fd = fd;
    h.nonce = uint32_t(std::random_device{}());
  } else {
    CUmemFabricHandle fabric;
    cu_check(cuda_vmm_api().export_handle(&fabric, impl_->handle, CU_MEM_HANDLE_TYPE_FABRIC, 0),
             "cuMemExportToShareableHandle (fabric)");
    std::memcpy(h.data, &fabric, sizeof(fabric));
  }
  return h;
}

void DeviceShareBuffer::close_exported() {
  if (impl_->exported_fd >= 0) close(impl_->exported_fd);
  impl_->exported_fd = -1;
}

struct DeviceSharePeer::Impl {
  ShareKind kind = ShareKind::kIpc;
  void* ipc = nullptr;
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr ptr = 0;
  size_t size = 0;
};

DeviceSharePeer::DeviceSharePeer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DeviceSharePeer::~DeviceSharePeer() {
  if (impl_->ipc) (void)cudaIpcCloseMemHandle(impl_->ipc);
  if (impl_->ptr) {
    unmap_range(impl_->ptr, impl_->size);
    (void)cuda_vmm_api().release(impl_->handle);
  }
}

const void* DeviceSharePeer::data() const {
  return impl_->ptr ? reinterpret_cast<const void*>(impl_->ptr) : impl_->ipc;
}

std::unique_ptr<DeviceSharePeer> DeviceSharePeer::open(const DeviceShareHandle& h, std::string* error, int fd) {
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd >= 0) close(fd);  // the imported handle keeps the memory
    }
  } owned{fd};
  auto impl = std::make_unique<Impl>();
  impl->kind = ShareKind(h.kind);
  if (impl->kind == ShareKind::kIpc) {
    cudaIpcMemHandle_t ipc;
    std::memcpy(&ipc, h.data, sizeof(ipc));
    const cudaError_t e = cudaIpcOpenMemHandle(&impl->ipc, ipc, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      impl->ipc = nullptr;
      return *error = fmt::format("cudaIpcOpenMemHandle: {}", cudaGetErrorString(e)), nullptr;
    }
    return std::unique_ptr<DeviceSharePeer>(new DeviceSharePeer(std::move(impl)));
  }
  const CudaVmmApi& api = cuda_vmm_api();
  if (!api.complete()) return *error = "the CUDA driver lacks the virtual-memory API", nullptr;
  const CUdevice dev = cu_current_device();
  CUresult r;
  if (impl->kind == ShareKind::kPosixFd) {
    if (fd < 0) return *error = "no descriptor received", nullptr;
    r = api.import_handle(&impl->handle, reinterpret_cast<void*>(intptr_t(fd)),
                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  } else {
    CUmemFabricHandle fabric;
    std::memcpy(&fabric, h.data, sizeof(fabric));
    r = api.import_handle(&impl->handle, &fabric, CU_MEM_HANDLE_TYPE_FABRIC);
  }
  if (r != CUDA_SUCCESS) return *error = cu_error_text(r, "cuMemImportFromShareableHandle"), nullptr;
  const size_t g = granularity(allocation_prop(dev, 0));
  if (map_range(impl->handle, size_t(h.bytes), g, dev, CU_MEM_ACCESS_FLAGS_PROT_READ, &impl->ptr, error) !=
      CUDA_SUCCESS) {
    (void)api.release(impl->handle);
    impl->ptr = 0;
    return nullptr;
  }
  impl->size = size_t(h.bytes);
  return std::unique_ptr<DeviceSharePeer>(new DeviceSharePeer(std::move(impl)));
}

}  // namespace vgen
