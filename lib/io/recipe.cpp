// Strict YAML recipe parsing: every key is known, typed and range-checked; errors name the file,
// line and the full key path (or the `--set` that introduced the value).
#include "io/recipe.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "core/log.h"
#include "core/utf8.h"
#include "io/attention_tuning.h"
#include "io/recipe_yaml.h"

namespace vgen {
namespace fs = std::filesystem;

// Largest mesh a recipe may describe (far beyond any cluster; products of the sizes stay in int).
constexpr int64_t kMaxWorld = int64_t(1) << 24;

int round_num_frames(int n) {
  if (n % 4 == 1) return n;
  return std::max(1, n / 4 * 4 + 1);
}

namespace {

using namespace recipe_yaml;

std::vector<Key> generation_keys(const Ctx& c, GenerationConfig& g) {
  auto mult16 = [&c](const YAML::Node& n, const std::string& p) {
    int v = get_int(c, n, p);
    if (v <= 0 || v % 16 != 0) c.fail(p, n, fmt::format("must be a positive multiple of 16, got {}", v));
    return v;
  };
  return {
      {"height", [&, mult16](auto& n, auto& p) { g.height = mult16(n, p); }},
      {"width", [&, mult16](auto& n, auto& p) { g.width = mult16(n, p); }},
      {"num_frames",
       [&](auto& n, auto& p) {
         int v = get_int_min(c, n, p, 1);
         g.num_frames = round_num_frames(v);
         if (g.num_frames != v)
           log_warn_job("{}{}: {} is not of the form 4k+1; using {} (as diffusers does)", c.where(p, n), p, v,
                        g.num_frames);
       }},
      {"num_inference_steps", [&](auto& n, auto& p) { g.num_inference_steps = get_int_min(c, n, p, 1); }},
      {"guidance_scale", [&](auto& n, auto& p) { g.guidance_scale = get_double(c, n, p); }},
      {"guidance_scale_2", [&](auto& n, auto& p) { g.guidance_scale_2 = get_opt_double(c, n, p); }},
      {"boundary_ratio",
       [&](auto& n, auto& p) {
         g.boundary_ratio = get_opt_double(c, n, p);
         if (g.boundary_ratio && (*g.boundary_ratio < 0 || *g.boundary_ratio > 1))
           c.fail(p, n, fmt::format("must be in [0, 1], got {}", *g.boundary_ratio));
       }},
      {"scheduler", [&](auto& n, auto& p) { g.scheduler = get_enum(c, n, p, kSchedulerKindNames); }},
      {"flow_shift",
       [&](auto& n, auto& p) {
         g.flow_shift = get_opt_double(c, n, p);
         if (g.flow_shift && *g.flow_shift <= 0) c.fail(p, n, fmt::format("must be > 0, got {}", *g.flow_shift));
       }},
      {"negative_prompt",
       [&](auto& n, auto& p) {
         g.negative_prompt = get_string(c, n, p, true);
         if (g.negative_prompt.find('\0') != std::string::npos) c.fail(p, n, "holds a NUL byte; a prompt is text");
       }},
      {"max_sequence_length", [&](auto& n, auto& p) { g.max_sequence_length = get_int_min(c, n, p, 1); }},
      {"image_max_area",
       [&](auto& n, auto& p) {
         g.image_max_area = get_i64(c, n, p);
         if (g.image_max_area < 0) c.fail(p, n, fmt::format("must be >= 0 (0: off), got {}", g.image_max_area));
       }},
      {"seed",
       [&](auto& n, auto& p) {
         // Seeds are fixed (a prompt renders seed + its index on every run); -1, "random" elsewhere, is refused.
         g.seed = get_i64(c, n, p);
         if (g.seed < 0)
           c.fail(p, n, fmt::format("must be an integer >= 0, got {} (a fixed seed; vgen has no random seed)", g.seed));
       }},
      {"initial_latents", [&](auto& n, auto& p) { g.initial_latents = get_string(c, n, p, true); }},
  };
}

std::vector<Key> parallel_keys(const Ctx& c, ParallelConfig& pc) {
  // A size key given in the recipe or by --set is explicit: parallel_config.auto keeps it.
  auto mark = [&pc](const std::string& path) {
    const std::string key = path.substr(path.rfind('.') + 1);
    if (!pc.is_explicit(key)) pc.explicit_keys.push_back(key);
  };
  return {
      {"dp_size", [&, mark](auto& n, auto& p) { pc.dp_size = get_int_min(c, n, p, 1); mark(p); }},
      {"cfg_size",
       [&, mark](auto& n, auto& p) {
         mark(p);
         pc.cfg_size = get_int(c, n, p);
         if (pc.cfg_size != 1 && pc.cfg_size != 2) c.fail(p, n, fmt::format("must be 1 or 2, got {}", pc.cfg_size));
       }},
      {"ulysses_size", [&, mark](auto& n, auto& p) { pc.ulysses_size = get_int_min(c, n, p, 1); mark(p); }},
      {"ring_size", [&, mark](auto& n, auto& p) { pc.ring_size = get_int_min(c, n, p, 1); mark(p); }},
      {"attn2d_size",
       [&, mark](auto& n, auto& p) {
         mark(p);
         if (!n.IsSequence() || n.size() != 2)
           c.fail(p, n, fmt::format("expected a list [rows, cols] of two integers, got {}", kind_of(n)));
         pc.attn2d_size[0] = get_int_min(c, n[0], p + "[0]", 1);
         pc.attn2d_size[1] = get_int_min(c, n[1], p + "[1]", 1);
       }},
      {"async_ulysses", [&](auto& n, auto& p) { pc.async_ulysses = get_bool(c, n, p); }},
      {"parallel_vae_size", [&, mark](auto& n, auto& p) { pc.parallel_vae_size = get_int_min(c, n, p, 1); mark(p); }},
      {"parallel_vae_split_dim",
       [&](auto& n, auto& p) { pc.parallel_vae_split_dim = get_enum(c, n, p, kVaeSplitDimNames); }},
      {"dwdp_size", [&, mark](auto& n, auto& p) { pc.dwdp_size = get_int_min(c, n, p, 1); mark(p); }},
      {"dwdp_transport", [&](auto& n, auto& p) { pc.dwdp_transport = get_enum(c, n, p, kDwdpTransportNames); }},
      {"auto", [&](auto& n, auto& p) { pc.auto_mesh = get_bool(c, n, p); }},
  };
}

std::vector<Key> attention_keys(const Ctx& c, AttentionConfig& a) {
  return {{"backend", [&](auto& n, auto& p) { a.backend = get_enum(c, n, p, kAttentionBackendNames); }}};
}

std::vector<Key> cache_keys(const Ctx& c, CacheConfig& k) {
  return {{"first_block_threshold", [&](auto& n, auto& p) {
             k.first_block_threshold = get_double(c, n, p);
             if (!(k.first_block_threshold >= 0.0) || !std::isfinite(k.first_block_threshold))
               c.fail(p, n, fmt::format("must be a finite number >= 0 (0 = off), got {}", k.first_block_threshold));
           }}};
}

std::vector<Key> output_keys(const Ctx& c, OutputConfig& o) {
  return {
      {"dir", [&](auto& n, auto& p) { o.dir = get_string(c, n, p); }},
      {"fps",
       [&](auto& n, auto& p) {
         if (n.IsNull()) o.fps.reset();
         else o.fps = get_int_min(c, n, p, 1);
       }},
      {"crf",
       [&](auto& n, auto& p) {
         o.crf = get_int_min(c, n, p, 0);
         if (o.crf > 51) c.fail(p, n, fmt::format("must be in [0, 51], got {}", o.crf));
       }},
      {"save_tensors", [&](auto& n, auto& p) { o.save_tensors = get_bool(c, n, p); }},
      {"skip_existing", [&](auto& n, auto& p) { o.skip_existing = get_bool(c, n, p); }},
  };
}

std::vector<Key> text_keys(const Ctx& c, TextConfig& t) {
  return {
      {"cache_embeddings", [&](auto& n, auto& p) { t.cache_embeddings = get_bool(c, n, p); }},
      {"cache_dir", [&](auto& n, auto& p) { t.cache_dir = get_string(c, n, p, true); }},
      {"device", [&](auto& n, auto& p) { t.device = get_enum(c, n, p, kTextDeviceNames); }},
  };
}

std::vector<Key> runtime_keys(const Ctx& c, RuntimeConfig& rt) {
  return {{"collective_timeout_s", [&](auto& n, auto& p) {
             rt.collective_timeout_s = 0.0;  // auto (or null): derived from the work (dist/watchdog_rule.h)
             if (n.IsNull() || (n.IsScalar() && n.Tag() != "!" && n.Scalar() == "auto")) return;
             rt.collective_timeout_s = get_double(c, n, p);
             if (!(rt.collective_timeout_s > 0.0))
               c.fail(p, n, fmt::format("must be a number of seconds > 0 or auto, got {}", rt.collective_timeout_s));
           }}};
}

std::vector<Key> fp8_keys(const Ctx& c, Fp8Config& f) {
  return {
      {"attention", [&](auto& n, auto& p) { f.attention = get_bool(c, n, p); }},
      {"gemm", [&](auto& n, auto& p) { f.gemm = get_bool(c, n, p); }},
      {"attention_qk", [&](auto& n, auto& p) { f.attention_qk = get_enum(c, n, p, kQkFormatNames); }},
      {"gemm_format", [&](auto& n, auto& p) { f.gemm_format = get_enum(c, n, p, kGemmFormatNames); }},
      {"bf16_first_steps", [&](auto& n, auto& p) { f.bf16_first_steps = get_int_min(c, n, p, 0); }},
      {"bf16_last_steps", [&](auto& n, auto& p) { f.bf16_last_steps = get_int_min(c, n, p, 0); }},
      {"bf16_blocks", [&](auto& n, auto& p) { f.bf16_blocks = get_block_list(c, n, p); }},
      {"bf16_gemm_blocks", [&](auto& n, auto& p) { f.bf16_gemm_blocks = get_block_list(c, n, p); }},
      {"bf16_linears", [&](auto& n, auto& p) { f.bf16_linears = get_string_list(c, n, p); }},
      {"scaling", [&](auto& n, auto& p) { f.scaling = get_enum(c, n, p, kFp8ScalingNames); }},
  };
}

// fp4_config: fp8_config's switches that apply to NVFP4 linears.
std::vector<Key> fp4_keys(const Ctx& c, Fp8Config& f) {
  std::vector<Key> keys;
  for (Key& k : fp8_keys(c, f))
    if (k.name != "attention" && k.name != "attention_qk" && k.name != "gemm_format" && k.name != "scaling")
      keys.push_back(std::move(k));
  return keys;
}

// lora: a list of {path, scale, target} (an entry may be just its path; a single mapping or path is
// a list of one). Items are named "lora[i]" in messages.
void parse_lora(const Ctx& c, const YAML::Node& n, const std::string& path, std::vector<LoraEntry>& out) {
  out.clear();
  if (n.IsNull()) return;
  auto entry = [&](const YAML::Node& e, const std::string& ep) {
    LoraEntry le;
    if (e.IsScalar()) {
      le.path = get_string(c, e, ep);
    } else if (e.IsMap()) {
      bool has_path = false;
      parse_map(c, e, ep,
                {{"path", [&](auto& v, auto& p) { le.path = get_string(c, v, p), has_path = true; }},
                 {"scale", [&](auto& v, auto& p) { le.scale = get_double(c, v, p); }},
                 {"target", [&](auto& v, auto& p) {
                    le.target = get_enum(c, v, p, kLoraTargetNames);
                  }}});
      if (!has_path) c.fail(ep, e, "missing key 'path' (the adapter's safetensors file)");
    } else {
      c.fail(ep, e, fmt::format("expected {{path, scale}} or a path, got {}", kind_of(e)));
    }
    if (le.path.empty()) c.fail(ep + ".path", e, "must name a safetensors file");
    out.push_back(le);
  };
  if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) entry(n[i], fmt::format("{}[{}]", path, i));
  } else {
    entry(n, path + "[0]");
  }
}

