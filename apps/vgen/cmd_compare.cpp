// `vgen compare A B`: prints how far two output directories lie apart, video by video (compare.h).
#include <cstdio>

#include "cli.h"
#include "core/json.h"
#include "tools/compare.h"

namespace vgen::cli {

int cmd_compare(const CompareArgs& a, const DistEnv& env) {
  if (env.world_rank != 0) return 0;  // a host-side command: rank 0 alone under a launcher
  const Comparison c = compare_outputs(a.dir_a, a.dir_b, {a.min_psnr, a.max_rel_l2});
  std::fputs(format_comparison(c).c_str(), stdout);
  std::fflush(stdout);
  if (!a.json.empty()) write_text_file_atomic(a.json, comparison_json(c).dump(1) + "\n");
  return c.failed > 0 ? int(ExitCode::kCompareFailed) : 0;
}

}  // namespace vgen::cli
