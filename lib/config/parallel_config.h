// parallel_config of the recipe (docs/recipe.md): plain data, read by io/recipe.cpp and used by the
// mesh (dist/) below io, so it lives in the lowest room.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/named.h"

namespace vgen {

// Along which latent axis the parallel VAE splits a frame (parallel_config.parallel_vae_split_dim).
enum class VaeSplitDim : uint8_t { kHeight, kWidth };
inline constexpr Named<VaeSplitDim> kVaeSplitDimNames[] = {{VaeSplitDim::kWidth, "width"},
                                                           {VaeSplitDim::kHeight, "height"}};
inline const char* vae_split_dim_name(VaeSplitDim d) { return name_in(kVaeSplitDimNames, d); }

// How a dwdp group maps the peers' weight arenas (parallel_config.dwdp_transport; docs/parallelism.md
// "DWDP transports"): vmm, the CUDA virtual-memory API (POSIX file descriptors on one host, fabric
// handles across the hosts of one NVLink domain); ipc, legacy CUDA IPC (one host); auto, vmm where the
// group's devices export it, else ipc. The environment variable VGEN_DWDP_TRANSPORT overrides it.
enum class DwdpTransport : uint8_t { kAuto, kVmm, kIpc };
inline constexpr Named<DwdpTransport> kDwdpTransportNames[] = {
    {DwdpTransport::kAuto, "auto"}, {DwdpTransport::kVmm, "vmm"}, {DwdpTransport::kIpc, "ipc"}};
inline const char* dwdp_transport_name(DwdpTransport t) { return name_in(kDwdpTransportNames, t); }

struct ParallelConfig {
  int dp_size = 1;
  int cfg_size = 1;
  int ulysses_size = 1;
  int ring_size = 1;
  std::array<int, 2> attn2d_size = {1, 1};  // rows, cols
  bool async_ulysses = false;
  int parallel_vae_size = 1;
  VaeSplitDim parallel_vae_split_dim = VaeSplitDim::kWidth;
  int dwdp_size = 1;
  DwdpTransport dwdp_transport = DwdpTransport::kAuto;
  // auto: true picks the mesh with the best predicted time for the world size at start
  // (plan/mesh_ranking.h); the size keys in `explicit_keys` (set in the recipe or by --set:
  // dp_size, cfg_size, ulysses_size, ring_size, attn2d_size, parallel_vae_size, dwdp_size) keep
  // their values and auto fills only the others.
  bool auto_mesh = false;
  std::vector<std::string> explicit_keys;
  bool is_explicit(const std::string& key) const {
    for (auto& k : explicit_keys)
      if (k == key) return true;
    return false;
  }
  int cp_size() const { return ring_size > 1 ? ring_size : attn2d_size[0] * attn2d_size[1]; }
  int seq_size() const { return cp_size() * ulysses_size; }
  int world_size() const { return dp_size * cfg_size * seq_size(); }
};

}  // namespace vgen
