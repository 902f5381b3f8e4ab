// The start-up refusal of precision fp8 (pipeline/precision.h refuse_fp8_without_device) under mpirun:
// every rank throws the same kRecipe error naming the first rank without FP8 tensor cores, and none
// waits in a collective. Rank 1's GPU is made to count as one without them (test hook
// VGEN_INJECT_NO_FP8=@1); on a machine without FP8 GPUs (CI) every rank lacks them and rank 0 is named.
// Usage: mpirun -np N fp8_refusal_test   (N >= 2)
#include <cstdio>
#include <cstdlib>

#include "mesh_test_main.h"
#include "ops/fp8.h"
#include "model/wan/dit/fp8_options.h"
#include "pipeline/precision.h"

namespace vgen {
namespace {

int run(int, char**, const DistEnv& env) {
  if (env.world_size < 2) fail("needs at least 2 ranks");
  setenv("VGEN_INJECT_NO_FP8", "@1", 1);
  ParallelConfig pc;
  pc.dp_size = env.world_size;
  Mesh mesh = make_mesh(pc, env);
  const Recipe r = parse_recipe("device: cuda\nprecision: fp8\n", "r.yaml", {});
  // This machine's own answer decides which ranks fail: all of them, or rank 1 alone.
  const bool hw = cuda_device_count() > 0 && cuda_fp8_available(nullptr);
  const int first = hw ? 1 : 0;
  const std::string lack = hw ? "" : fmt::format("; {} ranks lack them", env.world_size);
  try {
    refuse_fp8_without_device(r, *mesh.world);
  } catch (const Error& e) {
    const std::string m = e.message();
    if (e.code() != ExitCode::kRecipe) fail("wrong exit code: " + m);
    for (const std::string& f : {std::string("precision fp8"), fmt::format("rank {}'s GPU is", first), lack})
      if (m.find(f) == std::string::npos) fail("'" + f + "' not in: " + m);
    mesh.world->barrier();  // every rank got here: no rank was left waiting
    if (env.world_rank == 0) std::printf("fp8 refusal on %d ranks: every rank refused with: %s: PASS\n", env.world_size, m.c_str());
    return 0;
  }
  fail("precision fp8 was not refused");
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
