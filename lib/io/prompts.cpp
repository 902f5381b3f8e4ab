#include "io/prompts.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/json.h"
#include "core/log.h"
#include "core/utf8.h"
#include "io/recipe.h"

namespace vgen {
namespace fs = std::filesystem;

std::string slugify(const std::string& text, size_t max_len) {
  std::string s;
  bool dash = false;
  for (unsigned char ch : text) {
    if (std::isalnum(ch) && ch < 128) {
      if (dash && !s.empty()) s += '-';
      dash = false;
      s += char(std::tolower(ch));
      if (s.size() >= max_len) break;
    } else {
      dash = true;
    }
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "prompt" : s;
}

std::string output_stem(int index, const std::string& slug) { return fmt::format("{:04d}-{}", index, slug); }

std::string PromptItem::stem() const { return output_stem(index, name); }

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n\f\v");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n\f\v");
  return s.substr(b, e - b + 1);
}

bool skip_line(const std::string& t) { return t.empty() || t[0] == '#'; }

// A problem of the raw line that no prompt may have (checked before parsing): longer than
// kMaxPromptLineBytes, or a NUL byte (text, never a C string's end). "" when none.
std::string raw_line_problem(const std::string& line) {
  if (line.size() > kMaxPromptLineBytes)
    return fmt::format("the line is {} bytes, longer than the {} bytes (64 KiB) a prompt line may hold", line.size(),
                       kMaxPromptLineBytes);
  if (const size_t nul = line.find('\0'); nul != std::string::npos)
    return fmt::format("the line holds a NUL byte (byte {} of the line); a prompt is text without NUL bytes", nul + 1);
  return "";
}

// What a refused line is reported as: its start, valid UTF-8, without NUL bytes.
std::string reported_text(const std::string& line) {
  std::string t = line.substr(0, std::min<size_t>(line.size(), 200));
  for (char& ch : t)
    if (ch == '\0') ch = ' ';
  return replace_invalid_utf8(t) + (t.size() < line.size() ? "..." : "");
}

// A line's image path (`key`: "image" or "last_image"): a non-empty string without NUL bytes,
// resolved against `base` (the prompt file's directory) when relative. "" when fine.
std::string parse_image_path(const Json& j, const char* key, const fs::path& base, std::optional<PromptImage>& out) {
  if (!j.contains(key) || j[key].is_null()) return "";
  const Json& v = j[key];
  if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().find('\0') != std::string::npos)
    return fmt::format("'{}' must be a non-empty string without NUL bytes (the path of a PNG or JPEG file), got {}",
                       key, v.dump(-1, ' ', false, Json::error_handler_t::replace));
  const fs::path p(v.get<std::string>());
  out.emplace().path = (p.is_absolute() ? p : base / p).lexically_normal().string();
  return "";
}

// The line's `image` and `last_image`; a last frame alone is refused (image-to-video starts from the
// first frame, docs/batch.md "Image inputs"). "" when fine.
std::string parse_images(const Json& j, const fs::path& base, PromptItem& it) {
  if (std::string e = parse_image_path(j, "image", base, it.image); !e.empty()) return e;
  if (std::string e = parse_image_path(j, "last_image", base, it.last_image); !e.empty()) return e;
  if (it.last_image && !it.image)
    return fmt::format("'last_image' ({}) needs 'image' (the first frame): a line with a last frame alone cannot be "
                       "rendered",
                       it.last_image->path);
  return "";
}