// Section name → its keys; empty for a leaf key.
std::vector<Key> section_keys(const Ctx& c, Recipe& r, const std::string& section) {
  if (section == "generation") return generation_keys(c, r.generation);
  if (section == "parallel_config") return parallel_keys(c, r.parallel);
  if (section == "attention_config") return attention_keys(c, r.attention);
  if (section == "cache_config") return cache_keys(c, r.cache);
  if (section == "output") return output_keys(c, r.output);
  if (section == "text") return text_keys(c, r.text);
  if (section == "runtime") return runtime_keys(c, r.runtime);
  if (section == "fp8_config") return fp8_keys(c, r.fp8);
  if (section == "fp4_config") return fp4_keys(c, r.fp4);
  return {};
}

std::vector<Key> top_keys(const Ctx& c, Recipe& r) {
  std::vector<Key> keys = {
      {"model", [&](auto& n, auto& p) { r.model = get_string(c, n, p); }},
      {"device", [&](auto& n, auto& p) { r.device = get_enum(c, n, p, kRecipeDeviceNames); }},
      {"precision", [&](auto& n, auto& p) { r.precision = get_enum(c, n, p, kPrecisionNames); }},
      {"prompts", [&](auto& n, auto& p) { r.prompts = get_string(c, n, p, true); }},
      {"hardware", [&](auto& n, auto& p) { r.hardware = get_string(c, n, p, true); }},
      {"lora", [&](auto& n, auto& p) { parse_lora(c, n, p, r.lora); }},
      {"lora_strict", [&](auto& n, auto& p) { r.lora_strict = get_bool(c, n, p); }},
  };
  for (const char* s : {"generation", "parallel_config", "attention_config", "cache_config", "output", "text",
                        "runtime", "fp8_config", "fp4_config"}) {
    std::string name = s;
    keys.push_back({name,
                    [&c, &r, name](auto& n, auto& p) { parse_map(c, n, p, section_keys(c, r, name)); },
                    true});
  }
  return keys;
}

