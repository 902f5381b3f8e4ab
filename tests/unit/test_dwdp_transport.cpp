// How a dwdp group shares its arenas, without a GPU: the group decision from made-up per-rank facts
// (dist/share_group.h: a GB200 NVL72 rack of 18 hosts x 4 GPUs in one clique, an HGX host of 8 GPUs
// without a fabric, mixed worlds), the transport switch (parallel/dwdp_transport.h) and NCCL's
// settings for a multi-host NVLink domain (dist/nccl_domain_check.h).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "dist/nccl_domain_check.h"
#include "dist/share_group.h"
#include "io/recipe.h"
#include "parallel/dwdp_transport.h"

using namespace vgen;

namespace {

RankShareFacts hgx_rank(const std::string& host) {
  RankShareFacts f;
  f.host = host;
  f.posix_fd = true;  // no fabric registration, no fabric handles
  return f;
}

RankShareFacts nvl_rank(const std::string& host, uint8_t cluster, uint32_t clique) {
  RankShareFacts f = hgx_rank(host);
  f.fabric = true;
  f.cluster_uuid.fill(cluster);
  f.clique_id = clique;
  f.fabric_handle = true;
  return f;
}

// hosts x gpus ranks, host-major (srun -N hosts --ntasks-per-node=gpus).
std::vector<RankShareFacts> nvl72(int hosts = 18, int gpus = 4) {
  std::vector<RankShareFacts> w;
  for (int h = 0; h < hosts; ++h)
    for (int g = 0; g < gpus; ++g) w.push_back(nvl_rank("nvl-" + std::to_string(h), 0xab, 7));
  return w;
}

std::vector<RankShareFacts> hgx(int hosts, int gpus = 8) {
  std::vector<RankShareFacts> w;
  for (int h = 0; h < hosts; ++h)
    for (int g = 0; g < gpus; ++g) w.push_back(hgx_rank("hgx-" + std::to_string(h)));
  return w;
}

}  // namespace

TEST(DwdpTransport, Nvl72SharesAcrossHostsWithFabricHandles) {
  const auto w = nvl72();
  for (int size : {8, 36, 72}) {
    for (int first = 0; first < 72; first += size) {
      const ShareGroupDecision d = decide_share_group(w, first, size, DwdpTransport::kAuto);
      ASSERT_TRUE(d.allowed) << d.reason;
      EXPECT_EQ(d.kind, ShareKind::kFabric);
      EXPECT_EQ(d.domain_size, 72);
    }
    EXPECT_EQ(decide_share_group(w, 0, size, DwdpTransport::kVmm).kind, ShareKind::kFabric);
  }
  EXPECT_NE(share_domain_name(w[0]).find("clique 7"), std::string::npos);
}

TEST(DwdpTransport, Nvl72WithinOneHostUsesPosixDescriptors) {
  const auto w = nvl72();
  for (DwdpTransport want : {DwdpTransport::kAuto, DwdpTransport::kVmm}) {
    const ShareGroupDecision d = decide_share_group(w, 4, 4, want);
    ASSERT_TRUE(d.allowed) << d.reason;
    EXPECT_EQ(d.kind, ShareKind::kPosixFd);
  }
  EXPECT_EQ(decide_share_group(w, 4, 4, DwdpTransport::kIpc).kind, ShareKind::kIpc);
}

TEST(DwdpTransport, IpcIsRefusedAcrossHosts) {
  const ShareGroupDecision d = decide_share_group(nvl72(), 0, 8, DwdpTransport::kIpc);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.reason.find("one host"), std::string::npos) << d.reason;
}

TEST(DwdpTransport, HgxSharesWithinTheHostOnly) {
  const auto w = hgx(2);
  for (int size : {2, 4, 8}) {
    const ShareGroupDecision d = decide_share_group(w, 8, size, DwdpTransport::kAuto);
    ASSERT_TRUE(d.allowed) << d.reason;
    EXPECT_EQ(d.kind, ShareKind::kPosixFd);
    EXPECT_EQ(d.domain_size, 8);
    EXPECT_EQ(d.domain, "host hgx-1");
  }
  // 16 ranks over two HGX hosts: above the domain (a host), refused with the reason.
  const ShareGroupDecision d = decide_share_group(w, 0, 16, DwdpTransport::kAuto);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.reason.find("dwdp_size 16 is above the host hgx-0"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("(8 ranks)"), std::string::npos) << d.reason;
}

TEST(DwdpTransport, NoPosixDescriptorsFallsBackToIpcUnderAuto) {
  auto w = hgx(1, 4);
  w[2].posix_fd = false;
  EXPECT_EQ(decide_share_group(w, 0, 4, DwdpTransport::kAuto).kind, ShareKind::kIpc);
  EXPECT_TRUE(decide_share_group(w, 0, 4, DwdpTransport::kAuto).allowed);
  const ShareGroupDecision forced = decide_share_group(w, 0, 4, DwdpTransport::kVmm);
  EXPECT_FALSE(forced.allowed);
  EXPECT_NE(forced.reason.find("dwdp_transport vmm"), std::string::npos) << forced.reason;
}

