// Golden case `text_encode`: prompt cleaning, tokenization and the text encoder against diffusers.
#include <filesystem>

#include "dist/device_mesh.h"
#include "model/text/prompt_clean.h"
#include "model/wan/text/text_encoder.h"
#include "model/golden_case.h"
#include "model/wan/family.h"

namespace vgen {
namespace fs = std::filesystem;

void golden_text_encode(GoldenCase& c) {
  VGEN_CHECK(c.params.contains("prompts") && c.params["prompts"].is_array(), ExitCode::kInput,
             "case {}: 'prompts' must be a list of strings", c.name);
  std::vector<std::string> prompts = c.params["prompts"].get<std::vector<std::string>>();
  VGEN_CHECK(c.params.contains("max_sequence_length"), ExitCode::kInput, "case {}: no max_sequence_length", c.name);
  int max_len = c.params["max_sequence_length"].get<int>();
  std::string md = c.model_dir();
  // device: cuda runs the encoder on this rank's GPU in the recipe precision (every rank runs the
  // case, so the collective first device selection is safe here).
  TextEncoderOptions opt;
  if (c.recipe && c.recipe->text_on_cuda()) {
    select_mesh_device();
    opt = TextEncoderOptions{Device::kCUDA, c.recipe->compute_dtype()};
  }
  TextEncoder enc((fs::path(md) / "text_encoder").string(), (fs::path(md) / "tokenizer").string(), opt);

  // The fixture's last_hidden_state holds the encoder output at padded positions too.
  TextEncoding e = enc.encode(prompts, max_len, /*with_padded_rows=*/true);

  if (c.params.contains("cleaned_prompts")) {
    auto want = c.params["cleaned_prompts"].get<std::vector<std::string>>();
    double bad = want.size() == e.cleaned_prompts.size() ? 0.0 : double(std::max(want.size(), e.cleaned_prompts.size()));
    for (size_t i = 0; i < std::min(want.size(), e.cleaned_prompts.size()); ++i)
      if (want[i] != e.cleaned_prompts[i]) bad += 1;
    c.metrics.push_back({"cleaned_prompts", "mismatches", bad, 0, bad == 0});
  }
  c.exact("input_ids", e.input_ids, c.tensors.get("input_ids"));
  c.exact("attention_mask", e.attention_mask, c.tensors.get("attention_mask"));
  double tol = c.bf16 ? 3e-2 : 1e-4;
  c.rel_l2("last_hidden_state", e.last_hidden_state, c.tensors.get("last_hidden_state"), tol);
  c.rel_l2("prompt_embeds", e.prompt_embeds, c.tensors.get("prompt_embeds"), tol);
}

}  // namespace vgen
