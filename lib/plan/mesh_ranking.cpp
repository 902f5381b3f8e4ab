#include "plan/mesh_ranking.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "core/error.h"
#include "core/gpu_info.h"
#include "core/log.h"
#include "dist/mesh.h"
#include "plan/hardware_choice.h"
#include "plan/prefill_placement.h"

namespace vgen {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// The meshes to price: the recipe's parallel_config with every combination of sizes for `world`
// (keeping the explicit keys when asked).
std::vector<ParallelConfig> mesh_candidates(const Recipe& recipe, int world, const PlanModel& model,
                                            const HardwareProfile& hw, bool keep) {
  const ParallelConfig& cur = recipe.parallel;
  auto fixed = [&](const char* key) { return keep && cur.is_explicit(key); };
  std::vector<ParallelConfig> out;
  for (int dp : divisors(world)) {
    if (fixed("dp_size") && dp != cur.dp_size) continue;
    for (int cfg : {1, 2}) {
      if ((world / dp) % cfg || (fixed("cfg_size") && cfg != cur.cfg_size)) continue;
      const int sp = world / dp / cfg;
      for (int u : divisors(sp)) {
        if (model.heads % u || (fixed("ulysses_size") && u != cur.ulysses_size)) continue;
        const int cp = sp / u;
        // The context-parallel layouts: none, a ring, or an Attention2D grid rows × cols.
        std::vector<std::pair<int, std::array<int, 2>>> layouts;
        if (cp == 1) layouts.push_back({1, {1, 1}});
        else {
          layouts.push_back({cp, {1, 1}});
          for (int r : divisors(cp)) layouts.push_back({1, {r, cp / r}});
        }
        for (auto& [ring, grid] : layouts) {
          if (fixed("ring_size") && ring != cur.ring_size) continue;
          if (fixed("attn2d_size") && grid != cur.attn2d_size) continue;
          for (int vae = 1; vae <= std::min(sp, 16); vae *= 2) {
            if (fixed("parallel_vae_size") && vae != cur.parallel_vae_size) continue;
            for (int d : {1, 2, 4, 8}) {
              if (world % d || d > hw.nvlink_domain || (fixed("dwdp_size") && d != cur.dwdp_size)) continue;
              if (d > 1 && (recipe.cache.first_block_threshold > 0 || (!recipe.lora.empty() && recipe.is_cuda())))
                continue;
              // The device DWDP holds no e4m3 copy: fp8 GEMMs refuse it (docs/fp8.md).
              if (d > 1 && recipe.is_quantised() && recipe.fp8.gemm && recipe.is_cuda()) continue;
              ParallelConfig pc = cur;
              pc.dp_size = dp, pc.cfg_size = cfg, pc.ulysses_size = u, pc.ring_size = ring, pc.attn2d_size = grid;
              pc.parallel_vae_size = vae, pc.dwdp_size = d;
              if (u == 1 || cp > 1) pc.async_ulysses = false;  // async Ulysses runs without a cp axis only
              out.push_back(pc);
            }
          }
        }
      }
    }
  }
  return out;
}

bool better(const Prediction& a, const Prediction& b, int videos) {
  if (a.fits != b.fits) return a.fits;
  const double ja = job_seconds(a, videos), jb = job_seconds(b, videos);
  if (std::abs(ja - jb) > 1e-9 * std::max(ja, jb)) return ja < jb;
  // Equal times: fewer GPUs in the VAE, no DWDP (its measured cost, +0.6-1.2% in
  // results/parallel/2xh200/2026-11-30_h200_issue7_runs27-32.json, lies below the model's resolution), less memory.
  if (a.pc.parallel_vae_size != b.pc.parallel_vae_size) return a.pc.parallel_vae_size < b.pc.parallel_vae_size;
  if (a.pc.dwdp_size != b.pc.dwdp_size) return a.pc.dwdp_size < b.pc.dwdp_size;
  return a.memory_gib < b.memory_gib;
}

}  // namespace

double job_seconds(const Prediction& p, int videos) {
  const int per_replica = (std::max(videos, 1) + p.pc.dp_size - 1) / p.pc.dp_size;
  return per_replica * p.e2e_s;
}

