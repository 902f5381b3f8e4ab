// Which transport the ranks of a group share device memory over (dist/device_share.h), decided from
// facts every rank reports about its GPU. A group shares within one NVLink domain: the GPUs the
// fabric manager registered under one cluster UUID and clique id (a GB200 NVL72 rack: 18 hosts of
// 4 GPUs), or, where the fabric reports nothing (HGX, PCIe), the GPUs of one host.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/parallel_config.h"

namespace vgen {

// How a peer's buffer is reached: legacy CUDA IPC (one host), or the CUDA virtual-memory API with a
// POSIX file descriptor (one host) or a fabric handle (the hosts of one NVLink domain).
enum class ShareKind : int32_t { kIpc = 0, kPosixFd = 1, kFabric = 2 };
const char* share_kind_name(ShareKind k);  // "ipc", "vmm-posix-fd", "vmm-fabric"

// What one rank reports (filled from the driver by local_share_facts, dist/device_share.h).
struct RankShareFacts {
  std::string host;
  bool fabric = false;  // the GPU's fabric registration is complete: cluster_uuid and clique_id hold
  std::array<uint8_t, 16> cluster_uuid{};
  uint32_t clique_id = 0;
  bool posix_fd = false;       // its buffers export POSIX file descriptors
  bool fabric_handle = false;  // its buffers export fabric handles
};

// The NVLink domain of a rank, as text: "NVLink domain <uuid> clique <id>", or "host <name>".
std::string share_domain_name(const RankShareFacts& f);

struct ShareGroupDecision {
  bool allowed = false;
  ShareKind kind = ShareKind::kIpc;
  int domain_size = 0;  // world ranks in the domain of the group's first rank
  std::string domain;   // share_domain_name of the group's first rank
  std::string reason;   // why the group is refused (empty when allowed)
};

// The group of world ranks [first, first + size) (`world` indexed by world rank) asking for `want`:
// kIpc needs one host; kVmm one host with POSIX descriptors (else fabric handles) or one NVLink
// domain with fabric handles; kAuto takes vmm where every GPU of the group exports it, else ipc on
// one host. A group larger than its domain, or spanning domains, is refused with the reason.
ShareGroupDecision decide_share_group(const std::vector<RankShareFacts>& world, int first, int size,
                                      DwdpTransport want);

}  // namespace vgen
