// A Diffusers pipeline directory (what WanPipeline.save_pretrained writes): model_index.json and
// one folder per component with its config.json (scheduler: scheduler_config.json).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/json.h"

namespace vgen {

class DiffusersDir {
 public:
  explicit DiffusersDir(const std::string& root);  // throws kModel if missing or not a pipeline dir
  const std::string& root() const { return root_; }
  const Json& model_index() const { return index_; }
  // model_index.json's `_class_name` (the pipeline), or "" when it has none.
  std::string pipeline_class() const {
    return index_.contains("_class_name") && index_["_class_name"].is_string()
               ? index_["_class_name"].get<std::string>() : std::string();
  }
  bool has_component(const std::string& name) const;  // listed in model_index.json and not null
  std::string component_path(const std::string& name) const;  // throws kModel naming the component
  Json component_config(const std::string& name) const;  // config.json / scheduler_config.json

 private:
  std::string root_;
  Json index_;
};

// `v` as T (bool, an integer or floating-point type, std::string, or a std::vector of those) when
// it has that JSON type and fits T exactly: an integer in T's range (a float only when integral),
// a finite float in T's range; false otherwise (nothing is truncated, wrapped or rounded to fit).
template <typename T>
bool json_as(const Json& v, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return false;
    *out = v.get<bool>();
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    using Lim = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > uint64_t(Lim::max())) return false;
      *out = T(u);
    } else if (v.is_number_integer()) {
      const int64_t i = v.get<int64_t>();
      if (i < int64_t(Lim::min()) || (i > 0 && uint64_t(i) > uint64_t(Lim::max()))) return false;
      *out = T(i);
    } else if (v.is_number_float()) {
      // double(max) + 1 is exact (a power of two), so every d below it converts.
      const double d = v.get<double>();
      if (!(d >= double(Lim::min()) && d < double(Lim::max()) + 1.0) || d != std::trunc(d)) return false;
      *out = T(d);
    } else {
      return false;
    }
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return false;
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > double(std::numeric_limits<T>::max())) return false;
    *out = T(d);
    return true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return false;
    *out = v.get<std::string>();
    return true;
  } else {
    if (!v.is_array()) return false;
    T r;
    for (const Json& e : v) {
      typename T::value_type x{};
      if (!json_as(e, &x)) return false;
      r.push_back(x);
    }
    *out = std::move(r);
    return true;
  }
}

// Typed reads of optional config keys (absent or null → default), with errors naming the key and,
// when given, the file (`source`).
template <typename T>
T json_get_or(const Json& j, const std::string& key, T dflt, const std::string& source = "") {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return dflt;
  T v{};
  if (!json_as(j[key], &v))
    VGEN_THROW(ExitCode::kModel, "{}{}config key '{}' has the wrong type or is out of range: {}", source,
               source.empty() ? "" : ": ", key, j[key].dump());
  return v;
}

}  // namespace vgen