// One JSONL line → item; problems go to item.error (the file stays usable). `base`: the prompt file's
// directory, for relative image paths.
void parse_json_item(const std::string& line, const fs::path& base, PromptItem& it) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const std::exception& e) {
    it.error = fmt::format("malformed JSON: {}", e.what());
    return;
  }
  if (!j.is_object()) {
    it.error = "expected a JSON object";
    return;
  }
  static const std::set<std::string> known = {"prompt", "negative_prompt", "seed",      "num_frames",
                                              "name",   "image",           "last_image"};
  for (auto& [k, v] : j.items()) {
    if (!known.count(k)) {
      it.error = fmt::format(
          "unknown key '{}' (known: prompt, negative_prompt, seed, num_frames, name, image, last_image)", k);
      return;
    }
  }
  if (!j.contains("prompt") || !j["prompt"].is_string() || trim(j["prompt"].get<std::string>()).empty()) {
    it.error = "'prompt' must be a non-empty string";
    return;
  }
  it.prompt = j["prompt"].get<std::string>();
  if (it.prompt.find('\0') != std::string::npos) {
    it.error = "'prompt' holds a NUL byte (\\u0000); a prompt is text without NUL bytes";
    return;
  }
  if (j.contains("negative_prompt") && !j["negative_prompt"].is_null()) {
    if (!j["negative_prompt"].is_string() || j["negative_prompt"].get<std::string>().find('\0') != std::string::npos) {
      it.error = "'negative_prompt' must be a string without NUL bytes";
      return;
    }
    it.negative_prompt = j["negative_prompt"].get<std::string>();
  }
  if (j.contains("seed") && !j["seed"].is_null()) {
    if (!j["seed"].is_number_integer() || (j["seed"].is_number_unsigned() && j["seed"].get<uint64_t>() > uint64_t(INT64_MAX))) {
      it.error = fmt::format("'seed' must be an integer, got {}", j["seed"].dump());
      return;
    }
    const int64_t seed = j["seed"].get<int64_t>();
    if (seed < 0) {  // as generation.seed: a seed is a number >= 0, never "random"
      it.error = fmt::format("'seed' must be an integer >= 0, got {}", seed);
      return;
    }
    it.seed = seed;
  }
  if (j.contains("num_frames") && !j["num_frames"].is_null()) {
    const Json& v = j["num_frames"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 100000) {
      it.error = fmt::format("'num_frames' must be a positive integer, got {}", v.dump());
      return;
    }
    int n = int(v.get<int64_t>());
    it.num_frames = round_num_frames(n);
    if (*it.num_frames != n)
      log_warn_job("prompt {} (line {}): num_frames {} is not of the form 4k+1; using {} (as diffusers does)", it.index,
                   it.line, n, *it.num_frames);
  }
  if (j.contains("name") && !j["name"].is_null()) {
    if (!j["name"].is_string() || trim(j["name"].get<std::string>()).empty()) {
      it.error = "'name' must be a non-empty string";
      return;
    }
    it.name = slugify(j["name"].get<std::string>());
  }
  it.error = parse_images(j, base, it);
}

}  // namespace

std::vector<PromptItem> parse_prompts(const std::string& text0, const std::string& path) {
  std::string text = text0;
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text = text.substr(3);  // UTF-8 BOM
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);

  bool jsonl = fs::path(path).extension() == ".jsonl";
  if (!jsonl) {
    for (auto& l : lines) {
      std::string t = trim(l);
      if (skip_line(t)) continue;
      jsonl = t[0] == '{';
      break;
    }
  }
  const fs::path base = fs::absolute(path).parent_path();  // image paths are relative to the prompt file
  std::vector<PromptItem> items;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string t = trim(lines[i]);
    if (skip_line(t)) continue;
    PromptItem it;
    it.index = int(items.size());
    it.line = int(i) + 1;
    if (const std::string why = raw_line_problem(t); !why.empty()) {
      it.prompt = reported_text(t);  // for the reports; never rendered
      it.error = fmt::format("{}:{}: {}", path, it.line, why);
      log_warn_job("{} (prompt {} will be marked failed)", it.error, it.index);
    } else if (jsonl) {
      parse_json_item(t, base, it);
      if (!it.error.empty()) {
        it.error = fmt::format("{}:{}: {}", path, it.line, it.error);
        log_warn_job("{} (prompt {} will be marked failed)", it.error, it.index);
      }
    } else if (const size_t bad = first_invalid_utf8(t); bad != std::string::npos) {
      // Kept (with U+FFFD in place of the bad bytes) so the reports can name it; never rendered.
      it.prompt = replace_invalid_utf8(t);
      it.error = fmt::format("{}:{}: the prompt is not valid UTF-8 (byte {} of the prompt); save the file as UTF-8",
                             path, it.line, bad + 1);
      log_warn_job("{} (prompt {} will be marked failed)", it.error, it.index);
    } else {
      it.prompt = t;
    }
    if (it.name.empty()) it.name = slugify(it.prompt);
    items.push_back(std::move(it));
  }
  return items;
}

std::vector<PromptItem> load_prompts(const std::string& path) {
  VGEN_CHECK(!path.empty(), ExitCode::kInput, "no prompt file: set `prompts:` in the recipe or pass --prompts");
  VGEN_CHECK(!fs::is_directory(path), ExitCode::kInput, "prompt file {} is a directory", path);
  std::ifstream f(path, std::ios::binary);
  VGEN_CHECK(f.good(), ExitCode::kInput, "cannot read prompt file {}", path);
  std::stringstream ss;
  ss << f.rdbuf();
  VGEN_CHECK(!f.bad(), ExitCode::kInput, "error reading prompt file {}", path);
  auto items = parse_prompts(ss.str(), path);
  VGEN_CHECK(!items.empty(), ExitCode::kInput, "prompt file {} holds no prompts", path);
  return items;
}

}  // namespace vgen
