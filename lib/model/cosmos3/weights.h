// Cosmos3OmniTransformer weights from the flat `layers.N.*` keys of transformer/. Every layer holds
// two towers: understanding (prompt tokens: to_q/k/v/out, norm_q/k, mlp, input/post norms) and
// generation (video tokens: add_q/k/v_proj, to_add_out, norm_added_q/k, mlp_moe_gen, *_moe_gen
// norms). lm_head, the final understanding norm and the sound and action heads are never read.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/safetensors.h"
#include "model/cosmos3/config.h"
#include "ops/linear_layer.h"
#include "parallel/dwdp.h"

namespace vgen {

class WeightStream;  // dist/weight_stream.h

// One tower of one layer. Q and K rows (and their per-head norms) are permuted at load so that
// diffusers' rotate-half pairs (j, j + Dh/2) of each head sit at (2j, 2j + 1), the layout of
// ops/rope.h; Q·Kᵀ is unchanged, V and the output projection are untouched.
struct Cosmos3Tower {
  Tensor in_norm, post_norm;  // [D]
  LinearWeights q, k, v;      // w [H·Dh, D], [KVH·Dh, D] (+ b [N] or undefined)
  LinearWeights o;            // w [D, H·Dh]
  Tensor q_norm, k_norm;      // [Dh] or undefined (no Q/K norm)
  Tensor k_norm_for_gen;      // understanding tower only: [Dh] or undefined
  LinearWeights gate, up;     // w [F, D] (gate.w undefined for relu²), no bias
  LinearWeights down;         // w [D, F], no bias
};

struct Cosmos3Layer {
  Cosmos3Tower und, gen;
};

// text.device stream on a GPU: every layer's understanding tower packed into one block of pinned
// host memory (load_tower's order, 256-byte aligned offsets; Cosmos3Layer::und are views of it), and
// two device blocks of the same layout whose views the prefill computes with (und_stream.h).
struct Cosmos3UndHost {
  size_t layer_bytes = 0;                          // 0: the understanding tower is resident
  std::vector<std::shared_ptr<Storage>> layers;    // pinned host, one per layer
  std::array<std::shared_ptr<Storage>, 2> slot_blocks;  // device
  std::array<Cosmos3Tower, 2> slots;               // views of slot_blocks, shaped as a layer's und
  bool streamed() const { return layer_bytes > 0; }
};

// DWDP on the GPU (parallel/dwdp.h): the generation tower's layers are the blocks, each assembled in
// staging slot 0 from the weight stream (Q/K rows permuted there), this rank's slices kept in its
// arena; a layer held whole runs from the arena (Cosmos3Layer::gen views it), the others have an
// empty gen and run from a staging slot.
struct Cosmos3GenDwdp {
  std::shared_ptr<DwdpDeviceWeights> weights;
  std::array<Cosmos3Tower, 2> staged;  // views of the two staging slots
  std::shared_ptr<Communicator> world;
  Cosmos3GenDwdp() = default;
  Cosmos3GenDwdp(const Cosmos3GenDwdp&) = delete;
  Cosmos3GenDwdp& operator=(const Cosmos3GenDwdp&) = delete;
  // The compute stream synchronised and a barrier on `world` (unless an exception is unwinding), so
  // no peer frees its arena while another still copies from it.
  ~Cosmos3GenDwdp();
};

// How the device shares the generation layers: size > 1 turns DWDP on (world: every rank, the
// handles' exchange is collective over it).
struct Cosmos3DwdpOptions {
  int size = 1;
  DwdpTransport transport = DwdpTransport::kAuto;
  std::shared_ptr<Communicator> world;
};

struct Cosmos3Weights {
  Tensor embed;                  // [V, D] the file's host view in its dtype (a prompt's rows are converted)
  std::vector<Cosmos3Layer> layers;
  Cosmos3UndHost und_host;       // streamed understanding tower (else empty)
  Tensor norm_gen;               // norm_moe_gen [D]
  LinearWeights proj_in;         // w [D, C·p²] (columns permuted to (c, p, q) at load: latent_tokens.h), b [D]
  LinearWeights proj_out;        // w [C·p², D], b [C·p²]
  LinearWeights time1, time2;    // w [D, 256], [D, D], b [D] f32 (diffusers keeps them fp32)
  std::shared_ptr<Cosmos3GenDwdp> gen_dwdp;  // device DWDP (else null)
};

// Reads the weights named above from `store` (shapes checked against `cfg`), converted to `dtype`
// and placed on `device` (the embedding table stays a host view, the time embedder f32).
Cosmos3Weights load_cosmos3_weights(const WeightStore& store, const Cosmos3Config& cfg, Device device, DType dtype);
// The same tensors as device tensors of `dtype` (the time embedder f32) requested from component
// `component` of `stream` (registered from `store`; the embedding table a host view of `store`):
// in place, the Q/K rows permuted on the device, once the stream's next run() has returned.
// proj_in's weight (small) is read and permuted on the host, then copied. `und_on_host`: the
// understanding tower is not requested but read now from the mapped files into pinned host memory
// (Cosmos3UndHost: converted to `dtype` and its Q/K rows permuted on the host, as the device does).
// `dwdp` (size > 1): the generation layers shared as Cosmos3GenDwdp says, each layer's requests run
// by the stream as it is placed (collective over the stream's node and over dwdp.world).
Cosmos3Weights request_cosmos3_weights(WeightStream& stream, int component, const WeightStore& store,
                                       const Cosmos3Config& cfg, DType dtype, bool und_on_host = false,
                                       const Cosmos3DwdpOptions& dwdp = {});
// The understanding tower of every layer of `layers` read from the mapped files of `store` into one
// host block per layer from `alloc` (pinned memory on a GPU: request_cosmos3_weights), converted to
// `dtype` and the Q/K rows permuted, as Cosmos3UndHost keeps it: layers[i].und become views of
// blocks[i]. Returns the bytes of a layer.
size_t pack_cosmos3_und(const WeightStore& store, const Cosmos3Config& cfg, DType dtype,
                        std::vector<Cosmos3Layer>& layers, std::vector<std::shared_ptr<Storage>>& blocks,
                        const std::function<std::shared_ptr<Storage>(size_t)>& alloc);
// The same tensors checked by name, shape and float dtype from the headers alone (kModel naming one).
void check_cosmos3_weights(const WeightStore& store, const Cosmos3Config& cfg);

// The row permutation of Q/K projections applied at load: w [heads·Dh, ...] (or a bias / norm
// weight with heads·Dh or Dh entries) → a copy with row h·Dh + 2j from h·Dh + j and h·Dh + 2j + 1
// from h·Dh + Dh/2 + j. Host f32.
Tensor permute_rope_rows(const Tensor& w, int64_t head_dim);
// The same permutation of a device tensor (any dtype) into `dst` (same shape and dtype, not src),
// queued on compute_stream(). kUsage in a CPU-only build.
void permute_rope_rows_device(const Tensor& src, Tensor& dst, int64_t head_dim);
// `bytes` of pinned (page-locked) host memory, freed with the storage; kUsage in a CPU-only build.
std::shared_ptr<Storage> pinned_host_storage(size_t bytes);

// proj_in's weight [D, p·p·C] with its columns in diffusers' (p, q, c) patch order → a copy in
// (c, p, q) order, the layout of ops/embed.h patchify: column (c·p + i)·p + j from (i·p + j)·C + c.
// Host f32.
Tensor permute_patch_columns(const Tensor& w, int64_t channels, int64_t patch);

}  // namespace vgen
