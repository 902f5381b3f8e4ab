#include <nccl.h>

#include <cstdlib>

#include "core/error.h"
#include "core/log.h"
#include "dist/nccl_domain_check.h"

namespace vgen {

void check_loaded_nccl_for_nvlink_domain(bool multi_host) {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) version = 0;
  const NcclDomainCheck c =
      check_nccl_for_nvlink_domain(version, multi_host, [](const char* name) { return std::getenv(name); });
  VGEN_CHECK(c.level != NcclDomainCheck::Level::kRefuse, ExitCode::kRecipe, "{}", c.message);
  if (c.level == NcclDomainCheck::Level::kWarn) log_warn_job("{}", c.message);
}

}  // namespace vgen
