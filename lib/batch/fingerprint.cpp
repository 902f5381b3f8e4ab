#include "batch/fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/hash.h"
#include "core/version.h"
#include "io/diffusers_dir.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// Files above this are not read whole (a stray .bin checkpoint beside the safetensors): name and
// size only.
constexpr uintmax_t kMaxHashedFile = uintmax_t(64) << 20;
constexpr uint64_t kMaxHeader = uint64_t(100) << 20;  // the safetensors reader's own bound

// A hash of a safetensors file's 8-byte length and its JSON header: names, dtypes, shapes and
// offsets of every tensor, and its metadata. "unreadable" when the header cannot be read (preflight
// has refused such a file already).
std::string safetensors_header_hash(const std::string& path, uintmax_t size) {
  std::ifstream f(path, std::ios::binary);
  unsigned char len[8] = {};
  if (!f.read(reinterpret_cast<char*>(len), 8)) return "unreadable";
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  if (n > kMaxHeader || n > size - 8) return "unreadable";
  std::string bytes(8 + n, '\0');
  std::copy(len, len + 8, bytes.begin());
  if (!f.read(bytes.data() + 8, std::streamsize(n))) return "unreadable";
  return content_hash(bytes);
}

Json file_identity(const fs::path& p) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(p, ec);
  if (ec) return {{"bytes", nullptr}, {"hash", "unreadable"}};
  Json j = {{"bytes", size}};
  if (p.extension() == ".safetensors") j["header_hash"] = safetensors_header_hash(p.string(), size);
  else if (size <= kMaxHashedFile) j["content_hash"] = file_content_hash(p.string());
  return j;
}

// Every visible regular file of a component folder by name (sorted: a Json object's keys are).
Json component_identity(const std::string& dir) {
  Json files = Json::object();
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || !it->is_regular_file()) continue;
    files[name] = file_identity(it->path());
  }
  return files;
}

Json model_identity(const std::string& root) {
  DiffusersDir dir(root);
  Json comps = Json::object();
  for (auto& [name, value] : dir.model_index().items()) {
    // Components are ["library", "class"] pairs; other keys (expand_timesteps, boundary_ratio)
    // are pipeline settings, hashed with model_index.json.
    if (name.empty() || name[0] == '_' || !value.is_array() || !dir.has_component(name)) continue;
    comps[name] = component_identity(dir.component_path(name));
  }
  return {{"model_index.json", file_content_hash((fs::path(root) / "model_index.json").string())},
          {"components", comps}};
}

Json lora_identity(const std::vector<LoraEntry>& loras) {
  Json arr = Json::array();
  for (const LoraEntry& l : loras) {
    Json j = file_identity(l.path);
    j["file"] = fs::path(l.path).filename().string();
    j["scale"] = l.scale;
    j["target"] = lora_target_name(l.target);
    arr.push_back(j);
  }
  return arr;
}

}  // namespace

Json job_fingerprint_inputs(const Recipe& recipe) {
  const std::string& lat = recipe.generation.initial_latents;
  Json latents = nullptr;
  if (!lat.empty()) latents = {{"bytes", fs::file_size(lat)}, {"content_hash", file_content_hash(lat)}};
  return {{"vgen_version", vgen_version()},
          {"model", model_identity(recipe.model)},
          {"lora", lora_identity(recipe.lora)},
          {"initial_latents", latents}};
}

VideoFingerprints::VideoFingerprints(const Recipe& recipe, Json job_inputs)
    : job_inputs_(std::move(job_inputs)), job_hash_(content_hash(job_inputs_.dump())) {
  const Json r = recipe_to_json(recipe);
  settings_ = r["generation"];
  for (const char* per_video : {"seed", "num_frames", "negative_prompt", "initial_latents"})
    settings_.erase(per_video);  // the prompt line's values, and the latents file by content (job part)
  if (recipe.generation.image_max_area == 0)
    settings_.erase("image_max_area");  // off: the settings of a vgen without the key
  settings_["precision"] = r["precision"];
  // fp8_config is ignored under another precision, so it changes nothing there.
  settings_["fp8_config"] = recipe.is_fp8() ? r["fp8_config"] : Json(nullptr);
  // fp8_config.scaling at its default is left out: the fingerprints made before the key hold.
  if (recipe.is_fp8() && recipe.fp8.scaling == Fp8Scaling::kAuto) settings_["fp8_config"].erase("scaling");
  if (recipe.is_fp4()) settings_["fp4_config"] = r["fp4_config"];  // absent otherwise: older fingerprints hold
  settings_["first_block_threshold"] = recipe.cache.first_block_threshold;
  settings_["fps"] = r["output"]["fps"];  // null: the model's native fps (its configs are in the job part)
  settings_["crf"] = recipe.output.crf;
}

Json VideoFingerprints::video_inputs(const std::string& prompt, const std::string& negative_prompt,
                                     int64_t seed, int num_frames, const Json& images) const {
  Json j = settings_;
  j["prompt"] = prompt;
  j["negative_prompt"] = negative_prompt;
  j["seed"] = seed;
  j["num_frames"] = num_frames;
  for (auto& [key, image] : images.items()) j[key] = image;
  return j;
}

Json image_fingerprint_inputs(const PromptItem& item) {
  Json j = Json::object();
  for (const auto& [key, image] : {std::pair{"image", &item.image}, std::pair{"last_image", &item.last_image}})
    if (*image) j[key] = {{"bytes", (*image)->bytes}, {"content_hash", (*image)->content_hash}};
  return j;
}

std::string VideoFingerprints::fingerprint(const Json& video_inputs) const {
  // Text that is not UTF-8 (a prompt) hashes as written with U+FFFD, as the reports write it.
  const Json both = {{"job", job_hash_}, {"video", video_inputs}};
  return content_hash(both.dump(-1, ' ', false, Json::error_handler_t::replace));
}

Json VideoFingerprints::sidecar(const Json& video_inputs) const {
  return {{"fingerprint", fingerprint(video_inputs)},
          {"vgen_version", vgen_version()},
          {"inputs", {{"job", job_inputs_}, {"video", video_inputs}}}};
}

std::string changed_inputs(const Json& old_inputs, const Json& new_inputs) {
  auto part = [](const Json& j, const std::string& k) { return j.is_object() && j.contains(k) ? j[k] : Json(nullptr); };
  std::vector<std::string> names;
  for (const char* side : {"job", "video"}) {
    const Json was = part(old_inputs, side), now = part(new_inputs, side);
    if (!now.is_object()) continue;
    for (auto& [k, v] : now.items()) {
      const Json old_v = part(was, k);
      if (old_v == v) continue;
      // A number, switch or unset value reads best with both values; text and files by name.
      const bool show = std::string(side) == "video" && !v.is_structured() && !v.is_string() &&
                        !old_v.is_structured() && !old_v.is_string();
      names.push_back(show ? k + " " + old_v.dump() + " → " + v.dump() : k == "vgen_version" ? "vgen version" : k);
    }
  }
  if (names.empty()) return "inputs";
  std::string s = names[0];
  for (size_t i = 1; i < names.size(); ++i) s += ", " + names[i];
  return s;
}

}  // namespace vgen
