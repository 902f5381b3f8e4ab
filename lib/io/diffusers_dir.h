// A Diffusers pipeline directory (what WanPipeline.save_pretrained writes): model_index.json and
// one folder per component with its config.json (scheduler: scheduler_config.json).
#pragma once
#include <string>

#include "core/json.h"

namespace vgen {

class DiffusersDir {
 public:
  explicit DiffusersDir(const std::string& root);  // throws kModel if missing or not a pipeline dir
  const std::string& root() const { return root_; }
  const Json& model_index() const { return index_; }
  bool has_component(const std::string& name) const;  // listed in model_index.json and not null
  std::string component_path(const std::string& name) const;  // throws kModel naming the component
  Json component_config(const std::string& name) const;  // config.json / scheduler_config.json

 private:
  std::string root_;
  Json index_;
};

// Typed reads of optional config keys (absent or null → default), with errors naming the key and,
// when given, the file (`source`).
template <typename T>
T json_get_or(const Json& j, const std::string& key, T dflt, const std::string& source = "") {
  if (!j.contains(key) || j[key].is_null()) return dflt;
  try {
    return j[key].get<T>();
  } catch (const std::exception&) {
    VGEN_THROW(ExitCode::kModel, "{}{}config key '{}' has the wrong type: {}", source, source.empty() ? "" : ": ", key,
               j[key].dump());
  }
}

}  // namespace vgen
