// vgen::Error: every failure in lib/ is an exception carrying an exit code, the rank and the host.
#pragma once
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace vgen {

// Documented process exit codes (README "Exit codes").
enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,       // a bug or an unexpected failure
  kUsage = 2,          // bad command line
  kRecipe = 3,         // recipe: malformed YAML, unknown key, wrong type, out of range, mesh mismatch
  kModel = 4,          // model directory, component, config or safetensors problem
  kInput = 5,          // prompt file, initial latents or fixture problem
  kOutput = 6,         // output directory not writable, MP4 encoding failed
  kPromptsFailed = 7,  // the batch finished but some prompts failed
  kDistributed = 8,    // MPI/NCCL failure or a peer rank died
  kGoldenFailed = 9,   // `vgen golden`: at least one case failed
  kCompareFailed = 10, // `vgen compare`: a video beyond a bound, not finite, or on one side only
  kDeviceOutOfMemory = 11,  // out of GPU memory at load or in a step (core/device_fault.h), or the plan's
                            // estimate beyond the GPU's free memory before the load
  kNoDevice = 12,      // device: cuda on a host where the CUDA runtime finds no usable GPU (core/device_probe.h)
  kInterrupted = 130,  // SIGINT/SIGTERM
};

// Identity of this process, set once by the MPI bootstrap; used in every error message.
void set_process_identity(int rank, const std::string& host);
int process_rank();
const std::string& process_host();

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& msg);
  ExitCode code() const { return code_; }
  int rank() const { return rank_; }
  const std::string& host() const { return host_; }
  const std::string& message() const { return msg_; }

 private:
  ExitCode code_;
  int rank_;
  std::string host_;
  std::string msg_;
};

}  // namespace vgen

#define VGEN_THROW(code, ...) throw ::vgen::Error((code), ::fmt::format(__VA_ARGS__))
#define VGEN_CHECK(cond, code, ...) \
  do {                              \
    if (!(cond)) VGEN_THROW(code, __VA_ARGS__); \
  } while (0)
// Internal invariant: a failure is a bug.
#define VGEN_ASSERT(cond, ...)                                                                  \
  do {                                                                                          \
    if (!(cond))                                                                                \
      throw ::vgen::Error(::vgen::ExitCode::kInternal,                                          \
                          ::fmt::format("{}:{}: assertion `{}` failed: {}", __FILE__, __LINE__, \
                                        #cond, ::fmt::format(__VA_ARGS__)));                    \
  } while (0)