std::vector<Prediction> rank_meshes(const Recipe& recipe, int world, const PlanModel& model,
                                    const HardwareProfile& hw, const RankOptions& opt) {
  const Prediction one = predict_one_gpu(recipe, model, hw);
  std::vector<Prediction> out;
  Recipe r = recipe;
  for (const ParallelConfig& pc : mesh_candidates(recipe, world, model, hw, opt.keep_explicit)) {
    r.parallel = pc;
    try {
      PlanModel m = model;  // text.device auto of a prompt-prefix model, weighed on this mesh
      place_prefill(r, world, m, hw);
      Prediction p = predict(r, make_plan(r, world, m, /*with_ranks=*/false), hw);
      p.efficiency = pc.dp_size * one.e2e_s / (world * p.e2e_s);
      out.push_back(std::move(p));
    } catch (const Error&) {
      // not a valid mesh for this recipe and model (e.g. the VAE split does not divide the latent)
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](auto& a, auto& b) { return better(a, b, opt.videos); });
  return out;
}

ParallelConfig choose_mesh(const Recipe& recipe, int world, const PlanModel& model, const HardwareProfile& hw,
                           int videos) {
  const auto ranked = rank_meshes(recipe, world, model, hw, {videos, true});
  std::string kept;
  for (auto& k : recipe.parallel.explicit_keys) kept += (kept.empty() ? "" : ", ") + k;
  VGEN_CHECK(!ranked.empty() && ranked.front().fits, ExitCode::kRecipe,
             "parallel_config.auto: no mesh of {} ranks {} fits a {} GPU ({:.0f} GiB){}", world,
             ranked.empty() ? "is valid" : "with a memory estimate that", hw.name, hw.memory_gib,
             kept.empty() ? std::string() : fmt::format(" keeping the explicit keys {}", kept));
  return ranked.front().pc;
}

Json prediction_json(const Prediction& p) {
  Json parts = Json::object();
  for (auto& [what, s] : p.forward_parts) parts[what] = s;
  return {{"mesh", p.mesh},
          {"parallel_config",
           {{"dp_size", p.pc.dp_size},
            {"cfg_size", p.pc.cfg_size},
            {"ulysses_size", p.pc.ulysses_size},
            {"ring_size", p.pc.ring_size},
            {"attn2d_size", {p.pc.attn2d_size[0], p.pc.attn2d_size[1]}},
            {"async_ulysses", p.pc.async_ulysses},
            {"parallel_vae_size", p.pc.parallel_vae_size},
            {"dwdp_size", p.pc.dwdp_size}}},
          {"precision", precision_name(p.precision)},
          {"forward_s", p.forward_s},
          {"forward_parts_s", parts},
          {"step_s", p.step_s},
          {"fp8_steps", p.fp8_steps},
          {"forward_bf16_s", p.forward_bf16_s},
          {"step_bf16_s", p.step_bf16_s},
          {"denoise_s", p.denoise_s},
          {"text_s", p.text_s},
          {"vae_s", p.vae_s},
          {"vae_decode_s", p.vae_decode_s},
          {"mp4_s", p.mp4_s},
          {"load_s", p.load_s},
          {"e2e_s", p.e2e_s},
          {"videos_per_hour", p.videos_per_hour},
          {"efficiency", p.efficiency},
          {"memory_gib", p.memory_gib},
          {"fits", p.fits}};
}