// Applies one `--set a.b=value` to the YAML tree after checking the key path against the schema.
void apply_override(Ctx& c, YAML::Node& root, const std::string& text) {
  size_t eq = text.find('=');
  VGEN_CHECK(eq != std::string::npos && eq > 0, ExitCode::kUsage, "--set {}: expected key.path=value", text);
  std::string path = text.substr(0, eq), value = text.substr(eq + 1);
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  Recipe dummy;
  Ctx none;
  std::vector<Key> top = top_keys(none, dummy);
  auto fail = [&](const std::string& kp, const std::string& msg) {
    VGEN_THROW(ExitCode::kRecipe, "--set {}: {}: {}", text, kp, msg);
  };
  auto find = [](const std::vector<Key>& ks, const std::string& n) {
    return std::find_if(ks.begin(), ks.end(), [&](const Key& k) { return k.name == n; });
  };
  auto k0 = find(top, parts.empty() ? "" : parts[0]);
  if (parts.empty() || k0 == top.end()) fail(parts.empty() ? path : parts[0], unknown_key_message(parts[0], top));
  if (parts.size() >= 2 && !k0->section)
    fail(path, fmt::format("unknown key ('{}' is a value, it has no sub-key '{}')", parts[0], parts[1]));
  if (parts.size() >= 2) {
    std::vector<Key> sk = section_keys(none, dummy, parts[0]);
    if (find(sk, parts[1]) == sk.end()) fail(path, unknown_key_message(parts[1], sk));
  }
  if (parts.size() > 2)
    fail(path, fmt::format("unknown key ('{}.{}' is a value, it has no sub-key '{}')", parts[0], parts[1],
                           parts[2]));
  YAML::Node v;
  try {
    v = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    fail(path, fmt::format("malformed YAML value: {}", e.msg));
  }
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (parts.size() == 1) {
    root[parts[0]] = v;
  } else {
    YAML::Node sec = root[parts[0]];
    if (!sec.IsDefined() || sec.IsNull()) {
      root[parts[0]] = YAML::Node(YAML::NodeType::Map);
      sec = root[parts[0]];
    }
    if (!sec.IsMap()) c.fail(parts[0], sec, fmt::format("expected a mapping, got {}", kind_of(sec)));
    sec[parts[1]] = v;
  }
  c.overrides[path] = text;
}

