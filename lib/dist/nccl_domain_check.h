// NCCL's settings for an NVLink domain that spans hosts (a GB200 NVL72 rack): NCCL reaches the
// other hosts' GPUs over NVLink (multi-node NVLink) only from 2.25 on in this project's support
// matrix, and only with its cuMem allocations (NCCL_CUMEM_ENABLE, on by default); without them its
// collectives between hosts fall back to the network.
#pragma once
#include <functional>
#include <string>

namespace vgen {

struct NcclDomainCheck {
  enum class Level { kOk, kWarn, kRefuse };
  Level level = Level::kOk;
  std::string message;  // empty when kOk
};

// nccl_version: ncclGetVersion's code (major·10000 + minor·100 + patch, e.g. 22503 for 2.25.3);
// multi_host: the ranks use an NVLink domain spanning hosts; env: the value of an environment
// variable, or null when unset. Refused: NCCL_CUMEM_ENABLE=0 (NCCL then keeps NVLink to one host,
// and NCCL_MNNVL_ENABLE=1 fails at its start). Warned: NCCL older than 2.25, NCCL_MNNVL_ENABLE=0.
NcclDomainCheck check_nccl_for_nvlink_domain(int nccl_version, bool multi_host,
                                             const std::function<const char*(const char*)>& env);

// The same check on this process (the loaded NCCL's version, the real environment): a warning is
// logged, a refusal thrown (kRecipe). CUDA builds; a no-op without NCCL.
void check_loaded_nccl_for_nvlink_domain(bool multi_host);

}  // namespace vgen
