// Typed reads of scheduler config keys with errors naming the config and the key (kModel).
#pragma once
#include <optional>
#include <string>

#include "core/json.h"

namespace vgen::sched_detail {

template <typename T>
T get_or(const Json& j, const std::string& key, T dflt, const std::string& source) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return dflt;
  try {
    return j[key].get<T>();
  } catch (const std::exception&) {
    VGEN_THROW(ExitCode::kModel, "{}: key '{}' has the wrong type: {}", source, key, j[key].dump());
  }
}

// A key that must be absent, null, false or equal to `ok` for the supported mode.
inline void require_off(const Json& j, const std::string& key, const std::string& source) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return;
  if (j[key].is_boolean() && !j[key].get<bool>()) return;
  VGEN_THROW(ExitCode::kModel, "{}: '{}' = {} is not supported", source, key, j[key].dump());
}

}  // namespace vgen::sched_detail
