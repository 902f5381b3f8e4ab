// Recipe YAML (io/recipe.cpp): the input is the recipe text, optionally followed by `--set`
// overrides, each after a NUL byte. Rejected inputs end in kRecipe (kUsage for a malformed
// `--set`); an accepted recipe has its values in range, a mesh size that fits an int, and a
// resolved JSON (timing.json's "recipe") that serialises.
#include <vector>

#include "fuzz_common.h"
#include "io/recipe.h"

using namespace vgen;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  for (size_t b = 0;;) {
    size_t e = in.find('\0', b);
    parts.push_back(in.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos || parts.size() == 5) break;
    b = e + 1;
  }
  const std::string yaml = parts[0];
  const std::vector<std::string> overrides(parts.begin() + 1, parts.end());
  fuzz::expect_documented({ExitCode::kRecipe, ExitCode::kUsage}, [&] {
    Recipe r = parse_recipe(yaml, "fuzz.yaml", overrides);
    const GenerationConfig& g = r.generation;
    fuzz::check(g.height > 0 && g.height % 16 == 0 && g.width > 0 && g.width % 16 == 0, "generation size");
    fuzz::check(g.num_frames >= 1 && g.num_frames % 4 == 1, "num_frames is not 4k+1");
    fuzz::check(g.num_inference_steps >= 1 && g.max_sequence_length >= 1, "steps or max_sequence_length");
    const ParallelConfig& p = r.parallel;
    fuzz::check(p.dp_size >= 1 && (p.cfg_size == 1 || p.cfg_size == 2) && p.ulysses_size >= 1 && p.ring_size >= 1 &&
                    p.attn2d_size[0] >= 1 && p.attn2d_size[1] >= 1 && p.parallel_vae_size >= 1 && p.dwdp_size >= 1,
                "parallel sizes");
    fuzz::check(p.world_size() >= 1 && p.seq_size() >= 1 && p.cp_size() >= 1, "mesh size");
    fuzz::check(r.output.crf >= 0 && r.output.crf <= 51, "crf");
    r.resolved.dump();
  });
  return 0;
}