TEST(DwdpTransport, MixedWorldsAreRefusedAcrossDomains) {
  // Two NVL racks (two cliques of one cluster): a group straddling them is refused, one inside is not.
  auto w = nvl72(2, 4);
  for (int r = 4; r < 8; ++r) w[size_t(r)].clique_id = 8;
  EXPECT_TRUE(decide_share_group(w, 0, 4, DwdpTransport::kAuto).allowed);
  const ShareGroupDecision straddle = decide_share_group(w, 2, 4, DwdpTransport::kAuto);
  EXPECT_FALSE(straddle.allowed);
  const ShareGroupDecision above = decide_share_group(w, 0, 8, DwdpTransport::kAuto);
  EXPECT_FALSE(above.allowed);
  EXPECT_NE(above.reason.find("above the NVLink domain"), std::string::npos) << above.reason;
  // An NVL host next to an HGX host: no common domain.
  std::vector<RankShareFacts> mixed = nvl72(1, 4);
  for (auto& f : hgx(1, 4)) mixed.push_back(f);
  EXPECT_FALSE(decide_share_group(mixed, 0, 8, DwdpTransport::kAuto).allowed);
  EXPECT_TRUE(decide_share_group(mixed, 4, 4, DwdpTransport::kAuto).allowed);
  // One domain, but a GPU without fabric handles (no IMEX channel): refused, naming the rank.
  auto no_imex = nvl72(2, 4);
  no_imex[5].fabric_handle = false;
  const ShareGroupDecision d = decide_share_group(no_imex, 0, 8, DwdpTransport::kAuto);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.reason.find("world rank 5"), std::string::npos) << d.reason;
}

TEST(DwdpTransport, UnregisteredFabricCountsAsTheHost) {
  // NVL hosts whose fabric registration did not complete: each host is its own domain.
  auto w = nvl72(2, 4);
  for (auto& f : w) f.fabric = false;
  EXPECT_TRUE(decide_share_group(w, 0, 4, DwdpTransport::kAuto).allowed);
  EXPECT_FALSE(decide_share_group(w, 0, 8, DwdpTransport::kAuto).allowed);
}

TEST(DwdpTransport, EnvironmentOverridesTheRecipe) {
  EXPECT_EQ(dwdp_transport_choice(DwdpTransport::kAuto, nullptr), DwdpTransport::kAuto);
  EXPECT_EQ(dwdp_transport_choice(DwdpTransport::kIpc, ""), DwdpTransport::kIpc);
  EXPECT_EQ(dwdp_transport_choice(DwdpTransport::kAuto, "vmm"), DwdpTransport::kVmm);
  EXPECT_EQ(dwdp_transport_choice(DwdpTransport::kVmm, "ipc"), DwdpTransport::kIpc);
  EXPECT_THROW(dwdp_transport_choice(DwdpTransport::kAuto, "nvlink"), Error);
}

TEST(DwdpTransport, RecipeKey) {
  EXPECT_EQ(parse_recipe("device: cpu\n", "r.yaml", {}).parallel.dwdp_transport, DwdpTransport::kAuto);
  for (const Named<DwdpTransport>& t : kDwdpTransportNames)
    EXPECT_EQ(
        parse_recipe(std::string("device: cpu\nparallel_config: {dwdp_transport: ") + t.name + "}\n", "r.yaml", {})
            .parallel.dwdp_transport,
        t.value);
  EXPECT_THROW(parse_recipe("device: cpu\nparallel_config: {dwdp_transport: nvlink}\n", "r.yaml", {}), Error);
}

TEST(DwdpTransport, NcclChecksOnlyAMultiHostDomain) {
  std::map<std::string, std::string> env;
  auto get = [&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  using L = NcclDomainCheck::Level;
  EXPECT_EQ(check_nccl_for_nvlink_domain(22503, true, get).level, L::kOk);
  EXPECT_EQ(check_nccl_for_nvlink_domain(22403, false, get).level, L::kOk);  // one host: nothing asked
  const NcclDomainCheck old = check_nccl_for_nvlink_domain(22403, true, get);
  EXPECT_EQ(old.level, L::kWarn);
  EXPECT_NE(old.message.find("NCCL 2.24.3"), std::string::npos) << old.message;
  env["NCCL_MNNVL_ENABLE"] = "0";
  EXPECT_EQ(check_nccl_for_nvlink_domain(22503, true, get).level, L::kWarn);
  env["NCCL_CUMEM_ENABLE"] = "0";
  const NcclDomainCheck off = check_nccl_for_nvlink_domain(22503, true, get);
  EXPECT_EQ(off.level, L::kRefuse);
  EXPECT_NE(off.message.find("NCCL_CUMEM_ENABLE"), std::string::npos);
  EXPECT_EQ(check_nccl_for_nvlink_domain(22503, false, get).level, L::kOk);
  env["NCCL_CUMEM_ENABLE"] = "1";
  env.erase("NCCL_MNNVL_ENABLE");
  EXPECT_EQ(check_nccl_for_nvlink_domain(22700, true, get).level, L::kOk);
}