namespace {

// One row of the --rank table: the best-placed mesh and those equal to it but for dwdp_size.
struct RankRow {
  const Prediction* first = nullptr;
  std::vector<const Prediction*> dwdp;  // ascending dwdp_size
};

std::string mesh_without_dwdp(const ParallelConfig& pc) {
  std::string s = mesh_label(pc);
  const std::string tag = fmt::format(", dwdp {}", pc.dwdp_size);
  if (const size_t at = s.find(tag); at != std::string::npos) s.erase(at, tag.size());
  return s;
}

// Rows in the order of their best mesh; a mesh joins a row of the same mesh but dwdp_size with the
// same fit and times (to 9 digits: equal in the model, which prices DWDP's prefetch as hidden).
std::vector<RankRow> group_rows(const std::vector<Prediction>& ranked) {
  std::vector<RankRow> rows;
  std::unordered_map<std::string, size_t> index;
  for (const Prediction& p : ranked) {
    const std::string key = fmt::format("{}|{}|{:.9g}|{:.9g}|{:.9g}", mesh_without_dwdp(p.pc), p.fits, p.e2e_s,
                                        p.step_s, p.vae_s);
    auto [it, added] = index.try_emplace(key, rows.size());
    if (added) rows.push_back(RankRow{&p, {}});
    rows[it->second].dwdp.push_back(&p);
  }
  for (RankRow& r : rows)
    std::sort(r.dwdp.begin(), r.dwdp.end(), [](auto* x, auto* y) { return x->pc.dwdp_size < y->pc.dwdp_size; });
  return rows;
}

}  // namespace

std::string format_ranking(const Recipe& recipe, const HardwareProfile& hw, const std::vector<Prediction>& ranked,
                           int world, int videos, size_t limit) {
  const std::vector<RankRow> rows = group_rows(ranked);
  fmt::memory_buffer o;
  auto out = std::back_inserter(o);
  fmt::format_to(out, "\n{} valid meshes of {} ranks in {} rows (meshes equal but for dwdp_size share one) on {} ({}), {}×{}×{}, {} steps; best first "
                 "by the time of {} video(s):\n",
                 ranked.size(), world, rows.size(), hw.name, hw.gpu, recipe.generation.width,
                 recipe.generation.height, recipe.generation.num_frames, recipe.generation.num_inference_steps, videos);
  fmt::format_to(out, "{:>4}  {:<50} {:>8} {:>9} {:>7} {:>8} {:>8} {:>6}  {}\n", "#", "mesh", "step s", "denoise s",
                 "vae s", "e2e s", "video/h", "eff", "GiB per GPU by dwdp_size");
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const Prediction& p = *rows[i].first;
    std::string mem;
    for (const Prediction* d : rows[i].dwdp)
      mem += fmt::format("{}{}: {:.1f}", mem.empty() ? "" : "  ", d->pc.dwdp_size, d->memory_gib);
    fmt::format_to(out, "{:>4}  {:<50} {:>8.3f} {:>9.2f} {:>7.2f} {:>8.2f} {:>8.1f} {:>6.3f}  {}{}\n", i + 1,
                   mesh_without_dwdp(p.pc), p.step_s, p.denoise_s, p.vae_s, p.e2e_s, p.videos_per_hour, p.efficiency,
                   mem, p.fits ? "" : "  does not fit");
  }
  if (rows.size() > limit)
    fmt::format_to(out, "  ... {} more rows (--json FILE lists every mesh)\n", rows.size() - limit);
  return fmt::to_string(o);
}

}  // namespace vgen

namespace vgen {

void resolve_auto_mesh(Recipe& recipe, int world) {
  const char* env = std::getenv("VGEN_HARDWARE");
  const HardwareChoice choice = choose_hardware(env ? env : "", "$VGEN_HARDWARE", recipe, first_gpu_name());
  const HardwareProfile& hw = choice.profile;
  const PlanModel model = read_plan_model(recipe);
  ParallelConfig pc = choose_mesh(recipe, world, model, hw, 1);
  pc.auto_mesh = true;
  recipe.parallel = pc;
  recipe.resolved = recipe_to_json(recipe);
  Recipe r = recipe;
  const Prediction p = predict(r, make_plan(r, world, model, false), hw);
  recipe.resolved["parallel_config"]["auto_choice"] = {{"hardware", hw.name},
                                                      {"mesh", p.mesh},
                                                      {"predicted_e2e_s", p.e2e_s},
                                                      {"kept", recipe.parallel.explicit_keys}};
  const auto& kept = recipe.parallel.explicit_keys;
  log_info("parallel_config.auto: {} for {} rank(s) on {} (from {}; predicted {:.1f} s per video; kept {})", p.mesh,
           world, hw.name, choice.source, p.e2e_s,
           kept.empty() ? std::string("none") : fmt::format("{}", fmt::join(kept, ", ")));
}

}  // namespace vgen
