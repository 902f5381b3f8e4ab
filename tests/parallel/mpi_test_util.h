// Minimal checks for tests that run under mpirun: every rank runs every test; a failed check
// prints the rank and location and calls MPI_Abort so the other ranks never hang.
#pragma once
#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>
#include <string>

#include "core/error.h"

namespace vgen::ptest {

[[noreturn]] inline void fail(const char* file, int line, const char* cond, const std::string& msg) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "[rank %d] FAILED %s:%d: %s %s\n", rank, file, line, cond, msg.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// Runs one test on every rank; rank 0 reports it once all ranks have passed it.
template <typename F>
void run_test(const char* name, F&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    fail(__FILE__, __LINE__, name, fmt::format("threw: {}", e.what()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("[ok] %s\n", name), std::fflush(stdout);
}

}  // namespace vgen::ptest

#define PCHECK(cond, ...)                                                                       \
  do {                                                                                          \
    if (!(cond)) ::vgen::ptest::fail(__FILE__, __LINE__, #cond, ::fmt::format("" __VA_ARGS__)); \
  } while (0)

// `expr` must throw vgen::Error with exit code `code`.
#define PCHECK_THROWS(expr, want_code)                                                                    \
  do {                                                                                               \
    bool thrown_ = false;                                                                            \
    try {                                                                                            \
      expr;                                                                                          \
    } catch (const ::vgen::Error& e_) {                                                              \
      thrown_ = true;                                                                                \
      if (e_.code() != (want_code))                                                                     \
        ::vgen::ptest::fail(__FILE__, __LINE__, #expr, ::fmt::format("wrong code: {}", e_.what()));   \
    }                                                                                                \
    if (!thrown_) ::vgen::ptest::fail(__FILE__, __LINE__, #expr, "did not throw");                   \
  } while (0)
