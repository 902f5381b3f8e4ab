#include "core/log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace vgen {
namespace {
LogLevel g_level = [] {
  const char* e = std::getenv("VGEN_LOG_LEVEL");
  if (!e) return LogLevel::kInfo;
  std::string s(e);
  if (s == "debug") return LogLevel::kDebug;
  if (s == "warn") return LogLevel::kWarn;
  if (s == "error") return LogLevel::kError;
  return LogLevel::kInfo;
}();
bool g_all = std::getenv("VGEN_LOG_ALL_RANKS") != nullptr;
std::mutex g_mutex;
}  // namespace

void log_set_level(LogLevel level) { g_level = level; }
void log_set_all_ranks(bool all) { g_all = all; }

void log_write(LogLevel level, const std::string& msg, LogScope scope) {
  if (level < g_level) return;
  int rank = process_rank();
  if ((level <= LogLevel::kInfo || scope == LogScope::kJob) && !g_all && rank != 0) return;
  static const char* names[] = {"debug", "info", "warn", "error"};
  std::lock_guard<std::mutex> lock(g_mutex);
  FILE* f = level >= LogLevel::kWarn ? stderr : stdout;
  if (level == LogLevel::kInfo)
    std::fprintf(f, "[r%d] %s\n", rank, msg.c_str());
  else
    std::fprintf(f, "[r%d] %s: %s\n", rank, names[int(level)], msg.c_str());
  std::fflush(f);
}

}  // namespace vgen
