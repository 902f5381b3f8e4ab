// LoRA adapters for the Wan DiT, merged into the weights at load so that a step costs what it
// costs without one: W += scale · (alpha / rank) · B·A, computed in fp32 and added into the
// weight with one rounding into its dtype; several adapters add up in the listed order (the sum
// of their fp32 updates is added once).
//
// Files: diffusers / PEFT names (`transformer.blocks.N.attn1.to_q.lora_A.weight`, `lora_B`,
// optional `.alpha`; also without the `transformer.` prefix) and the original Wan names of
// LightX2V and ComfyUI (`diffusion_model.blocks.N.self_attn.q.lora_down.weight`, `lora_up`,
// `alpha`, or `lora_A` / `lora_B`), as diffusers' Wan LoRA conversion reads them. Without an alpha
// the factor is 1 (PEFT saves lora_alpha = r then). `diff` (a whole-tensor difference) and
// `diff_b` (a bias difference) are added times scale; `lora_B.bias` times scale · alpha / rank.
#pragma once
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/recipe.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/dit/transformer_weights.h"

namespace vgen {

class WanTransformer;

// What a file key holds for its module.
enum class LoraPart { kDown, kUp, kAlpha, kUpBias, kDiff, kDiffBias };

struct LoraKey {
  std::string module;  // diffusers module name, e.g. "blocks.0.attn1.to_q", "proj_out"
  LoraPart part = LoraPart::kDown;
};

// A file's naming: the original Wan names (self_attn, ffn.0, norm3, lora_down, ...) or diffusers'.
// Wan when a key starts with `diffusion_model.` or uses a Wan-only name.
bool lora_file_uses_wan_names(const std::vector<std::string>& keys);
// The module and part of one file key (nullopt: not a LoRA key). `wan_names`: the file's naming
// (lora_file_uses_wan_names); prefixes `transformer.`, `diffusion_model.`, `base_model.model.` are
// dropped. The module may still match no weight (see lora_target_shapes).
std::optional<LoraKey> parse_lora_key(const std::string& key, bool wan_names);

// Shapes of the tensors a module name stands for in a transformer of `cfg`: weight [out, in] of a
// Linear (low_rank true), or the tensor itself (a norm weight, a modulation table: diff only).
struct LoraTargetShape {
  Shape weight;      // as the checkpoint holds it
  Shape bias;        // empty: none
  bool low_rank = false;  // a Linear: lora_A / lora_B apply
};
std::optional<LoraTargetShape> lora_target_shape(const WanTransformerConfig& cfg, const std::string& module);

// One module's update from one adapter (tensors f32 on the host).
struct LoraUpdate {
  std::string module;
  std::string source;  // the file key of its first tensor, for messages
  Tensor down;         // [r, in] (lora_A / lora_down), or undefined
  Tensor up;           // [out, r] (lora_B / lora_up)
  float factor = 0;    // scale · alpha / r (scale without an alpha)
  Tensor diff;         // the weight's shape, or undefined
  float diff_factor = 0;
  Tensor bias;         // [out] bias difference, or undefined
  float bias_factor = 0;
  // Offsets (f32 elements) of up and downᵀ in LoraSet::packed; -1: not packed.
  int64_t packed_up = -1, packed_down_t = -1;
  int64_t rank() const { return down.defined() ? down.dim(0) : 0; }
  int num_tensors() const;  // weights (and biases) this update changes
};

struct LoraAdapter {
  std::string path;
  double scale = 1.0;
  std::vector<LoraUpdate> updates;  // sorted by module
  size_t skipped_keys = 0;          // keys not applied (lora_strict false)
  int num_tensors() const;          // weights (and biases) it changes
  int64_t max_rank() const;
};

// Reads `path` and checks every key against a transformer of `cfg`. A key that matches no weight,
// a shape that does not fit, an A without its B: kModel naming the key and the file when
// `strict`, else a warning and the key is skipped. `with_data` false reads only the header (the
// updates then hold no tensors, e.g. for `vgen plan`).
LoraAdapter load_lora(const std::string& path, double scale, const WanTransformerConfig& cfg, bool strict,
                      bool with_data = true);

// The recipe's adapters for one expert ("transformer" or "transformer_2"), in the listed order.
std::vector<LoraAdapter> load_lora_for(const Recipe& recipe, const std::string& component,
                                       const WanTransformerConfig& cfg, bool with_data = true);

// The updates to one tensor (a module's weight, or its bias), in the adapters' order: each adds
// factor · (up·down) or factor · diff.
struct LoraContribution {
  const Tensor* up = nullptr;    // with down: the low-rank product
  const Tensor* down = nullptr;
  const Tensor* diff = nullptr;  // else: a whole-tensor difference
  float factor = 0;
  int64_t packed_up = -1, packed_down_t = -1;  // of the update (LoraUpdate), -1: not packed
};
struct LoraSlotUpdate {
  std::string module;
  bool bias = false;
  std::vector<LoraContribution> parts;
};
std::vector<LoraSlotUpdate> lora_slot_updates(const std::vector<LoraAdapter>& adapters);

struct LoraSet;  // below

// Host merge into f32 (or bf16) host weights: every changed tensor is replaced by an owned copy
// (the loaded ones may be read-only file mappings or node-shared memory).
void merge_lora_host(WanTransformerWeights& weights, const std::vector<LoraAdapter>& adapters);
// Device merge into the device weights of a model streamed to the GPU (the same arithmetic: B by A
// in fp32 on the device, then one rounding into the weight's dtype), from the adapters' factors
// packed by pack_lora_factors (`packed`, undefined when no update is low-rank). kInternal with DWDP.
void merge_lora_device(WanTransformerWeights& device_weights, const std::vector<LoraAdapter>& adapters,
                       const Tensor& packed);
// Whichever the model holds (host weights, or a device model: the factors packed first where the
// set is not). Logs what was merged.
void merge_lora(WanTransformer& model, const std::vector<LoraAdapter>& adapters);
void merge_lora(WanTransformer& model, const LoraSet& set);

// The recipe's `lora` merged into the experts at load (before their first use; on the host before
// a host DWDP). kRecipe for a target transformer_2 on a model without one.
void merge_recipe_lora(const Recipe& recipe, WanTransformer& transformer, WanTransformer* transformer_2);

// One expert's adapters read ahead of the merge, with (for the device merge) every low-rank
// factor packed into one host buffer — up [out, r], then downᵀ [in, r], 128-element aligned — so
// the merge is one upload and a queue of GEMMs with no host round trip per tensor. The buffer is
// bf16 when every factor value is a bf16 value (as the files' bf16 factors are: no rounding), else
// f32; with bf16 factors a single update is merged by one GEMM whose fp32 epilogue adds it to the
// weight (W = W + factor·up·down, one rounding).
struct LoraSet {
  std::vector<LoraAdapter> adapters;
  Tensor packed;  // [total] bf16 or f32 on the host, or undefined
};
void pack_lora_factors(LoraSet& set);  // fills packed and the updates' offsets (in parallel)
// The recipe's adapters for `component` ("transformer" / "transformer_2"), read (and packed when
// `pack`) on a thread, so the file read and conversion run beside the weight stream; get()
// rethrows a read error. No thread when the recipe has no LoRA.
std::future<LoraSet> read_recipe_lora_async(const Recipe& recipe, const std::string& component,
                                            const WanTransformerConfig& cfg, bool pack);
// merge_recipe_lora with the sets already read.
void merge_recipe_lora(const Recipe& recipe, WanTransformer& transformer, WanTransformer* transformer_2,
                       const LoraSet& set, const LoraSet& set_2);

// The weight (or bias) slot a module stands for; null when none (e.g. an undefined norm2).
Tensor* lora_weight_slot(WanTransformerWeights& w, const std::string& module, bool bias);

}  // namespace vgen
