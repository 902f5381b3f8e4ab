#include "plan/plan_fit.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace vgen {
namespace {

std::string size_text(double b) {
  if (b >= double(1ull << 30)) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
  if (b >= double(1ull << 20)) return fmt::format("{:.2f} MiB", b / double(1ull << 20));
  return fmt::format("{:.1f} KiB", b / 1024.0);
}

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

struct Candidate {
  ParallelConfig pc;
  int world = 0;
  int changes = 0;
  double estimate = 0;
};

// The --set arguments that turn `from` into `to`.
std::string set_args(const ParallelConfig& from, const ParallelConfig& to) {
  std::string s;
  auto add = [&](const char* key, const std::string& v) {
    s += fmt::format("{}--set parallel_config.{}={}", s.empty() ? "" : " ", key, v);
  };
  if (from.dp_size != to.dp_size) add("dp_size", std::to_string(to.dp_size));
  if (from.cfg_size != to.cfg_size) add("cfg_size", std::to_string(to.cfg_size));
  if (from.ulysses_size != to.ulysses_size) add("ulysses_size", std::to_string(to.ulysses_size));
  if (from.ring_size != to.ring_size) add("ring_size", std::to_string(to.ring_size));
  if (from.attn2d_size != to.attn2d_size) add("attn2d_size", fmt::format("[{},{}]", to.attn2d_size[0], to.attn2d_size[1]));
  if (from.parallel_vae_size != to.parallel_vae_size) add("parallel_vae_size", std::to_string(to.parallel_vae_size));
  if (from.dwdp_size != to.dwdp_size) add("dwdp_size", std::to_string(to.dwdp_size));
  return s;
}

int count_changes(const ParallelConfig& a, const ParallelConfig& b) {
  return (a.dp_size != b.dp_size) + (a.cfg_size != b.cfg_size) + (a.ulysses_size != b.ulysses_size) +
         (a.ring_size != b.ring_size) + (a.attn2d_size != b.attn2d_size) + (a.dwdp_size != b.dwdp_size) +
         (a.parallel_vae_size != b.parallel_vae_size);
}

// Valid meshes of `world` ranks (sequence parallel as Ulysses × ring, or as the recipe's cp kind)
// with every dwdp_size the recipe allows.
std::vector<Candidate> candidates(const Recipe& recipe, int world, const PlanModel& model) {
  std::vector<Candidate> out;
  const ParallelConfig& cur = recipe.parallel;
  const bool attn2d = cur.attn2d_size[0] * cur.attn2d_size[1] > 1;
  for (int dp : divisors(world))
    for (int cfg : {1, 2}) {
      if ((world / dp) % cfg) continue;
      const int sp = world / dp / cfg;
      for (int u : divisors(sp)) {
        if (model.heads % u) continue;
        const int cp = sp / u;
        for (int d : divisors(world)) {
          // DWDP groups are ranks of one node (up to 8 GPUs here).
          if (d > 8 || (d > 1 && recipe.cache.first_block_threshold > 0)) continue;
          Recipe r = recipe;
          ParallelConfig& pc = r.parallel;
          pc.dp_size = dp, pc.cfg_size = cfg, pc.ulysses_size = u, pc.dwdp_size = d;
          if (attn2d && cp > 1 && cp == cur.attn2d_size[0] * cur.attn2d_size[1]) {
            pc.ring_size = 1;  // keep the recipe's grid when the cp degree is the same
          } else {
            pc.ring_size = cp;
            pc.attn2d_size = {1, 1};
          }
          pc.parallel_vae_size = std::min(cur.parallel_vae_size, world / (dp * cfg));
          try {
            Plan p = make_plan(r, world, model);
            out.push_back({pc, world, count_changes(cur, pc), plan_memory_total(p)});
          } catch (const Error&) {
            // not a valid mesh for this recipe
          }
        }
      }
    }
  return out;
}

}  // namespace

double plan_memory_total(const Plan& plan) {
  double t = 0;
  for (auto& [what, bytes] : plan.memory) t += bytes;
  return t;
}

DeviceOomAdvice plan_fit_advice(const Recipe& recipe, int world, const PlanModel& model, double device_bytes) {
  DeviceOomAdvice a;
  const Plan p = make_plan(recipe, world, model);
  a.estimate_bytes = plan_memory_total(p);
  if (device_bytes <= 0) return a;
  auto largest = std::max_element(p.memory.begin(), p.memory.end(),
                                  [](auto& x, auto& y) { return x.second < y.second; });
  a.text = fmt::format("vgen plan estimates {} per GPU for this recipe on {} rank(s) (largest item: {} {}).",
                       size_text(a.estimate_bytes), world, size_text(largest->second), largest->first);
  const double budget = 0.95 * device_bytes;
  // Nearest first: the same ranks before more ranks, fewer changed keys, more replicas, less DWDP.
  auto better = [](const Candidate& x, const Candidate& y) {
    if (x.world != y.world) return x.world < y.world;
    if (x.changes != y.changes) return x.changes < y.changes;
    if (x.pc.dp_size != y.pc.dp_size) return x.pc.dp_size > y.pc.dp_size;
    if (x.pc.dwdp_size != y.pc.dwdp_size) return x.pc.dwdp_size < y.pc.dwdp_size;
    return x.estimate < y.estimate;
  };
  std::optional<Candidate> best;
  for (int w : {world, 2 * world, 4 * world}) {
    for (const Candidate& c : candidates(recipe, w, model))
      if (c.changes > 0 && c.estimate <= budget && (!best || better(c, *best))) best = c;
    if (best) break;
  }
  if (a.estimate_bytes <= budget)
    a.text += fmt::format(" That fits this GPU's {}: the shortfall lies outside the plan (VAE decode activations, "
                          "other processes on the GPU, fragmentation); lower generation.height/width/num_frames or "
                          "free the GPU{}",
                          size_text(device_bytes), best ? "; more headroom:" : ".");
  else
    a.text += fmt::format(" It does not fit this GPU's {}.", size_text(device_bytes));
  if (best) {
    a.text += fmt::format(" Fits (estimate {}){}: {}. Check with `vgen plan --world {}` and the same --set.",
                          size_text(best->estimate), best->world != world ? fmt::format(" on {} ranks", best->world) : "",
                          set_args(recipe.parallel, best->pc), best->world);
  } else if (a.estimate_bytes > budget) {
    std::string hints;
    if (recipe.is_fp32()) hints += "precision bf16, ";
    if (recipe.text_on_cuda() && !model.prompt_prefix)
      hints += fmt::format("text.device cpu (the text encoder's {} off the GPU), ", size_text(double(model.te_bytes)));
    if (recipe.is_cuda() && model.prompt_prefix && !model.prompt_prefix->streamed)
      hints += fmt::format("text.device stream (the understanding tower's {} off the GPU), ",
                           size_text(double(model.prompt_prefix->tower_bytes)));
    a.text += fmt::format(" No mesh of up to {} ranks fits it; try {}a smaller generation size or a GPU with more "
                          "memory.",
                          4 * world, hints);
  }
  return a;
}

DeviceOomAdvisor plan_oom_advisor(const Recipe& recipe, int world) {
  auto model = std::make_shared<std::optional<PlanModel>>();
  auto mu = std::make_shared<std::mutex>();
  return [recipe, world, model, mu](size_t device_total) {
    std::lock_guard<std::mutex> lk(*mu);
    if (!*model) *model = read_plan_model(recipe);
    return plan_fit_advice(recipe, world, **model, double(device_total));
  };
}

}  // namespace vgen
