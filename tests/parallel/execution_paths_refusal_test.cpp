// The start-up path table under mpirun (pipeline/execution_paths.h start_execution_paths): with
// device: cpu nothing is asked; with device: cuda on a machine without a usable GPU (CI) or a build
// without the CUDA backend, every rank throws the same kNoDevice error naming rank 0 and the count
// of ranks, and none waits in a collective; where a GPU runs this build, every rank gets its paths.
// Usage: mpirun -np N execution_paths_refusal_test   (N >= 2)
#include <cstdio>

#include "core/cuda_stream.h"
#include "mesh_test_main.h"
#include "pipeline/execution_paths.h"

namespace vgen {
namespace {

int run(int, char**, const DistEnv& env) {
  if (env.world_size < 2) fail("needs at least 2 ranks");
  ParallelConfig pc;
  pc.dp_size = env.world_size;
  Mesh mesh = make_mesh(pc, env);
  if (!start_execution_paths(parse_recipe("device: cpu\n", "cpu.yaml", {}), *mesh.world).is_null())
    fail("device: cpu has execution paths");
  const Recipe r = parse_recipe("device: cuda\n", "r.yaml", {});
  if (cuda_device_count() > 0) {
    const Json j = start_execution_paths(r, *mesh.world);
    if (!j.contains("gpu") || !j.contains("code") || j.value("nvlink_domain_spans_hosts", std::string()) != "unknown")
      fail("incomplete execution paths: " + j.dump());
    mesh.world->barrier();
    if (env.world_rank == 0) std::printf("execution paths on %d ranks: %s: PASS\n", env.world_size, j.dump().c_str());
    return 0;
  }
  try {
    start_execution_paths(r, *mesh.world);
  } catch (const Error& e) {
    const std::string m = e.message();
    if (e.code() != ExitCode::kNoDevice) fail("wrong exit code: " + m);
    for (const std::string& f : {std::string("r.yaml: device: cuda: rank 0's GPU cannot run this build"),
                                 fmt::format("; {} ranks cannot run it: 0, 1", env.world_size)})
      if (m.find(f) == std::string::npos) fail("'" + f + "' not in: " + m);
    mesh.world->barrier();  // every rank got here: no rank was left waiting
    if (env.world_rank == 0) std::printf("refused on %d ranks with: %s: PASS\n", env.world_size, m.c_str());
    return 0;
  }
  fail("device: cuda without a usable GPU was not refused");
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
