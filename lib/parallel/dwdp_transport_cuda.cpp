// The dwdp group's transport and handle exchange on the device (contract in parallel/dwdp_transport.h).
#include <cstring>
#include <exception>

#include "core/error.h"
#include "core/log.h"
#include "core/tensor.h"
#include "dist/device_share.h"
#include "dist/fd_passing.h"
#include "dist/nccl_domain_check.h"
#include "parallel/dwdp.h"
#include "parallel/dwdp_transport.h"

namespace vgen {
namespace {

// One rank's facts as plain bytes.
struct FactsMsg {
  char host[64];
  uint8_t cluster_uuid[16];
  uint32_t clique_id;
  int32_t fabric, posix_fd, fabric_handle;
};

// Every rank's `mine` (plain bytes), by world rank. Collective over `world`.
template <typename T>
std::vector<T> gather(Communicator& world, const T& mine) {
  Tensor send = Tensor::empty({int64_t(sizeof(T))}, DType::kU8);
  std::memcpy(send.raw(), &mine, sizeof(T));
  Tensor all = Tensor::empty({int64_t(sizeof(T)) * world.size()}, DType::kU8);
  world.all_gather(send, all);
  std::vector<T> out(size_t(world.size()));
  std::memcpy(out.data(), all.raw(), sizeof(T) * out.size());
  return out;
}

std::vector<RankShareFacts> gather_facts(Communicator& world) {
  const RankShareFacts f = local_share_facts();
  FactsMsg m{};
  std::strncpy(m.host, f.host.c_str(), sizeof(m.host) - 1);
  std::memcpy(m.cluster_uuid, f.cluster_uuid.data(), sizeof(m.cluster_uuid));
  m.clique_id = f.clique_id;
  m.fabric = f.fabric;
  m.posix_fd = f.posix_fd;
  m.fabric_handle = f.fabric_handle;
  std::vector<RankShareFacts> out;
  for (const FactsMsg& g : gather(world, m)) {
    RankShareFacts r;
    r.host = std::string(g.host, strnlen(g.host, sizeof(g.host)));
    std::memcpy(r.cluster_uuid.data(), g.cluster_uuid, sizeof(g.cluster_uuid));
    r.clique_id = g.clique_id;
    r.fabric = g.fabric != 0;
    r.posix_fd = g.posix_fd != 0;
    r.fabric_handle = g.fabric_handle != 0;
    out.push_back(std::move(r));
  }
  return out;
}

constexpr int kFdTimeoutMs = 30000;  // per connection or message: the ranks reach this point together

// The group's peers' handles in `all` opened into *peers; the first failure's cause ("" if none).
// POSIX descriptors travel over Unix sockets (dist/fd_passing.h): this rank connects to each peer's
// listener, serves its own (`listener`, null when it exports none), then receives.
std::string open_peers(const std::vector<DeviceShareHandle>& all, int first, const DwdpPlan& plan,
                       FdListener* listener, std::vector<std::unique_ptr<DeviceSharePeer>>* peers) {
  peers->clear();
  peers->resize(size_t(plan.size));
  std::string first_error;
  auto note = [&](int g, const std::string& e) {
    if (first_error.empty())
      first_error = fmt::format("world rank {}'s {} handle: {}", first + g,
                                share_kind_name(ShareKind(all[size_t(first + g)].kind)), e);
  };
  std::vector<int> socks(size_t(plan.size), -1);
  for (int g = 0; g < plan.size; ++g) {
    const DeviceShareHandle& h = all[size_t(first + g)];
    std::string e;
    if (g != plan.rank && h.kind == int32_t(ShareKind::kPosixFd) &&
        (socks[size_t(g)] = fd_connect(h.pid, h.fd, h.nonce, &e)) < 0)
      note(g, e);
  }
  std::string served;
  if (listener && !listener->serve(plan.size - 1, kFdTimeoutMs, &served)) note(plan.rank, "sending it: " + served);
  for (int g = 0; g < plan.size; ++g) {
    const DeviceShareHandle& h = all[size_t(first + g)];
    if (g == plan.rank || h.kind < 0) continue;
    std::string error;
    int fd = -1;
    if (h.kind == int32_t(ShareKind::kPosixFd)) {
      if (socks[size_t(g)] < 0) continue;
      if ((fd = fd_receive(socks[size_t(g)], kFdTimeoutMs, &error)) < 0) {
        note(g, error);
        continue;
      }
    }
    try {  // a throw here would leave the group's next collective short of this rank
      (*peers)[size_t(g)] = DeviceSharePeer::open(h, &error, fd);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!(*peers)[size_t(g)]) note(g, error);
  }
  return first_error;
}

// This rank's handle of `buf` as `kind`, and for a POSIX descriptor the listener that hands it out.
DeviceShareHandle export_with_listener(DeviceShareBuffer& buf, ShareKind kind, std::unique_ptr<FdListener>* listener) {
  const DeviceShareHandle h = buf.export_handle(kind);
  if (h.kind == int32_t(ShareKind::kPosixFd)) *listener = std::make_unique<FdListener>(h.fd, h.nonce);
  return h;
}

// A granule-sized buffer of `kind` shared within every group that uses VMM (`vmm`: this rank's
// group does): each rank's success, by world rank, and this rank's failure's cause.
std::vector<int32_t> probe(Communicator& world, const DwdpPlan& plan, ShareKind kind, bool vmm, std::string* error) {
  std::unique_ptr<DeviceShareBuffer> buf;
  std::unique_ptr<FdListener> listener;
  DeviceShareHandle h;
  if (vmm) {
    try {  // a failure here is this rank's answer, not an exception: the group's collectives go on
      buf = std::make_unique<DeviceShareBuffer>(1, share_types_for(kind));
      if (buf->types() & share_types_for(kind))
        h = export_with_listener(*buf, kind, &listener);
      else
        *error = fmt::format("no {} buffer could be created on this GPU", share_kind_name(kind));
    } catch (const std::exception& e) {
      *error = e.what();
      h = DeviceShareHandle{};
    }
  }
  const std::vector<DeviceShareHandle> all = gather(world, h);
  std::vector<std::unique_ptr<DeviceSharePeer>> peers;
  if (vmm) {  // even without a buffer of its own: the peers' listeners count on this rank's connection
    const std::string e = open_peers(all, world.rank() - plan.rank, plan, listener.get(), &peers);
    if (error->empty()) *error = e;
  }
  const std::vector<int32_t> ok = gather(world, int32_t(error->empty()));
  peers.clear();  // unmapped before the exporters release their buffers
  if (buf) buf->close_exported();
  return ok;
}

}  // namespace

unsigned share_types_for(ShareKind kind) {
  return kind == ShareKind::kPosixFd ? kSharePosixFd : kind == ShareKind::kFabric ? kShareFabric : kShareIpc;
}

ShareKind agree_dwdp_transport(Communicator& world, const DwdpPlan& plan, DwdpTransport want) {
  const std::vector<RankShareFacts> facts = gather_facts(world);
  const int first = world.rank() - plan.rank;
  ShareGroupDecision mine;
  bool any_vmm = false;
  for (int g = 0; g < world.size(); g += plan.size) {
    const ShareGroupDecision d = decide_share_group(facts, g, plan.size, want);
    VGEN_CHECK(d.allowed, ExitCode::kRecipe, "{}", d.reason);
    any_vmm = any_vmm || d.kind != ShareKind::kIpc;
    if (g == first) mine = d;
  }
  bool multi_host = false;
  for (int g = 1; g < plan.size; ++g)
    multi_host = multi_host || facts[size_t(first + g)].host != facts[size_t(first)].host;
  if (mine.kind == ShareKind::kFabric) check_loaded_nccl_for_nvlink_domain(multi_host);
  if (!any_vmm) return ShareKind::kIpc;
  std::string error;
  const std::vector<int32_t> ok = probe(world, plan, mine.kind, mine.kind != ShareKind::kIpc, &error);
  int failed = -1;
  for (int g = 0; g < plan.size && failed < 0; ++g)
    if (!ok[size_t(first + g)]) failed = first + g;
  if (failed < 0) return mine.kind;
  const std::string cause = error.empty() ? fmt::format("world rank {} could not map a peer's buffer", failed) : error;
  if (!multi_host && want == DwdpTransport::kAuto) {  // IPC reaches the GPUs of one host
    log_warn("DWDP: the ranks of {} cannot share {} buffers ({}); falling back to CUDA IPC", mine.domain,
             share_kind_name(mine.kind), cause);
    return ShareKind::kIpc;
  }
  VGEN_THROW(ExitCode::kUsage, "DWDP: the ranks of {} cannot share {} buffers ({}){}", mine.domain,
             share_kind_name(mine.kind), cause,
             multi_host ? "" : "; set parallel_config.dwdp_transport auto or ipc");
}

void exchange_dwdp_handles(Communicator& world, const DwdpPlan& plan, DeviceShareBuffer& mine, ShareKind kind,
                           std::vector<std::unique_ptr<DeviceSharePeer>>* peers) {
  std::unique_ptr<FdListener> listener;
  const std::vector<DeviceShareHandle> all = gather(world, export_with_listener(mine, kind, &listener));
  const std::string error = open_peers(all, world.rank() - plan.rank, plan, listener.get(), peers);
  const std::vector<int32_t> ok = gather(world, int32_t(error.empty()));  // every import done: close ours
  mine.close_exported();
  VGEN_CHECK(error.empty(), ExitCode::kUsage,
             "parallel_config.dwdp_size {}: cannot map the weights of {}; DWDP needs one GPU per rank with peer access "
             "(or one NVLink domain)",
             plan.size, error);
  for (int g = 0; g < plan.size; ++g)
    VGEN_CHECK(ok[size_t(world.rank() - plan.rank + g)], ExitCode::kUsage,
               "parallel_config.dwdp_size {}: world rank {} cannot map the weights of its group", plan.size,
               world.rank() - plan.rank + g);
}

}  // namespace vgen
