// What `vgen plan` and its time model (lib/plan/) know of a model: sizes from the configs and the
// safetensors headers, and the family's hooks for the work of its parts. A family fills it
// (ModelFamily::plan_model); the planner prices it without knowing the family.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vgen {

// One linear of a DiT block, per token: K inputs → N outputs. Linears with the same `input` read
// the same activation (quantised once under precision fp8).
struct PlanLinear {
  std::string name;  // as fp8_config.bf16_linears names it
  int64_t k = 0, n = 0;
  int input = 0;
};

// The VAE decoder's work for a latent clip of T × h × w (the time model's VAE term).
struct VaeWork {
  double flops = 0;             // convs, 1×1 convs and the mid attention, whole frame
  double bytes = 0;             // memory-bound passes, whole frame
  double frame_bytes = 0;       // conv_out's output read and the f32 RGB frames written, whole frame
  double spatial_convs = 0;     // conv calls with a spatial kernel (k > 1): each exchanges halos when split
  double spatial_in_bytes = 0;  // their input frames' bytes, whole frame
  double halo_bytes = 0;        // one neighbour's halo of every spatial conv call
  double attn_gathers = 0, attn_gather_bytes = 0;  // gathers of the whole frame's attention inputs
  double out_gathers = 0, out_gather_bytes = 0;    // gathers of the output frames
};
// (T, h, w latent extents, bytes per activation element, split along width) → the work.
using VaeWorkFn = std::function<VaeWork(double T, double h, double w, double eb, bool split_w)>;

// A prompt the transformer encodes itself (Cosmos 3): no text encoder and no cross-attention; a
// prefill of the understanding tower makes the prompt's K/V once per prompt and branch, and every
// layer of the generation tower attends its video queries to [prompt K/V | video K/V].
struct PlanPromptPrefix {
  int64_t tokens = 0;                  // the prompt's tokens as priced, per branch
  std::string tokens_source;           // how `tokens` was chosen
  double prefill_flops_per_token = 0;  // Σ 2·K·N of the understanding tower's linears, all layers
  int kv_heads = 0;                    // K/V heads (GQA) of both towers; the attention repeats them to `heads`
  int64_t tower_bytes = 0;             // the understanding tower's weights at the run dtype (embedding included)
  int64_t layer_bytes = 0;             // its largest layer (a device slot when streamed)
  // Streamed for the prefill (text.device stream, or auto when only the rest fits: the understanding
  // tower in pinned host memory, two device layer slots), else resident for the whole run; `why`
  // says which rule chose it.
  bool streamed = false;
  std::string why;
};

// Model facts the plan needs (configs; weight sizes from headers when present, else config math).
struct PlanModel {
  std::string family, variant;  // ModelTraits
  int heads = 40, head_dim = 128, layers = 40, ffn = 13824;
  int kv_heads = 0;  // K/V heads of the self-attention (GQA: they divide `heads`); 0: `heads`
  int in_channels = 16, out_channels = 16, text_dim = 4096, freq_dim = 256;
  std::array<int, 3> patch = {1, 2, 2};
  bool pads_to_patch = false;  // the DiT zero-pads the latent height and width to the patch (Cosmos 3)
  int vae_spatial = 8, vae_temporal = 4;
  int experts = 1;
  int64_t dit_params = 0;       // one expert
  int64_t dit_bytes = 0;        // one expert at the run dtype (keep-fp32 modules in fp32)
  int64_t dit_block_bytes = 0;  // the largest block, at the run dtype (DWDP double buffer)
  // One expert's bytes DWDP shares over a group (its blocks; Cosmos 3: the generation layers, the
  // rest whole on every rank); -1: all of dit_bytes.
  int64_t dwdp_shared_bytes = -1;
  std::string dit_source;       // "safetensors headers" or "config math"
  int64_t te_params = 0, te_bytes = 0;
  std::string te_source;
  int64_t vae_bytes = -1;  // -1: unknown (no weights)
  int text_len = 512;      // prompt context length (max_sequence_length)
  int64_t te_embed_params = 0;  // vocab · d_model (a lookup, no FLOPs)
  int te_layers = 24, te_dmodel = 4096;
  // A block's linears per token (self-attention, cross-attention queries/outputs, FFN); the
  // cross-attention keys/values of the prompt are computed once per prompt.
  std::vector<PlanLinear> block_linears;
  VaeWorkFn vae_work;  // the family's VAE decoder work
  // Image-to-video: what a line's images become ("" for a text-only model) and the image
  // encoder's weights (-1: none or unknown), on the replica leaders.
  std::string conditioning;
  int64_t image_encoder_bytes = -1;
  double image_encoder_flops = 0;     // one image through the image encoder (0: none)
  bool condition_frames_all = false;  // the VAE encodes every frame of the condition video (else the first)
  // The VAE encoder's FLOPs for a condition video of F × H × W pixels (null: the model encodes none).
  std::function<double(double F, double H, double W)> vae_encode_flops;
  // Lines the family adds to the plan's model section (e.g. Cosmos 3's prompt tokens and prefill).
  std::vector<std::string> facts;
  // Set for a model whose prompt is a prefix of its own attention (priced instead of the text
  // encoder and the cross-attention).
  std::optional<PlanPromptPrefix> prompt_prefix;
  int dim() const { return heads * head_dim; }
  int self_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  // The index of the block linear named `name`, or -1.
  int linear_index(const std::string& name) const {
    for (size_t i = 0; i < block_linears.size(); ++i)
      if (block_linears[i].name == name) return int(i);
    return -1;
  }
};

// One recipe LoRA on one expert: what `vgen plan` lists (headers read, names and shapes checked).
struct PlanLora {
  int index = 0;  // lora[index]
  std::string path;
  double scale = 1.0;
  std::string component;  // the expert's component folder
  int tensors = 0;        // weights (and biases) it changes
  int64_t max_rank = 0;
  size_t skipped_keys = 0;  // lora_strict false: keys that match nothing
};

// fp8_config.bf16_linears as a flag per block linear of `m` (true: kept in bf16 in every block);
// kRecipe naming the entry that is not a block linear.
std::vector<bool> plan_bf16_linears(const PlanModel& m, const std::vector<std::string>& names);

}  // namespace vgen
