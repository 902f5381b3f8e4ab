#include "dist/nccl_domain_check.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/log.h"

namespace vgen {
namespace {

constexpr int kMinMultiNodeNvlink = 22500;  // 2.25.0

std::string version_text(int v) { return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100); }

bool is_zero(const char* v) { return v != nullptr && std::strcmp(v, "0") == 0; }

}  // namespace

NcclDomainCheck check_nccl_for_nvlink_domain(int nccl_version, bool multi_host,
                                             const std::function<const char*(const char*)>& env) {
  NcclDomainCheck c;
  if (!multi_host) return c;
  if (is_zero(env("NCCL_CUMEM_ENABLE"))) {
    c.level = NcclDomainCheck::Level::kRefuse;
    c.message = "NCCL_CUMEM_ENABLE=0: NCCL reaches the GPUs of other hosts of an NVLink domain only through its cuMem "
                "allocations; unset NCCL_CUMEM_ENABLE (or set it to 1)";
    return c;
  }
  std::string warn;
  if (nccl_version > 0 && nccl_version < kMinMultiNodeNvlink)
    warn = fmt::format("NCCL {} is older than 2.25: its collectives between the hosts of the NVLink domain may run "
                       "over the network, not NVLink (use NCCL >= 2.25)",
                       version_text(nccl_version));
  if (is_zero(env("NCCL_MNNVL_ENABLE")))
    warn += std::string(warn.empty() ? "" : "; ") +
            "NCCL_MNNVL_ENABLE=0: NCCL's collectives between hosts run over the network, not NVLink";
  if (!warn.empty()) {
    c.level = NcclDomainCheck::Level::kWarn;
    c.message = warn;
  }
  return c;
}

#ifndef VGEN_WITH_CUDA
void check_loaded_nccl_for_nvlink_domain(bool) {}
#endif

}  // namespace vgen
