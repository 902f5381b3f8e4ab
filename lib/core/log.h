// Rank-prefixed logging through fmt. By default only world rank 0 prints info lines; errors print on
// every rank. A warning is either the rank's own (log_warn: its hook, its writer's failed video, its
// cache entry; every rank that meets it prints it, with its rank) or the job's (log_warn_job: the
// recipe, the checkpoint, the prompts, the build, met alike by every rank that reads them; world
// rank 0 prints it, so a job says it once). --log-all-ranks prints both kinds on every rank.
#pragma once
#include <fmt/format.h>

#include <string>

namespace vgen {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void log_set_level(LogLevel level);
void log_set_all_ranks(bool all);  // info lines from every rank, not only rank 0
// Who prints a line: every rank that writes it, or world rank 0 alone (info lines and job warnings).
enum class LogScope { kRank, kJob };
void log_write(LogLevel level, const std::string& msg, LogScope scope = LogScope::kRank);

template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warn_job(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kWarn, fmt::format(f, std::forward<Args>(args)...), LogScope::kJob);
}
template <typename... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kError, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace vgen
