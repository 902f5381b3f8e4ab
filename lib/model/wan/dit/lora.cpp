// LoRA adapters: reading and checking a file against the transformer's shapes, and the host merge.
#include "model/wan/dit/lora.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "core/log.h"
#include "core/no_cuda_error.h"
#include "core/timer.h"
#include "io/safetensors.h"
#include "kernels/common/bf16.h"
#include "kernels/gemm/gemm_ref.h"
#include "kernels/lora/lora_merge_ref.h"
#include "model/wan/dit/transformer.h"

namespace vgen {
namespace {

const char* kLoraSuffixes =
    "expected <module>.lora_A.weight / lora_B.weight, lora_down.weight / lora_up.weight, alpha, diff or diff_b";

// The keys of one module in a file.
struct ModuleKeys {
  std::map<LoraPart, std::string> keys;
};

Tensor read_f32(const SafeTensorsFile& f, const std::string& key) {
  Tensor t = f.get(key);
  VGEN_CHECK(t.dtype() == DType::kF32 || t.dtype() == DType::kBF16 || t.dtype() == DType::kF16, ExitCode::kModel,
             "{}: LoRA key '{}' has dtype {}, expected F32, BF16 or F16", f.path(), key, dtype_name(t.dtype()));
  if (t.dtype() != DType::kBF16) return t.to(DType::kF32).clone();  // owned: the mapping closes with the file
  // bf16, the usual adapter dtype: one parallel pass from the mapping (a 14B rank-64 adapter holds
  // ~300M values; a serial convert-then-copy took ~1 s of the load).
  Tensor out = Tensor::empty(t.shape(), DType::kF32);
  const uint16_t* src = static_cast<const uint16_t*>(t.raw());
  float* dst = out.f32();
  const int64_t n = t.numel();
#pragma omp parallel for schedule(static) if (n > (int64_t(1) << 16))
  for (int64_t i = 0; i < n; ++i) dst[i] = kern::bf16_to_f32(src[i]);
  return out;
}

// Checks one module's keys against its target; "" when they fit, else why not (the key named).
std::string check_module(const std::string& module, const ModuleKeys& mk,
                         const std::map<std::string, TensorInfo>& infos, const WanTransformerConfig& cfg,
                         std::string* bad_key) {
  auto key_of = [&](LoraPart p) -> const std::string* {
    auto it = mk.keys.find(p);
    return it == mk.keys.end() ? nullptr : &it->second;
  };
  auto shape_of = [&](const std::string& k) { return infos.at(k).shape; };
  *bad_key = mk.keys.begin()->second;
  const std::optional<LoraTargetShape> ts = lora_target_shape(cfg, module);
  if (!ts) return fmt::format("matches no weight of the transformer (module '{}')", module);
  const std::string *down = key_of(LoraPart::kDown), *up = key_of(LoraPart::kUp), *alpha = key_of(LoraPart::kAlpha),
                    *up_b = key_of(LoraPart::kUpBias), *diff = key_of(LoraPart::kDiff),
                    *diff_b = key_of(LoraPart::kDiffBias);
  if (down || up) {
    if (!ts->low_rank) {
      *bad_key = down ? *down : *up;
      return fmt::format("targets '{}' of shape {}, which is not a Linear weight (only diff applies)", module,
                         shape_str(ts->weight));
    }
    if (!down || !up) {
      *bad_key = down ? *down : *up;
      return fmt::format("has no matching {} (lora_A / lora_down and lora_B / lora_up come in pairs)",
                         down ? "lora_B / lora_up" : "lora_A / lora_down");
    }
    const Shape sd = shape_of(*down), su = shape_of(*up);
    const int64_t out = ts->weight[0], in = ts->weight[1];
    if (sd.size() != 2 || sd[1] != in || sd[0] < 1) {
      *bad_key = *down;
      return fmt::format("has shape {}; '{}.weight' is {}, so it must be [rank, {}]", shape_str(sd), module,
                         shape_str(ts->weight), in);
    }
    if (su.size() != 2 || su[0] != out || su[1] != sd[0]) {
      *bad_key = *up;
      return fmt::format("has shape {}; '{}.weight' is {} and the rank {}, so it must be [{}, {}]", shape_str(su),
                         module, shape_str(ts->weight), sd[0], out, sd[0]);
    }
  }
  if (alpha) {
    *bad_key = *alpha;
    if (!down) return "is an alpha without lora_A / lora_down";
    if (shape_numel(shape_of(*alpha)) != 1) return fmt::format("has shape {}, an alpha is one number", shape_str(shape_of(*alpha)));
  }
  for (const std::string* b : {up_b, diff_b}) {
    if (!b) continue;
    *bad_key = *b;
    if (ts->bias.empty()) return fmt::format("is a bias difference, but '{}' has no bias", module);
    if (shape_numel(shape_of(*b)) != shape_numel(ts->bias))
      return fmt::format("has shape {}; '{}.bias' is {}", shape_str(shape_of(*b)), module, shape_str(ts->bias));
  }
  if (up_b && !down) {
    *bad_key = *up_b;
    return "is a lora_B bias without lora_A / lora_B weights";
  }
  if (diff) {
    *bad_key = *diff;
    const Shape s = shape_of(*diff);
    const bool fits = ts->low_rank ? s == ts->weight : shape_numel(s) == shape_numel(ts->weight);
    if (!fits) return fmt::format("has shape {}; '{}' is {}", shape_str(s), module, shape_str(ts->weight));
  }
  return "";
}

}  // namespace

int LoraUpdate::num_tensors() const {
  return ((down.defined() || diff.defined()) ? 1 : 0) + (bias.defined() ? 1 : 0);
}

int LoraAdapter::num_tensors() const {
  int n = 0;
  for (const LoraUpdate& u : updates) n += u.num_tensors();
  return n;
}

int64_t LoraAdapter::max_rank() const {
  int64_t r = 0;
  for (const LoraUpdate& u : updates) r = std::max(r, u.rank());
  return r;
}

LoraAdapter load_lora(const std::string& path, double scale, const WanTransformerConfig& cfg, bool strict,
                      bool with_data) {
  const SafeTensorsFile file(path);
  LoraAdapter a;
  a.path = path;
  a.scale = scale;
  std::vector<std::string> names;
  for (auto& [k, info] : file.infos()) names.push_back(k);
  const bool wan = lora_file_uses_wan_names(names);

  // "LoRA key 'K' reason"; a key that matches no weight (rank 0) is listed before the problems it
  // causes elsewhere (a renamed key leaves its partner unpaired).
  std::vector<std::pair<int, std::string>> problems;
  auto problem = [&](const std::string& key, const std::string& why, int rank = 1) {
    problems.emplace_back(rank, fmt::format("LoRA key '{}' {}", key, why));
  };
  std::map<std::string, ModuleKeys> modules;
  for (const std::string& k : names) {
    std::optional<LoraKey> lk = parse_lora_key(k, wan);
    if (!lk) {
      problem(k, fmt::format("is not a LoRA tensor ({})", kLoraSuffixes));
      continue;
    }
    ModuleKeys& mk = modules[lk->module];
    if (!mk.keys.emplace(lk->part, k).second)
      problem(k, fmt::format("repeats '{}' for module '{}'", mk.keys[lk->part], lk->module));
  }
  for (auto& [module, mk] : modules) {
    std::string bad;
    const std::string why = check_module(module, mk, file.infos(), cfg, &bad);
    if (!why.empty()) {
      problem(bad, why, why.rfind("matches no weight", 0) == 0 ? 0 : 1);
      a.skipped_keys += mk.keys.size();
      continue;
    }
    LoraUpdate u;
    u.module = module;
    u.source = mk.keys.begin()->second;
    auto has = [&](LoraPart p) { return mk.keys.count(p) != 0; };
    const float s = float(scale);
    if (has(LoraPart::kDown)) {
      const int64_t r = file.infos().at(mk.keys[LoraPart::kDown]).shape[0];
      double alpha = double(r);  // no alpha: the factor is 1
      if (has(LoraPart::kAlpha)) {
        alpha = read_f32(file, mk.keys[LoraPart::kAlpha]).f32()[0];
        VGEN_CHECK(std::isfinite(alpha), ExitCode::kModel, "{}: LoRA key '{}' is not a finite number", path,
                   mk.keys[LoraPart::kAlpha]);
      }
      u.factor = float(scale * alpha / double(r));
      u.bias_factor = u.factor;
      u.down = with_data ? read_f32(file, mk.keys[LoraPart::kDown]) : Tensor::empty({r, 0}, DType::kF32);
      if (with_data) u.up = read_f32(file, mk.keys[LoraPart::kUp]);
      if (has(LoraPart::kUpBias) && with_data) u.bias = read_f32(file, mk.keys[LoraPart::kUpBias]);
    }
    if (has(LoraPart::kDiff)) {
      u.diff_factor = s;
      u.diff = with_data ? read_f32(file, mk.keys[LoraPart::kDiff]) : Tensor::empty({0}, DType::kF32);
    }
    if (has(LoraPart::kDiffBias)) {
      VGEN_CHECK(!has(LoraPart::kUpBias), ExitCode::kModel, "{}: LoRA key '{}' and '{}' both change '{}.bias'", path,
                 mk.keys[LoraPart::kUpBias], mk.keys[LoraPart::kDiffBias], module);
      u.bias_factor = s;
      if (with_data) u.bias = read_f32(file, mk.keys[LoraPart::kDiffBias]);
    }
    if (!with_data && (has(LoraPart::kUpBias) || has(LoraPart::kDiffBias))) u.bias = Tensor::empty({0}, DType::kF32);
    a.updates.push_back(std::move(u));
  }
  if (!problems.empty()) {
    std::stable_sort(problems.begin(), problems.end(), [](auto& x, auto& y) { return x.first < y.first; });
    constexpr size_t kListed = 10;  // each problem named up to this many, then counted (docs/recipe.md)
    if (strict) {
      std::string list;
      for (size_t i = 0; i < problems.size() && i < kListed; ++i) list += (i ? "; " : "") + problems[i].second;
      if (problems.size() > kListed) list += fmt::format("; and {} more", problems.size() - kListed);
      VGEN_THROW(ExitCode::kModel, "{}: {} problem(s): {} (lora_strict: false skips such keys with a warning)", path,
                 problems.size(), list);
    }
    for (size_t i = 0; i < problems.size() && i < kListed; ++i)
      log_warn_job("{}: {}: skipped", path, problems[i].second);
    if (problems.size() > kListed)
      log_warn_job("{}: {} more LoRA key problem(s) skipped", path, problems.size() - kListed);
  }
  if (a.updates.empty()) log_warn_job("{}: the LoRA changes no weight of the transformer", path);
  return a;
}

// The expert a component folder holds: transformer_2 is the second.
static int expert_of(const std::string& component) { return component == "transformer_2" ? 1 : 0; }

std::vector<LoraAdapter> load_lora_for(const Recipe& recipe, const std::string& component,
                                       const WanTransformerConfig& cfg, bool with_data) {
  std::vector<LoraAdapter> out;
  for (const LoraEntry& e : recipe.lora)
    if (lora_targets_expert(e.target, expert_of(component)))
      out.push_back(load_lora(e.path, e.scale, cfg, recipe.lora_strict, with_data));
  return out;
}

std::vector<LoraSlotUpdate> lora_slot_updates(const std::vector<LoraAdapter>& adapters) {
  std::map<std::pair<std::string, bool>, LoraSlotUpdate> slots;
  for (const LoraAdapter& a : adapters)
    for (const LoraUpdate& u : a.updates) {
      auto add = [&](bool bias, LoraContribution c) {
        LoraSlotUpdate& s = slots[{u.module, bias}];
        s.module = u.module, s.bias = bias;
        s.parts.push_back(c);
      };
      if (u.down.defined()) add(false, {&u.up, &u.down, nullptr, u.factor, u.packed_up, u.packed_down_t});
      if (u.diff.defined()) add(false, {nullptr, nullptr, &u.diff, u.diff_factor});
      if (u.bias.defined()) add(true, {nullptr, nullptr, &u.bias, u.bias_factor});
    }
  std::vector<LoraSlotUpdate> out;
  for (auto& [k, s] : slots) out.push_back(std::move(s));
  return out;
}

void merge_lora_host(WanTransformerWeights& w, const std::vector<LoraAdapter>& adapters) {
  for (const LoraSlotUpdate& s : lora_slot_updates(adapters)) {
    Tensor* slot = lora_weight_slot(w, s.module, s.bias);
    VGEN_CHECK(slot && slot->defined() && slot->is_cpu(), ExitCode::kInternal,
               "LoRA merge: '{}{}' has no host tensor (merge before DWDP or a device copy)", s.module,
               s.bias ? ".bias" : "");
    const int64_t n = slot->numel();
    // One contribution in fp32: up [out, r] · down [r, in] → [out, in], or the difference itself.
    auto product = [&](const LoraContribution& c) {
      if (!c.up) return *c.diff;
      Tensor p = Tensor::empty({c.up->dim(0), c.down->dim(1)}, DType::kF32);  // [out, in]
      kern::matmul_ref(c.up->f32(), c.down->f32(), p.f32(), c.up->dim(0), c.down->dim(1), c.up->dim(1), false);
      return p;
    };
    Tensor merged = slot->to(DType::kF32).clone();  // owned, never the mapping or shared memory
    if (s.parts.size() == 1) {
      kern::lora_add_scaled_ref(merged.f32(), product(s.parts[0]).f32(), s.parts[0].factor, n);
    } else {
      Tensor sum = Tensor::zeros({n}, DType::kF32);  // the adapters' updates added up in fp32
      for (const LoraContribution& c : s.parts) kern::lora_add_scaled_ref(sum.f32(), product(c).f32(), c.factor, n);
      kern::lora_add_scaled_ref(merged.f32(), sum.f32(), 1.0f, n);
    }
    *slot = slot->dtype() == DType::kF32 ? merged : merged.to(slot->dtype());
  }
}

#ifndef VGEN_WITH_CUDA
void merge_lora_device(WanTransformerWeights&, const std::vector<LoraAdapter>&, const Tensor&) {
  throw_no_cuda("merge_lora_device");
}
#endif

static bool packed_for_device(const LoraSet& set) {
  for (const LoraAdapter& a : set.adapters)
    for (const LoraUpdate& u : a.updates)
      if (u.down.defined() && u.up.defined() && (u.packed_up < 0 || !set.packed.defined())) return false;
  return true;
}

void merge_lora(WanTransformer& model, const std::vector<LoraAdapter>& adapters) {
  merge_lora(model, LoraSet{adapters, Tensor()});
}

void merge_lora(WanTransformer& model, const LoraSet& set) {
  const std::vector<LoraAdapter>& adapters = set.adapters;
  if (adapters.empty()) return;
  Timer t;
  if (WanDeviceModel* dm = model.mutable_device_model()) {
    VGEN_CHECK(!dm->has_dwdp(), ExitCode::kRecipe,
               "lora: adapters are not merged with parallel_config.dwdp_size > 1 on the GPU");
    if (packed_for_device(set)) {
      merge_lora_device(dm->mutable_weights(), adapters, set.packed);
    } else {  // the device merge works on packed factors (the load packs them beside the weight stream)
      LoraSet packed{adapters, Tensor()};
      pack_lora_factors(packed);
      merge_lora_device(dm->mutable_weights(), packed.adapters, packed.packed);
    }
  } else {
    merge_lora_host(model.mutable_weights(), adapters);
  }
  int tensors = 0;
  for (const LoraAdapter& a : adapters) tensors += a.num_tensors();
  log_info("LoRA: {} adapter(s), {} tensor update(s) merged into the {} transformer in {:.3f} s", adapters.size(),
           tensors, model.on_device() ? "device" : "host", t.seconds());
}

static void check_lora_targets(const Recipe& recipe, const WanTransformer* transformer_2) {
  for (size_t i = 0; i < recipe.lora.size(); ++i)
    VGEN_CHECK(transformer_2 || recipe.lora[i].target != LoraTarget::kSecondExpert, ExitCode::kRecipe,
               "lora[{}].target: transformer_2, but the model has no transformer_2 ({})", i, recipe.lora[i].path);
}

void merge_recipe_lora(const Recipe& recipe, WanTransformer& transformer, WanTransformer* transformer_2) {
  check_lora_targets(recipe, transformer_2);
  merge_lora(transformer, load_lora_for(recipe, "transformer", transformer.config()));
  if (transformer_2) merge_lora(*transformer_2, load_lora_for(recipe, "transformer_2", transformer_2->config()));
}

void merge_recipe_lora(const Recipe& recipe, WanTransformer& transformer, WanTransformer* transformer_2,
                       const LoraSet& set, const LoraSet& set_2) {
  check_lora_targets(recipe, transformer_2);
  merge_lora(transformer, set);
  if (transformer_2) merge_lora(*transformer_2, set_2);
}

namespace {

// Whether every value is a bf16 value (its low 16 bits zero): then bf16 holds it exactly.
bool bf16_exact(const Tensor& t) {
  const uint32_t* v = reinterpret_cast<const uint32_t*>(t.f32());
  const int64_t n = t.numel();
  bool ok = true;
#pragma omp parallel for reduction(&& : ok) schedule(static) if (n > (int64_t(1) << 16))
  for (int64_t i = 0; i < n; ++i) ok = ok && (v[i] & 0xFFFFu) == 0;
  return ok;
}

// src (f32 [rows, cols]) into dst as is, or transposed ([cols, rows]); bf16 by truncation (exact
// here: every value was checked to be a bf16 value).
template <typename T>
void pack_into(T* dst, const Tensor& src, bool transpose) {
  const float* s = src.f32();
  auto put = [](T* d, float x) {
    if constexpr (sizeof(T) == 4) {
      *d = x;
    } else {
      uint32_t u;
      std::memcpy(&u, &x, 4);
      *d = T(u >> 16);
    }
  };
  const int64_t rows = src.dim(0), cols = src.dim(1);
  if (!transpose) {
    for (int64_t i = 0; i < rows * cols; ++i) put(dst + i, s[i]);
    return;
  }
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t k = 0; k < rows; ++k) put(dst + j * rows + k, s[k * cols + j]);
}

}  // namespace