std::string resolve_path(const std::string& p) {
  if (p.empty()) return p;
  fs::path q = p;
  if (p == "~" || p.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home) q = fs::path(home) / p.substr(std::min<size_t>(2, p.size()));
  }
  return fs::absolute(q).lexically_normal().string();
}

// A switches section given with another precision: ignored rather than an error, so `--set
// precision=bf16` renders an fp8 (fp4) recipe in bf16 as it is (the comparison of docs/fp8.md).
void warn_ignored(const Ctx& c, const YAML::Node& root, const char* key, const char* applies, Precision p) {
  const YAML::Node sec = root.IsMap() ? YAML::Node(root[key]) : YAML::Node();
  if (sec.IsDefined() && !sec.IsNull())
    log_warn_job("{}{}: ignored with precision {} (it applies to precision {} only)", c.where(key, sec), key,
                 precision_name(p), applies);
}

// fp8_config (fp4_config) against the rest of the recipe (docs/fp8.md); under precision fp4 the
// resolved fp4_config becomes r.fp8, the switches every quantised path reads.
void check_fp8(const Ctx& c, const YAML::Node& root, Recipe& r) {
  if (!r.is_fp8()) warn_ignored(c, root, "fp8_config", "fp8", r.precision);
  if (!r.is_fp4()) warn_ignored(c, root, "fp4_config", "fp4", r.precision);
  if (!r.is_quantised()) {
    r.fp8 = Fp8Config{};  // the defaults are kept so timing.json shows no stale values
    r.fp4 = fp4_config_defaults();
    return;
  }
  const char* key = r.is_fp4() ? "fp4_config" : "fp8_config";
  const char* prec = precision_name(r.precision);
  if (r.is_fp4()) r.fp8 = r.fp4;
  const YAML::Node sec = root.IsMap() ? YAML::Node(root[key]) : YAML::Node();
  const bool given = sec.IsDefined() && !sec.IsNull();
  const Fp8Config& f = r.fp8;
  const int steps = r.generation.num_inference_steps;
  if (!f.attention && !f.gemm)
    log_warn_job("{}{}: {}gemm false: precision {} computes like bf16 (still refused on a GPU without its tensor "
                 "cores)",
                 c.where(key, sec), key, r.is_fp8() ? "attention and " : "", prec);
  else if (f.bf16_first_steps + f.bf16_last_steps >= steps)
    log_warn_job("{}{}: bf16_first_steps {} + bf16_last_steps {} cover all {} steps of "
                 "generation.num_inference_steps: every step runs in bf16",
                 c.where(key, sec), key, f.bf16_first_steps, f.bf16_last_steps, steps);
  // Independent of the two above (either can hold beside it).
  if (r.is_fp8() && !f.bf16_gemm_blocks.empty() && f.attention != f.gemm)
    log_warn_job("{}fp8_config: bf16_gemm_blocks with {} false {}", c.where("fp8_config", sec),
                 f.gemm ? "attention" : "gemm",
                 f.gemm ? "runs its blocks wholly in bf16 (as bf16_blocks)"
                        : "does nothing (every block's linears are bf16)");
  if (!f.bf16_linears.empty() && !f.gemm)
    log_warn_job("{}{}: bf16_linears with gemm false does nothing (every linear is bf16)", c.where(key, sec), key);
  if (r.is_fp8() && f.scaling == Fp8Scaling::kBlock && given && sec["gemm_format"].IsDefined() &&
      f.gemm_format != GemmFormat::kE4m3)
    c.fail("fp8_config.gemm_format", sec["gemm_format"],
           "scaling block runs MXFP8 GEMMs (e4m3 elements); gemm_format int8 has no block-scaled form");
  // The device DWDP keeps each block as byte slices spread over its group's GPUs and assembles the
  // bf16 block before it runs; quantising the assembled block every pass would cost more than the
  // quantised GEMMs save, and the slices hold no quantised copy.
  if (r.is_cuda() && f.gemm && r.parallel.dwdp_size > 1)
    c.fail(std::string(key) + ".gemm", given ? YAML::Node(sec["gemm"]) : YAML::Node(root["precision"]),
           fmt::format("precision {0} with {0} GEMMs does not run with parallel_config.dwdp_size {1} on device cuda "
                       "(set {2}.gemm false, dwdp_size 1, or precision bf16)",
                       prec, r.parallel.dwdp_size, key));
}

}  // namespace

