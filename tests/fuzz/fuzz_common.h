// Shared by the fuzz targets (libFuzzer, ASan + UBSan). A parser may reject an input only with a
// vgen::Error carrying one of the documented exit codes its callers expect; an internal error
// (kInternal: a failed assertion), another exit code, any other exception, a crash, a hang, a leak
// or a sanitizer report is a finding, and the target aborts so that libFuzzer saves the input.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <typeinfo>

#include "core/error.h"
#include "core/log.h"

namespace vgen::fuzz {

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Runs f(); returns true when it returned, false when it threw a vgen::Error with a code in `allowed`.
template <typename F>
bool expect_documented(std::initializer_list<ExitCode> allowed, F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    for (ExitCode c : allowed)
      if (e.code() == c) return false;
    finding("vgen::Error with an unexpected exit code",
            std::to_string(int(e.code())) + ": " + e.message());
  } catch (const std::exception& e) {
    finding(typeid(e).name(), e.what());
  } catch (...) {
    finding("non-standard exception", "");
  }
}

inline void check(bool cond, const char* what, const std::string& detail = "") {
  if (!cond) finding(what, detail);
}

// The scratch directory of this process, removed at exit; fuzz inputs that must be files go
// there. $VGEN_FUZZ_SCRATCH when set (run_fuzz.sh: the same path on every run, so that paths the
// parsers compare, and with them the fuzzer's mutations, repeat), else one per process in memory
// (/dev/shm) where there is one: rewriting and mapping a file on disk per input is ~10x slower.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::error_code ec;
    if (const char* e = std::getenv("VGEN_FUZZ_SCRATCH"); e && *e) {
      std::filesystem::create_directories(e);
      return std::filesystem::path(e);
    }
    std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    std::filesystem::path d = base / ("vgen_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  static const int registered = std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  });
  (void)registered;
  return dir;
}

inline void write_file(const std::filesystem::path& p, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(p.c_str(), "wb");
  check(f != nullptr, "cannot write a scratch file", p.string());
  if (size) check(std::fwrite(data, 1, size, f) == size, "short write", p.string());
  std::fclose(f);
}

// Warnings about rejected inputs would flood the fuzzer's output.
inline void quiet_logs() { log_set_level(LogLevel::kError); }

}  // namespace vgen::fuzz