void pack_lora_factors(LoraSet& set) {
  std::vector<LoraUpdate*> low_rank;
  int64_t total = 0;
  auto take = [&total](int64_t n) {
    const int64_t at = total;
    total += (n + 127) / 128 * 128;  // 256-byte aligned views for the GEMM (in bf16 and f32)
    return at;
  };
  for (LoraAdapter& a : set.adapters)
    for (LoraUpdate& u : a.updates)
      if (u.down.defined() && u.up.defined()) {
        u.packed_up = take(u.up.numel());
        u.packed_down_t = take(u.down.numel());
        low_rank.push_back(&u);
      }
  if (low_rank.empty()) return;
  const int64_t n = int64_t(low_rank.size());
  bool bf16 = true;
  for (int64_t i = 0; i < n && bf16; ++i) bf16 = bf16_exact(low_rank[size_t(i)]->up) && bf16_exact(low_rank[size_t(i)]->down);
  set.packed = Tensor::empty({total}, bf16 ? DType::kBF16 : DType::kF32);
  uint16_t* dst16 = bf16 ? static_cast<uint16_t*>(set.packed.raw()) : nullptr;
  float* dst32 = bf16 ? nullptr : set.packed.f32();
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < n; ++i) {
    const LoraUpdate& u = *low_rank[size_t(i)];
    if (bf16) {  // up [out, r] as is; down [r, in] → downᵀ [in, r]
      pack_into(dst16 + u.packed_up, u.up, false);
      pack_into(dst16 + u.packed_down_t, u.down, true);
    } else {
      pack_into(dst32 + u.packed_up, u.up, false);
      pack_into(dst32 + u.packed_down_t, u.down, true);
    }
  }
}

std::future<LoraSet> read_recipe_lora_async(const Recipe& recipe, const std::string& component,
                                            const WanTransformerConfig& cfg, bool pack) {
  const bool any = std::any_of(recipe.lora.begin(), recipe.lora.end(),
                               [&](const LoraEntry& e) { return lora_targets_expert(e.target, expert_of(component)); });
  if (!any) {
    std::promise<LoraSet> none;
    none.set_value(LoraSet{});
    return none.get_future();
  }
  return std::async(std::launch::async, [recipe, component, cfg, pack] {
    LoraSet set;
    set.adapters = load_lora_for(recipe, component, cfg);
    if (pack) pack_lora_factors(set);
    return set;
  });
}

}  // namespace vgen
