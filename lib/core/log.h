// Rank-prefixed logging through fmt. By default only world rank 0 prints info lines;
// warnings and errors print on every rank.
#pragma once
#include <fmt/format.h>

#include <string>

namespace vgen {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void log_set_level(LogLevel level);
void log_set_all_ranks(bool all);  // info lines from every rank, not only rank 0
void log_write(LogLevel level, const std::string& msg);

template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kWarn, fmt::format(f, std::forward<Args>(args)...));
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
