#include "core/device_fault.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace vgen {
namespace {

thread_local std::vector<std::string> t_phases;
std::atomic<bool> g_context{false};
std::mutex g_advisor_mu;
DeviceOomAdvisor& advisor() {
  static DeviceOomAdvisor* a = new DeviceOomAdvisor();
  return *a;
}

std::string size_text(double b) {
  if (b >= double(1ull << 30)) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
  if (b >= double(1ull << 20)) return fmt::format("{:.2f} MiB", b / double(1ull << 20));
  return fmt::format("{:.1f} KiB", b / 1024.0);
}

int current_gpu() {
#ifdef VGEN_WITH_CUDA
  int d = -1;
  if (cudaGetDevice(&d) == cudaSuccess) return d;
  (void)cudaGetLastError();
#endif
  return -1;
}

std::string gpu_name() {
  const int d = current_gpu();
  return d >= 0 ? fmt::format("GPU {}", d) : std::string("its GPU");
}

DeviceOomAdvice advise(size_t total) {
  DeviceOomAdvisor a;
  {
    std::lock_guard<std::mutex> lk(g_advisor_mu);
    a = advisor();
  }
  if (!a) return {};
  try {
    return a(total);
  } catch (const std::exception& e) {
    return {0, fmt::format("(no plan estimate: {})", e.what())};
  }
}

// "load", "step" or "step:N", optionally "@RANK": whether it names `site` (and `step`) on this rank.
bool hook_matches(const char* env, const char* site, int step, std::string* spec) {
  const char* v = std::getenv(env);
  if (!v || !*v) return false;
  std::string s(v);
  *spec = s;
  int rank = -1;
  if (size_t at = s.find('@'); at != std::string::npos) {
    rank = std::atoi(s.c_str() + at + 1);
    s = s.substr(0, at);
  }
  if (rank >= 0 && rank != process_rank()) return false;
  int want_step = 1;
  if (size_t colon = s.find(':'); colon != std::string::npos) {
    want_step = std::atoi(s.c_str() + colon + 1);
    s = s.substr(0, colon);
  }
  if (s != site) return false;
  return std::string(site) != "step" || step == want_step;
}

}  // namespace

DeviceAllocPhase::DeviceAllocPhase(std::string what) { t_phases.push_back(std::move(what)); }
DeviceAllocPhase::~DeviceAllocPhase() { t_phases.pop_back(); }
std::string DeviceAllocPhase::current() {
  std::string s;
  for (auto& p : t_phases) s += (s.empty() ? "" : ": ") + p;
  return s;
}

void set_device_oom_advisor(DeviceOomAdvisor a) {
  std::lock_guard<std::mutex> lk(g_advisor_mu);
  advisor() = std::move(a);
}

[[noreturn]] void throw_device_oom(const std::string& what, size_t requested, size_t free_bytes, size_t total_bytes,
                                   const std::string& held) {
  const std::string phase = DeviceAllocPhase::current();
  std::string msg = fmt::format("out of device memory on {}{}: {}{} failed; the GPU has {} free of {}{}{}.",
                                gpu_name(), phase.empty() ? "" : " while " + phase, what,
                                requested ? fmt::format(" of {} ({} bytes)", size_text(double(requested)), requested) : "",
                                size_text(double(free_bytes)), size_text(double(total_bytes)), held.empty() ? "" : "; ", held);
  const DeviceOomAdvice a = advise(total_bytes);
  if (!a.text.empty()) msg += " " + a.text;
  throw DeviceOutOfMemory(msg, requested, free_bytes, total_bytes);
}

bool cuda_error_is_sticky(int code) {
#ifdef VGEN_WITH_CUDA
  switch (cudaError_t(code)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
#else
  (void)code;
  return false;
#endif
}

[[noreturn]] void throw_device_fault(const std::string& error_name, const std::string& error_text,
                                     const std::string& what) {
  VGEN_THROW(ExitCode::kDistributed,
             "sticky CUDA error on {}: {} ({}) in {}; this rank's GPU context is unusable, ending the job (exit 8)",
             gpu_name(), error_name, error_text, what.empty() ? std::string("a CUDA call") : what);
}

void device_fault_note_context() { g_context.store(true, std::memory_order_relaxed); }

std::string cuda_sticky_error() {
#ifdef VGEN_WITH_CUDA
  if (!g_context.load(std::memory_order_relaxed)) return "";
  // A sticky error is returned by every later call: a query of the legacy stream does not block.
  cudaError_t e = cudaPeekAtLastError();
  if (!cuda_error_is_sticky(int(e))) e = cudaStreamQuery(nullptr);
  if (cuda_error_is_sticky(int(e))) return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
#endif
  return "";
}

void device_fault_inject(const char* site, int step) {
  std::string spec;
  if (hook_matches("VGEN_INJECT_CUDA_FAULT", site, step, &spec))
    throw_device_fault("cudaErrorIllegalAddress", "an illegal memory access was encountered",
                       fmt::format("denoising step {} (injected by VGEN_INJECT_CUDA_FAULT={})", step, spec));
  if (!hook_matches("VGEN_INJECT_OOM", site, step, &spec)) return;
  // A simulated GPU with 80% of the plan's estimate: the recipe does not fit as it is.
  const DeviceOomAdvice est = advise(0);
  const size_t total = est.estimate_bytes > 0 ? size_t(est.estimate_bytes * 0.8) : size_t(16) << 30;
  throw_device_oom(fmt::format("an allocation (injected by VGEN_INJECT_OOM={})", spec), total / 8, total / 16, total,
                   fmt::format("simulated GPU of {} (80% of the plan's estimate)", size_text(double(total))));
}

}  // namespace vgen
