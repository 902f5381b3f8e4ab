// The strict YAML readers of the recipe parser (io/recipe.cpp): typed scalars that refuse quoted
// numbers and non-UTF-8 strings, enums by name, lists, and mappings whose every key is known (an
// unknown one suggests the nearest); errors name the file and line, or the `--set` of the value.
// Internal to io/.
#pragma once
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/named.h"
#include "core/error.h"
#include "core/utf8.h"

namespace vgen::recipe_yaml {

using Setter = std::function<void(const YAML::Node&, const std::string& path)>;
struct Key {
  std::string name;
  Setter set;
  bool section = false;  // a nested mapping (its keys come from section_keys)
};

// Where a value came from, for messages: a file line, or the `--set` that set it.
class Ctx {
 public:
  std::string file;
  std::map<std::string, std::string> overrides;  // key path → "key=value" as given

  [[noreturn]] void fail(const std::string& path, const YAML::Node& n, const std::string& msg) const {
    VGEN_THROW(ExitCode::kRecipe, "{}{}: {}", where(path, n), path, msg);
  }
  std::string where(const std::string& path, const YAML::Node& n) const {
    for (auto& [p, text] : overrides)
      if (path == p || path.rfind(p + ".", 0) == 0 || path.rfind(p + "[", 0) == 0)
        return fmt::format("--set {}: ", text);
    if (n.IsDefined() && n.Mark().line >= 0) return fmt::format("{}:{}: ", file, n.Mark().line + 1);
    return file + ": ";
  }
};

inline std::string kind_of(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "null";
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  if (n.Tag() == "!") return fmt::format("the string \"{}\"", n.Scalar());
  return fmt::format("'{}'", n.Scalar());
}

// Numbers and booleans must be plain scalars: a quoted "720" is a string, not a height.
template <typename T>
T scalar_as(const Ctx& c, const YAML::Node& n, const std::string& path, const char* what) {
  if (!n.IsScalar() || n.Tag() == "!") c.fail(path, n, fmt::format("expected {}, got {}", what, kind_of(n)));
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    c.fail(path, n, fmt::format("expected {}, got {}", what, kind_of(n)));
  }
}

int64_t get_i64(const Ctx& c, const YAML::Node& n, const std::string& path) {
  return scalar_as<int64_t>(c, n, path, "an integer");
}
inline int get_int(const Ctx& c, const YAML::Node& n, const std::string& path) {
  int64_t v = get_i64(c, n, path);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    c.fail(path, n, fmt::format("{} is out of range", v));
  return int(v);
}
inline int get_int_min(const Ctx& c, const YAML::Node& n, const std::string& path, int lo) {
  int v = get_int(c, n, path);
  if (v < lo) c.fail(path, n, fmt::format("must be >= {}, got {}", lo, v));
  return v;
}
inline double get_double(const Ctx& c, const YAML::Node& n, const std::string& path) {
  double v = scalar_as<double>(c, n, path, "a number");
  if (!std::isfinite(v)) c.fail(path, n, fmt::format("must be a finite number, got {}", n.Scalar()));
  return v;
}
inline std::optional<double> get_opt_double(const Ctx& c, const YAML::Node& n, const std::string& path) {
  if (n.IsNull()) return std::nullopt;
  return get_double(c, n, path);
}
inline bool get_bool(const Ctx& c, const YAML::Node& n, const std::string& path) {
  return scalar_as<bool>(c, n, path, "true or false");
}
inline std::string get_string(const Ctx& c, const YAML::Node& n, const std::string& path, bool null_ok = false) {
  if (null_ok && n.IsNull()) return "";
  if (!n.IsScalar()) c.fail(path, n, fmt::format("expected a string, got {}", kind_of(n)));
  if (const size_t bad = first_invalid_utf8(n.Scalar()); bad != std::string::npos)
    c.fail(path, n, fmt::format("not valid UTF-8 (byte {} of the value); save the recipe as UTF-8", bad + 1));
  return n.Scalar();
}
// A choice of `table` by its name; the message lists the names in the table's order.
template <typename E, size_t N>
E get_enum(const Ctx& c, const YAML::Node& n, const std::string& path, const Named<E> (&table)[N]) {
  std::string v = get_string(c, n, path);
  for (const Named<E>& x : table)
    if (v == x.name) return x.value;
  std::string list;
  for (const Named<E>& x : table) list += (list.empty() ? "" : " | ") + std::string(x.name);
  c.fail(path, n, fmt::format("must be one of {}, got '{}'", list, v));
}

inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

inline std::string unknown_key_message(const std::string& key, const std::vector<Key>& keys) {
  std::string best, known;
  size_t best_d = 4;
  for (auto& k : keys) {
    known += (known.empty() ? "" : ", ") + k.name;
    size_t d = edit_distance(key, k.name);
    if (d < best_d) best_d = d, best = k.name;
  }
  if (!best.empty()) return fmt::format("unknown key (did you mean '{}'?)", best);
  return fmt::format("unknown key (known keys: {})", known);
}

inline std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

inline void parse_map(const Ctx& c, const YAML::Node& n, const std::string& path, const std::vector<Key>& keys) {
  if (n.IsNull()) return;  // an empty section keeps the defaults
  if (!n.IsMap()) c.fail(path.empty() ? "(root)" : path, n, fmt::format("expected a mapping, got {}", kind_of(n)));
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) c.fail(path.empty() ? "(root)" : path, it->first, "keys must be strings");
    std::string key = it->first.Scalar();
    std::string kp = join_path(path, key);
    if (!seen.insert(key).second) c.fail(kp, it->first, "duplicate key");
    auto k = std::find_if(keys.begin(), keys.end(), [&](const Key& x) { return x.name == key; });
    if (k == keys.end()) c.fail(kp, it->first, unknown_key_message(key, keys));
    k->set(it->second, kp);
  }
}

// A list whose items `item(node, path)` reads (one item alone may stand without brackets; null:
// none); `what` names the list in the error for another kind of node.
template <typename F>
auto get_list(const Ctx& c, const YAML::Node& n, const std::string& p, const char* what, F&& item) {
  std::vector<decltype(item(n, p))> out;
  if (n.IsScalar()) {
    out.push_back(item(n, p));
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) out.push_back(item(n[i], fmt::format("{}[{}]", p, i)));
  } else if (!n.IsNull()) {
    c.fail(p, n, fmt::format("expected {}, got {}", what, kind_of(n)));
  }
  return out;
}

// Transformer block indices (fp8_config.bf16_blocks, bf16_gemm_blocks).
inline std::vector<int> get_block_list(const Ctx& c, const YAML::Node& n, const std::string& p) {
  return get_list(c, n, p, "a list of block indices (integers; -1 the last block)",
                  [&](const YAML::Node& v, const std::string& q) { return get_int(c, v, q); });
}

inline std::vector<std::string> get_string_list(const Ctx& c, const YAML::Node& n, const std::string& p) {
  return get_list(c, n, p, "a list of strings",
                  [&](const YAML::Node& v, const std::string& q) { return get_string(c, v, q); });
}

}  // namespace vgen::recipe_yaml
