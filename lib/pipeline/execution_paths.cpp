#include "pipeline/execution_paths.h"

#include "core/log.h"
#include "ops/path_table.h"
#include "pipeline/rank_refusal.h"

namespace vgen {

Json start_execution_paths(const Recipe& recipe, Communicator& world) {
  if (!recipe.is_cuda()) return Json();
  PathQuery q;
  q.precision = recipe.precision;
  q.backend = recipe.attention.backend;
  q.fp8 = recipe.fp8;
  std::string gpu, why;
  const bool device = current_device_query(q, &gpu, &why);
  const ExecutionPaths p = device ? choose_execution_paths(q) : ExecutionPaths{};
  const std::string refusal = device ? p.refusal : why;
  const RankRefusal r = agree_on_refusal(world, refusal.empty(), device ? gpu + ": " + refusal : refusal);
  if (r.any)
    VGEN_THROW(ExitCode::kNoDevice, "{}: device: cuda: rank {}'s GPU cannot run this build: {}{}", recipe.source_path,
               r.first, r.reason, r.others("cannot run it"));
  const std::string archs = cuda_archs_str(q.built), nccl = nccl_version_string();
  // Whether one NVLink domain spans several hosts (GB200 NVL72) is not detected yet.
  log_info("GPU {} (compute capability {}.{}), build archs {}, NCCL {}, NVLink domain spans hosts: unknown", gpu,
           q.cc / 10, q.cc % 10, archs, nccl);
  log_info("{}", execution_paths_text(p));
  Json j = execution_paths_json(p);
  j["gpu"] = gpu;
  j["built_archs"] = archs;
  j["nccl"] = nccl;
  j["nvlink_domain_spans_hosts"] = "unknown";
  return j;
}

}  // namespace vgen
