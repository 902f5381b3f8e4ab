// How a dwdp group shares its arenas (parallel_config.dwdp_transport, docs/parallelism.md "DWDP
// transports"): the choice from the recipe and the environment, and on the device the group's
// agreement on it and the exchange of the arenas' handles (lib/parallel/dwdp_transport_cuda.cpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/parallel_config.h"
#include "dist/communicator.h"
#include "dist/share_group.h"

namespace vgen {

struct DwdpPlan;
class DeviceShareBuffer;
class DeviceSharePeer;

// The recipe's transport unless `env` (the value of VGEN_DWDP_TRANSPORT, or null) names one
// (auto, vmm or ipc; anything else is kUsage).
DwdpTransport dwdp_transport_choice(DwdpTransport recipe, const char* env);

// Collective over `world` (every rank, the same point, the same `want`): every rank's facts
// (dist/device_share.h) gathered, every group decided (dist/share_group.h: a refused group throws
// kRecipe on every rank), and a VMM decision tried end to end with a small buffer exported,
// imported and mapped by the group. A group on one host whose probe fails falls back to IPC under
// `auto` (a warning with the cause) and throws kUsage under `vmm`; a group spanning hosts throws.
ShareKind agree_dwdp_transport(Communicator& world, const DwdpPlan& plan, DwdpTransport want);

// Collective over `world`: each rank's handle of `mine` (of `kind`) gathered, the group's peers
// opened (peers[g] for group rank g; null for this rank and for a peer without a buffer); a peer
// that cannot be opened throws kUsage with the cause. The exported descriptors are closed after.
void exchange_dwdp_handles(Communicator& world, const DwdpPlan& plan, DeviceShareBuffer& mine, ShareKind kind,
                           std::vector<std::unique_ptr<DeviceSharePeer>>* peers);

// DeviceShareBuffer types for a transport.
unsigned share_types_for(ShareKind kind);

}  // namespace vgen
