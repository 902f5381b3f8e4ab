#include "io/diffusers_dir.h"

#include <filesystem>

namespace vgen {
namespace fs = std::filesystem;

DiffusersDir::DiffusersDir(const std::string& root) : root_(root) {
  VGEN_CHECK(fs::is_directory(root), ExitCode::kModel, "model directory {} does not exist", root);
  std::string idx = (fs::path(root) / "model_index.json").string();
  VGEN_CHECK(fs::is_regular_file(idx), ExitCode::kModel,
             "{} is not a Diffusers pipeline directory (no model_index.json)", root);
  index_ = read_json_file(idx, ExitCode::kModel);
}

bool DiffusersDir::has_component(const std::string& name) const {
  if (!index_.contains(name)) return false;
  const Json& v = index_[name];
  if (v.is_null()) return false;
  if (v.is_array() && (v.empty() || v[0].is_null())) return false;
  return true;
}

std::string DiffusersDir::component_path(const std::string& name) const {
  VGEN_CHECK(has_component(name), ExitCode::kModel, "{}: model_index.json has no component '{}'", root_, name);
  std::string p = (fs::path(root_) / name).string();
  VGEN_CHECK(fs::is_directory(p), ExitCode::kModel, "{}: component folder '{}' is missing", root_, name);
  return p;
}

Json DiffusersDir::component_config(const std::string& name) const {
  std::string dir = component_path(name);
  for (const char* f : {"config.json", "scheduler_config.json", "tokenizer_config.json"}) {
    std::string p = (fs::path(dir) / f).string();
    if (fs::is_regular_file(p)) return read_json_file(p, ExitCode::kModel);
  }
  VGEN_THROW(ExitCode::kModel, "{}: component '{}' has no config.json", root_, name);
}

}  // namespace vgen
