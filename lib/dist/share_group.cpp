#include "dist/share_group.h"

#include <fmt/format.h>

namespace vgen {
namespace {

bool same_domain(const RankShareFacts& a, const RankShareFacts& b) {
  if (a.fabric != b.fabric) return false;
  return a.fabric ? a.cluster_uuid == b.cluster_uuid && a.clique_id == b.clique_id : a.host == b.host;
}

ShareGroupDecision refuse(ShareGroupDecision d, std::string reason) {
  d.allowed = false;
  d.reason = std::move(reason);
  return d;
}

ShareGroupDecision allow(ShareGroupDecision d, ShareKind kind) {
  d.allowed = true;
  d.kind = kind;
  return d;
}

// Every rank of the group on one host: vmm (POSIX descriptors, else fabric handles in one domain)
// or ipc.
ShareGroupDecision decide_one_host(const std::vector<RankShareFacts>& world, int first, int size, DwdpTransport want,
                                   ShareGroupDecision d) {
  bool posix = true, fabric = true;
  for (int r = first; r < first + size; ++r) {
    posix = posix && world[size_t(r)].posix_fd;
    fabric = fabric && world[size_t(r)].fabric_handle && same_domain(world[size_t(r)], world[size_t(first)]) &&
             world[size_t(r)].fabric;
  }
  if (want == DwdpTransport::kIpc) return allow(d, ShareKind::kIpc);
  if (posix) return allow(d, ShareKind::kPosixFd);
  if (fabric) return allow(d, ShareKind::kFabric);
  if (want == DwdpTransport::kAuto) return allow(d, ShareKind::kIpc);
  return refuse(d, fmt::format("dwdp_transport vmm: the GPUs of world ranks {}..{} export neither POSIX file "
                               "descriptors nor fabric handles (set dwdp_transport ipc or auto)",
                               first, first + size - 1));
}

}  // namespace

const char* share_kind_name(ShareKind k) {
  switch (k) {
    case ShareKind::kIpc: return "ipc";
    case ShareKind::kPosixFd: return "vmm-posix-fd";
    case ShareKind::kFabric: return "vmm-fabric";
  }
  return "?";
}

std::string share_domain_name(const RankShareFacts& f) {
  if (!f.fabric) return fmt::format("host {}", f.host);
  std::string uuid;
  for (size_t i = 0; i < f.cluster_uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) uuid += '-';
    uuid += fmt::format("{:02x}", f.cluster_uuid[i]);
  }
  return fmt::format("NVLink domain {} clique {}", uuid, f.clique_id);
}

ShareGroupDecision decide_share_group(const std::vector<RankShareFacts>& world, int first, int size,
                                      DwdpTransport want) {
  ShareGroupDecision d;
  if (first < 0 || size < 1 || size_t(first + size) > world.size())
    return refuse(d, fmt::format("a group of world ranks {}..{} in a world of {}", first, first + size - 1,
                                 world.size()));
  const RankShareFacts& head = world[size_t(first)];
  d.domain = share_domain_name(head);
  int on_host = 0;
  for (const RankShareFacts& f : world) {
    d.domain_size += same_domain(f, head) ? 1 : 0;
    on_host += f.host == head.host ? 1 : 0;
  }
  if (on_host > d.domain_size) {  // a fabric smaller than the host (GPUs not registered): the host
    d.domain = fmt::format("host {}", head.host);
    d.domain_size = on_host;
  }
  bool one_host = true;
  for (int r = first; r < first + size; ++r) one_host = one_host && world[size_t(r)].host == head.host;
  if (one_host) return decide_one_host(world, first, size, want, d);
  if (size > d.domain_size)
    return refuse(d, fmt::format("parallel_config.dwdp_size {} is above the {} of world rank {} ({} ranks): a dwdp "
                                 "group shares GPU memory within one NVLink domain (one host where the fabric "
                                 "reports no cluster)",
                                 size, d.domain, first, d.domain_size));
  for (int r = first + 1; r < first + size; ++r) {
    const RankShareFacts& f = world[size_t(r)];
    if (!same_domain(f, head))
      return refuse(d, fmt::format("parallel_config.dwdp_size {}: world ranks {} ({}) and {} ({}) are not in one "
                                   "NVLink domain; order the ranks so that each group of {} consecutive ranks lies "
                                   "in one",
                                   size, first, d.domain, r, share_domain_name(f), size));
  }
  if (want == DwdpTransport::kIpc)
    return refuse(d, fmt::format("parallel_config.dwdp_size {}: world ranks {}..{} span hosts and dwdp_transport ipc "
                                 "reaches only the GPUs of one host (set dwdp_transport vmm or auto)",
                                 size, first, first + size - 1));
  for (int r = first; r < first + size; ++r)
    if (!world[size_t(r)].fabric_handle)
      return refuse(d, fmt::format("parallel_config.dwdp_size {}: the GPU of world rank {} (host {}) exports no fabric "
                                   "handles (driver support, or the IMEX channel, /dev/nvidia-caps-imex-channels, "
                                   "missing), which a group spanning hosts needs",
                                   size, r, world[size_t(r)].host));
  return allow(d, ShareKind::kFabric);
}

}  // namespace vgen
