#include "core/error.h"

#include <unistd.h>

namespace vgen {
namespace {
int g_rank = 0;
std::string& host_storage() {
  static std::string host = [] {
    char buf[256] = {0};
    if (gethostname(buf, sizeof(buf) - 1) != 0) return std::string("unknown-host");
    return std::string(buf);
  }();
  return host;
}
}  // namespace

void set_process_identity(int rank, const std::string& host) {
  g_rank = rank;
  if (!host.empty()) host_storage() = host;
}
int process_rank() { return g_rank; }
const std::string& process_host() { return host_storage(); }

Error::Error(ExitCode code, const std::string& msg)
    : std::runtime_error(fmt::format("[rank {} on {}] {}", g_rank, host_storage(), msg)),
      code_(code),
      rank_(g_rank),
      host_(host_storage()),
      msg_(msg) {}

}  // namespace vgen
