// Shared harness of the mpirun test programs (attention_parallel_test, device_attention_test,
// vae_parallel_test): a failure names the rank and aborts the job (no other rank waits), mesh flags
// parse into a ParallelConfig, and main() catches errors once.
#pragma once
#include <cstdio>
#include <exception>
#include <string>

#include "core/error.h"
#include "dist/bootstrap.h"
#include "io/recipe.h"

namespace vgen {

[[noreturn]] inline void fail(const std::string& msg) {
  std::fprintf(stderr, "[rank %d] FAIL: %s\n", process_rank(), msg.c_str());
  std::fflush(stderr);
  dist_abort(1);
}

// --dp N --cfg N --ulysses N --ring N --attn2d RxC --async-ulysses 0|1 (every flag takes a value).
inline ParallelConfig parse_mesh_args(int argc, char** argv) {
  ParallelConfig pc;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) fail("missing value after " + a);
    std::string v = argv[++i];
    if (a == "--dp") pc.dp_size = std::stoi(v);
    else if (a == "--cfg") pc.cfg_size = std::stoi(v);
    else if (a == "--ulysses") pc.ulysses_size = std::stoi(v);
    else if (a == "--ring") pc.ring_size = std::stoi(v);
    else if (a == "--async-ulysses") pc.async_ulysses = v == "1";
    else if (a == "--attn2d") {
      auto x = v.find('x');
      if (x == std::string::npos) fail("--attn2d expects RxC, got " + v);
      pc.attn2d_size = {std::stoi(v.substr(0, x)), std::stoi(v.substr(x + 1))};
    } else {
      fail("unknown argument " + a);
    }
  }
  return pc;
}

// main() of a test program: MPI init, run(argc, argv, env) -> exit code, any error fails the job.
template <typename Run>
int mesh_test_main(int argc, char** argv, Run run) {
  DistEnv env = dist_init(&argc, &argv);
  int rc = 0;
  try {
    rc = run(argc, argv, env);
  } catch (const Error& e) {
    fail(e.message());
  } catch (const std::exception& e) {
    fail(e.what());
  }
  dist_finalize();
  return rc;
}

}  // namespace vgen
