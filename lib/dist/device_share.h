// Device memory one rank allocates and other ranks map (CUDA builds; lib/dist/device_share_cuda.cpp).
// Three ways (dist/share_group.h ShareKind): legacy CUDA IPC (cudaMalloc + cudaIpcGetMemHandle, one
// host), and the CUDA virtual-memory API (cuMemCreate with a shareable handle type, cuMemMap,
// cuMemSetAccess) exported as a POSIX file descriptor (one host) or a fabric handle (the hosts of
// one NVLink domain, IMEX). A handle travels as plain bytes (DeviceShareHandle, one MPI message).
// A POSIX descriptor is a number in the exporter's process: it reaches the importers over a
// Unix-domain socket (SCM_RIGHTS, dist/fd_passing.h), the socket's name in the handle.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dist/share_group.h"

namespace vgen {

// Which handle types a buffer is created with (bits; kShareIpc alone: cudaMalloc).
enum ShareTypes : unsigned { kShareIpc = 1u, kSharePosixFd = 2u, kShareFabric = 4u };

// One buffer's handle, as the exporter sends it.
struct DeviceShareHandle {
  int32_t kind = -1;   // ShareKind; -1: nothing exported (no buffer)
  int32_t pid = 0;     // exporter's process (kPosixFd)
  int32_t fd = -1;     // the descriptor in the exporter's process (kPosixFd)
  uint32_t nonce = 0;  // with pid and fd, the name of the socket that hands it out (kPosixFd)
  uint64_t bytes = 0;             // mapped size, granularity-rounded
  unsigned char data[64] = {};    // cudaIpcMemHandle_t or CUmemFabricHandle
};

// This rank's buffer on the current device, read-write here; freed (unmapped, released) on
// destruction. VMM sizes are rounded up to the allocation granularity.
class DeviceShareBuffer {
 public:
  // types: kShareIpc, or a mix of kSharePosixFd and kShareFabric; a VMM buffer whose creation with
  // a fabric handle fails (no IMEX channel) is created without it, a buffer no VMM type works for
  // with IPC (types() says which it got). bytes may be 0: no memory, data() null.
  DeviceShareBuffer(size_t bytes, unsigned types);
  ~DeviceShareBuffer();
  DeviceShareBuffer(const DeviceShareBuffer&) = delete;
  DeviceShareBuffer& operator=(const DeviceShareBuffer&) = delete;
  void* data() const;
  size_t bytes() const;    // as asked
  unsigned types() const;  // the handle types it has
  // The handle of `kind` (one of types()); for kPosixFd a descriptor of this process that stays
  // open until close_exported() (after the importers duplicated it).
  DeviceShareHandle export_handle(ShareKind kind);
  void close_exported();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A peer's buffer mapped readable on the current device; unmapped on destruction.
class DeviceSharePeer {
 public:
  // Null with the cause in *error when the handle cannot be opened (a driver error). kPosixFd: `fd`
  // is this process's duplicate of the exporter's descriptor (fd_receive), closed here.
  static std::unique_ptr<DeviceSharePeer> open(const DeviceShareHandle& handle, std::string* error, int fd = -1);
  ~DeviceSharePeer();
  DeviceSharePeer(const DeviceSharePeer&) = delete;
  DeviceSharePeer& operator=(const DeviceSharePeer&) = delete;
  const void* data() const;

 private:
  struct Impl;
  explicit DeviceSharePeer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// This rank's facts for decide_share_group: its host name, its GPU's fabric registration (NVML's
// GPU fabric info, where libnvidia-ml reports one) and the handle types its driver exports
// (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_{POSIX_FILE_DESCRIPTOR,FABRIC}_SUPPORTED), current device.
RankShareFacts local_share_facts();

}  // namespace vgen