Recipe parse_recipe(const std::string& yaml_text, const std::string& path, const std::vector<std::string>& overrides) {
  Ctx c;
  c.file = path;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    VGEN_THROW(ExitCode::kRecipe, "{}:{}:{}: malformed YAML: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg);
  } catch (const YAML::Exception& e) {
    VGEN_THROW(ExitCode::kRecipe, "{}: malformed YAML: {}", path, e.what());
  }
  if (root.IsDefined() && !root.IsNull() && !root.IsMap())
    c.fail("(root)", root, fmt::format("a recipe is a mapping of keys, got {}", kind_of(root)));
  for (auto& o : overrides) apply_override(c, root, o);

  Recipe r;
  r.source_path = path;
  parse_map(c, root, "", top_keys(c, r));

  const auto& pc = r.parallel;
  {  // the mesh's sizes multiply in int (ParallelConfig::world_size): keep every product in range
    const int64_t cp = pc.ring_size > 1 ? int64_t(pc.ring_size) : int64_t(pc.attn2d_size[0]) * pc.attn2d_size[1];
    // Factors below 2^31, so each product below stays inside int64 until one exceeds the bound.
    const int64_t seq = cp > kMaxWorld ? kMaxWorld + 1 : cp * pc.ulysses_size;
    const int64_t world = seq > kMaxWorld ? kMaxWorld + 1 : seq * pc.cfg_size * pc.dp_size;
    if (world > kMaxWorld)
      c.fail("parallel_config", YAML::Node(root["parallel_config"]),
             fmt::format("the mesh (dp {} x cfg {} x cp {} x ulysses {}) needs more than {} ranks", pc.dp_size,
                         pc.cfg_size, cp, pc.ulysses_size, kMaxWorld));
  }
  if (pc.ring_size > 1 && (pc.attn2d_size[0] != 1 || pc.attn2d_size[1] != 1))
    c.fail("parallel_config.ring_size", YAML::Node(root["parallel_config"])["ring_size"],
           fmt::format("ring_size {} and attn2d_size [{}, {}] are exclusive (the context-parallel axis is either "
                       "a ring or a 2-D grid)",
                       pc.ring_size, pc.attn2d_size[0], pc.attn2d_size[1]));
  // DWDP streams every block's weights in a fixed order on all ranks of its group; a skipped block
  // would leave its peers' copies unmatched.
  if (r.cache.first_block_threshold > 0 && pc.dwdp_size > 1)
    c.fail("cache_config.first_block_threshold", YAML::Node(root["cache_config"])["first_block_threshold"],
           fmt::format("the first-block cache ({}) does not run with parallel_config.dwdp_size {} (set one of them "
                       "off: first_block_threshold 0 or dwdp_size 1)",
                       r.cache.first_block_threshold, pc.dwdp_size));
  // The device DWDP keeps each block as slices spread over its group's GPUs: there is no whole
  // device weight to merge an adapter into.
  if (!r.lora.empty() && r.is_cuda() && pc.dwdp_size > 1)
    c.fail("lora", YAML::Node(root["lora"]),
           fmt::format("LoRA adapters are not merged with parallel_config.dwdp_size {} on device cuda (set "
                       "dwdp_size 1, or remove lora)",
                       pc.dwdp_size));
  check_fp8(c, root, r);
  // Tuning knobs of the environment rather than recipe keys: resolved here once, with the rest of
  // the execution policy, and passed down with every attention call.
  r.attention.key_split = attention_key_split_from_env();
  r.model = resolve_path(r.model);
  for (LoraEntry& l : r.lora) l.path = resolve_path(l.path);
  r.prompts = resolve_path(r.prompts);
  r.generation.initial_latents = resolve_path(r.generation.initial_latents);
  r.output.dir = resolve_path(r.output.dir);
  r.text.cache_dir = resolve_path(r.text.cache_dir);
  r.resolved = recipe_to_json(r);
  return r;
}

Recipe load_recipe(const std::string& path, const std::vector<std::string>& overrides) {
  VGEN_CHECK(!fs::is_directory(path), ExitCode::kRecipe, "recipe {} is a directory, not a YAML file", path);
  std::ifstream f(path, std::ios::binary);
  VGEN_CHECK(f.good(), ExitCode::kRecipe, "cannot read recipe file {}", path);
  std::stringstream ss;
  ss << f.rdbuf();
  VGEN_CHECK(!f.bad(), ExitCode::kRecipe, "error reading recipe file {}", path);
  return parse_recipe(ss.str(), path, overrides);
}

}  // namespace vgen
