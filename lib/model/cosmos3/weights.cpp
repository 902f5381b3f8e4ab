#include "model/cosmos3/weights.h"

#include <cstring>
#include <exception>
#include <functional>

#include "core/cuda_stream.h"
#include "core/device_memory.h"
#include "core/log.h"
#include "core/no_cuda_error.h"
#include "dist/weight_stream.h"

namespace vgen {
namespace {

// One understanding layer packed into one block at fixed offsets, in the order load_tower takes
// its tensors: kMeasure counts the bytes, kFill reads each tensor from the mapped file into the block
// (converted to the dtype, Q/K rows permuted), kView hands out views of a block of that layout.
struct TowerArena {
  enum class Mode { kMeasure, kFill, kView } mode = Mode::kMeasure;
  std::shared_ptr<Storage> block;
  size_t cursor = 0;

  Tensor take(const WeightStore& store, const std::string& name, const Shape& shape, DType dt, int64_t rope_hd) {
    store.check_float(name, shape);
    const size_t off = (cursor + 255) / 256 * 256, n = size_t(shape_numel(shape));
    cursor = off + n * dtype_size(dt);
    if (mode == Mode::kMeasure) return Tensor();
    Tensor t = Tensor::from_storage(block, off, shape, dt);
    if (mode == Mode::kFill) fill(store.get(name), t, rope_hd);
    return t;
  }

  // permute_rope_rows on the file's rows (a copy of each, then the conversion: the device's result).
  static void fill(const Tensor& src, Tensor& dst, int64_t rope_hd) {
    const size_t n = size_t(src.numel());
    if (rope_hd == 0) return convert_dtype(src.raw(), src.dtype(), dst.raw(), dst.dtype(), n);
    const int64_t rows = src.dim(0), row = src.numel() / rows, half = rope_hd / 2;
    const size_t sb = size_t(row) * dtype_size(src.dtype()), db = size_t(row) * dtype_size(dst.dtype());
    const char* in = static_cast<const char*>(src.raw());
    char* out = static_cast<char*>(dst.raw());
    for (int64_t h = 0; h < rows / rope_hd; ++h)
      for (int64_t j = 0; j < 2 * half; ++j) {  // destination row base + j from base + (j odd ? half : 0) + j/2
        const int64_t base = h * rope_hd, from = base + (j % 2 ? half : 0) + j / 2;
        convert_dtype(in + size_t(from) * sb, src.dtype(), out + size_t(base + j) * db, dst.dtype(), size_t(row));
      }
  }
};

constexpr size_t kDwdpAlign = 256;  // each tensor of a DWDP span

struct Loader {
  const WeightStore& store;
  const Cosmos3Config& cfg;
  Device device;
  DType dtype;
  bool headers_only = false;  // check names, shapes and dtypes; read nothing, return undefined tensors
  WeightStream* stream = nullptr;  // device requests of component `component`, filled by its run()
  int component = -1;
  TowerArena* arena = nullptr;     // the understanding tower packed into one block per layer
  // Device DWDP: the generation tower laid out in a span (a staging slot, or the arena for a layer
  // held whole); views_only: views of it, nothing requested; measure: counts its bytes, takes nothing.
  DwdpSpan* span = nullptr;
  bool views_only = false;
  size_t* measure = nullptr;

  Tensor place(const Tensor& host_f32) const { return host_f32.to(dtype).to(device); }
  bool checked(const std::string& name, const Shape& shape) const {
    if (headers_only) store.check_float(name, shape);
    return headers_only;
  }
  // A device tensor of `dt` that the stream fills from the file (converted on the device).
  Tensor requested(const std::string& name, const Shape& shape, DType dt, bool into_span = true) const {
    store.check_float(name, shape);
    if (measure) {
      *measure += DwdpSpan::aligned(size_t(shape_numel(shape)) * dtype_size(dt), kDwdpAlign);
      return Tensor();
    }
    Tensor dst = span && into_span ? span->next(shape, dt) : Tensor::empty(shape, dt, Device::kCUDA);
    if (!views_only) stream->request(component, name, dst, shape);
    return dst;
  }
  Tensor get(const std::string& name, const Shape& shape) const {
    if (checked(name, shape)) return Tensor();
    if (arena) return arena->take(store, name, shape, dtype, 0);
    return stream ? requested(name, shape, dtype) : place(store.get_f32(name, shape));
  }
  Tensor get_f32(const std::string& name, const Shape& shape) const {
    if (checked(name, shape)) return Tensor();
    return stream ? requested(name, shape, DType::kF32) : store.get_f32(name, shape).to(device);
  }
  // A Q/K weight, bias or per-head norm, rows permuted into the rope_ pair layout (streamed: on the
  // device once the bytes are in, the staging copy released then).
  Tensor get_rope(const std::string& name, const Shape& shape) const {
    if (checked(name, shape)) return Tensor();
    if (arena) return arena->take(store, name, shape, dtype, cfg.head_dim);
    if (!stream) return place(permute_rope_rows(store.get_f32(name, shape), cfg.head_dim));
    if (views_only || measure) return requested(name, shape, dtype);
    Tensor staged = requested(name, shape, dtype, false);
    Tensor out = span ? span->next(shape, dtype) : Tensor::empty(shape, dtype, Device::kCUDA);
    stream->on_done([staged, out, hd = int64_t(cfg.head_dim)]() mutable {
      permute_rope_rows_device(staged, out, hd);
      staged = Tensor();
    });
    return out;
  }
  // proj_in's weight, columns permuted from diffusers' (p, q, c) patch order to (c, p, q) on the
  // host (streamed or not: it is small).
  Tensor get_patch(const std::string& name, const Shape& shape) const {
    return checked(name, shape) ? Tensor()
                                : permute_patch_columns(store.get_f32(name, shape), cfg.latent_channel,
                                                        cfg.latent_patch_size)
                                      .to(dtype)
                                      .to(stream ? Device::kCUDA : device);
  }
  // A bias exists exactly when attention_bias says so.
  Tensor bias(const std::string& name, int64_t n, bool rope) const {
    if (!cfg.attention_bias) return Tensor();
    return rope ? get_rope(name, {n}) : get(name, {n});
  }
};

struct TowerNames {
  const char *q, *k, *v, *o, *q_norm, *k_norm, *mlp, *in_norm, *post_norm;
};
constexpr TowerNames kUnd{"to_q", "to_k", "to_v", "to_out", "norm_q", "norm_k", "mlp", "input_layernorm",
                          "post_attention_layernorm"};
constexpr TowerNames kGen{"add_q_proj", "add_k_proj", "add_v_proj", "to_add_out", "norm_added_q", "norm_added_k",
                          "mlp_moe_gen", "input_layernorm_moe_gen", "post_attention_layernorm_moe_gen"};

Cosmos3Tower load_tower(const Loader& L, const std::string& pre, const TowerNames& n, bool qk_norm) {
  const Cosmos3Config& c = L.cfg;
  const int64_t D = c.hidden_size, F = c.intermediate_size, Dh = c.head_dim, QD = c.q_dim(), KD = c.kv_dim();
  const std::string at = pre + "self_attn.";
  Cosmos3Tower t;
  t.in_norm = L.get(pre + n.in_norm + ".weight", {D});
  t.post_norm = L.get(pre + n.post_norm + ".weight", {D});
  t.q.w = L.get_rope(at + n.q + ".weight", {QD, D});
  t.k.w = L.get_rope(at + n.k + ".weight", {KD, D});
  t.v.w = L.get(at + n.v + ".weight", {KD, D});
  t.o.w = L.get(at + n.o + ".weight", {D, QD});
  t.q.b = L.bias(at + n.q + ".bias", QD, true);
  t.k.b = L.bias(at + n.k + ".bias", KD, true);
  t.v.b = L.bias(at + n.v + ".bias", KD, false);
  t.o.b = L.bias(at + n.o + ".bias", D, false);
  if (qk_norm) {
    t.q_norm = L.get_rope(at + n.q_norm + ".weight", {Dh});
    t.k_norm = L.get_rope(at + n.k_norm + ".weight", {Dh});
  }
  const std::string mlp = pre + n.mlp + ".";
  if (c.hidden_act == Cosmos3Act::kSilu) t.gate.w = L.get(mlp + "gate_proj.weight", {F, D});
  t.up.w = L.get(mlp + "up_proj.weight", {F, D});
  t.down.w = L.get(mlp + "down_proj.weight", {D, F});
  return t;
}

}  // namespace

Tensor permute_rope_rows(const Tensor& w, int64_t head_dim) {
  VGEN_ASSERT(w.is_cpu() && w.dtype() == DType::kF32 && w.ndim() >= 1 && w.dim(0) % head_dim == 0 && head_dim % 2 == 0,
              "permute_rope_rows: {} for head_dim {}", w.str(), head_dim);
  const int64_t rows = w.dim(0), row = w.numel() / rows, half = head_dim / 2;
  Tensor out = Tensor::empty(w.shape(), DType::kF32);  // same shape
  const float* src = w.f32();
  float* dst = out.f32();
  for (int64_t h = 0; h < rows / head_dim; ++h)
    for (int64_t j = 0; j < half; ++j) {
      const int64_t base = h * head_dim;
      std::memcpy(dst + (base + 2 * j) * row, src + (base + j) * row, size_t(row) * sizeof(float));
      std::memcpy(dst + (base + 2 * j + 1) * row, src + (base + half + j) * row, size_t(row) * sizeof(float));
    }
  return out;
}

Tensor permute_patch_columns(const Tensor& w, int64_t channels, int64_t patch) {
  const int64_t C = channels, p = patch;
  VGEN_ASSERT(w.is_cpu() && w.dtype() == DType::kF32 && w.ndim() == 2 && w.dim(1) == C * p * p,
              "permute_patch_columns: {} for {} channels and patch {}", w.str(), C, p);
  const int64_t rows = w.dim(0), P = w.dim(1);
  Tensor out = Tensor::empty(w.shape(), DType::kF32);  // [D, C·p·p]
  const float* src = w.f32();
  float* dst = out.f32();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < p; ++j)
        for (int64_t c = 0; c < C; ++c) dst[r * P + (c * p + i) * p + j] = src[r * P + (i * p + j) * C + c];
  return out;
}

namespace {

// Every rank's arena complete (the compute stream drained), then the handles exchanged.
void publish_gen_dwdp(Cosmos3GenDwdp& g) {
  sync_compute_stream();
  g.weights->publish(*g.world);
  const DwdpLayout& l = g.weights->layout();
  log_info("DWDP: {:.2f} GiB of generation-layer slices on this GPU ({} KiB slices over a group of {}, shared over "
           "{}) + 2 staging slots ({:.2f} GiB)",
           double(l.arena_bytes(DwdpPlan::of(g.world->rank(), g.world->size(), l.group_size()).rank)) / 1073741824.0,
           l.slice_bytes() / 1024, l.group_size(), g.weights->transport(), 2.0 * double(l.staged_bytes()) / 1073741824.0);
}

// A layer's understanding tower (k_norm_und_for_gen with it).
Cosmos3Tower load_und(const Loader& L, const std::string& pre) {
  Cosmos3Tower t = load_tower(L, pre, kUnd, L.cfg.qk_norm_for_text);
  if (L.cfg.has_und_k_norm_for_gen())
    t.k_norm_for_gen = L.get_rope(pre + "self_attn.k_norm_und_for_gen.weight", {L.cfg.head_dim});
  return t;
}

// Every layer's understanding tower packed by `A` (an arena loader) into blocks from `alloc`: the
// blocks allocated here (pinned memory belongs to this thread's device), then filled by a few threads
// (the conversions and copies of tens of GB), errors rethrown here.
using BlockAlloc = std::function<std::shared_ptr<Storage>(size_t)>;
constexpr int kPackThreads = 4;

size_t pack_und(const Loader& A, TowerArena& arena, std::vector<Cosmos3Layer>& layers,
                std::vector<std::shared_ptr<Storage>>& blocks, const BlockAlloc& alloc) {
  arena = TowerArena{};
  load_und(A, "layers.0.");  // measure the layout
  const size_t bytes = arena.cursor, first = blocks.size();
  const int64_t n = int64_t(layers.size());
  for (int64_t i = 0; i < n; ++i) blocks.push_back(alloc(bytes));
  std::vector<std::exception_ptr> errors(layers.size());
#pragma omp parallel for schedule(dynamic) num_threads(kPackThreads)
  for (int64_t i = 0; i < n; ++i) {
    try {
      TowerArena own{TowerArena::Mode::kFill, blocks[first + size_t(i)], 0};
      Loader B = A;
      B.arena = &own;
      layers[size_t(i)].und = load_und(B, "layers." + std::to_string(i) + ".");
      VGEN_ASSERT(own.cursor == bytes, "cosmos3: understanding layer {} packs {} bytes, layer 0 {}", i, own.cursor,
                  bytes);
    } catch (...) {
      errors[size_t(i)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return bytes;
}

// Every layer's understanding tower into pinned host blocks, and the two device slots of that layout.
Cosmos3UndHost load_und_host(const Loader& L, std::vector<Cosmos3Layer>& layers) {
  Loader A = L;
  A.stream = nullptr;
  TowerArena arena;
  A.arena = &arena;
  Cosmos3UndHost h;
  h.layer_bytes = pack_und(A, arena, layers, h.layers, pinned_host_storage);
  for (size_t s = 0; s < 2; ++s) {
    auto block = std::make_shared<Storage>();
    block->bytes = h.layer_bytes;
    block->device = Device::kCUDA;
    block->ptr = device_malloc(h.layer_bytes);
    block->release = [](void* p) { device_free(p); };
    arena = TowerArena{TowerArena::Mode::kView, block, 0};
    h.slots[s] = load_und(A, "layers.0.");
    h.slot_blocks[s] = block;
  }
  return h;
}

// Device DWDP: a generation tower's views of the span at `base` (a slot, or the arena), named as
// layer `pre`'s (the names only check the headers).
Cosmos3Tower gen_views(const Loader& L, const Cosmos3GenDwdp& g, void* base, const std::string& pre) {
  DwdpSpan views(base, g.weights->layout().staged_bytes(), Device::kCUDA, kDwdpAlign, g.weights);
  Loader V = L;
  V.span = &views;
  V.views_only = true;
  return load_tower(V, pre, kGen, true);
}

// The arenas and slots of the generation layers (collective over o.world): a layer's span is its
// tensors at the compute dtype in load_tower's order.
std::shared_ptr<Cosmos3GenDwdp> start_gen_dwdp(const Loader& L, const Cosmos3DwdpOptions& o) {
  VGEN_CHECK(o.world != nullptr, ExitCode::kInternal, "dwdp_size {} without a world communicator", o.size);
  size_t bytes = 0;
  Loader M = L;
  M.measure = &bytes;
  load_tower(M, "layers.0.", kGen, true);
  const DwdpPlan plan = DwdpPlan::of(o.world->rank(), o.world->size(), o.size);
  const DwdpLayout layout(plan.size, L.cfg.num_hidden_layers, bytes, kDwdpAlign);
  auto g = std::make_shared<Cosmos3GenDwdp>();
  g->world = o.world;
  g->weights = make_dwdp_device_weights(plan, layout, o.transport, *o.world);
  for (size_t s = 0; s < 2; ++s) g->staged[s] = gen_views(L, *g, g->weights->slot(int(s)), "layers.0.");
  return g;
}

// Generation layer i assembled in staging slot 0 from the stream (its run() now: the Q/K rows
// permuted into the slot once the bytes are in), this rank's slices of it kept; the views of the
// arena when this rank holds it whole, else an empty tower.
Cosmos3Tower place_gen_layer(const Loader& L, Cosmos3GenDwdp& g, int i) {
  DwdpDeviceWeights& dw = *g.weights;
  const std::string pre = "layers." + std::to_string(i) + ".";
  {
    DwdpSpan views(dw.slot(0), dw.layout().staged_bytes(), Device::kCUDA, kDwdpAlign, g.weights);
    Loader S = L;
    S.span = &views;
    load_tower(S, pre, kGen, true);
  }
  L.stream->run();
  dw.keep_own(i, dw.slot(0));  // queued after the permutes, before the next layer's copies into the slot
  void* whole = dw.in_place(i);
  return whole ? gen_views(L, g, whole, pre) : Cosmos3Tower{};
}

Cosmos3Weights build_weights(const Loader& L, bool und_on_host = false, const Cosmos3DwdpOptions& dwdp = {}) {
  const WeightStore& store = L.store;
  const Cosmos3Config& cfg = L.cfg;
  const int64_t D = cfg.hidden_size, P = cfg.patch_latent_dim;
  Cosmos3Weights w;
  store.check_float("embed_tokens.weight", {cfg.vocab_size, D});
  w.embed = store.get("embed_tokens.weight");  // no copy of the whole table
  w.layers.reserve(size_t(cfg.num_hidden_layers));
  if (dwdp.size > 1) w.gen_dwdp = start_gen_dwdp(L, dwdp);
  for (int i = 0; i < cfg.num_hidden_layers; ++i) {
    const std::string pre = "layers." + std::to_string(i) + ".";
    Cosmos3Layer layer;
    if (!und_on_host) layer.und = load_und(L, pre);
    layer.gen = w.gen_dwdp ? place_gen_layer(L, *w.gen_dwdp, i) : load_tower(L, pre, kGen, true);
    w.layers.push_back(std::move(layer));
  }
  if (w.gen_dwdp) publish_gen_dwdp(*w.gen_dwdp);
  if (und_on_host) w.und_host = load_und_host(L, w.layers);
  w.norm_gen = L.get("norm_moe_gen.weight", {D});
  w.proj_in.w = L.get_patch("proj_in.weight", {D, P});
  w.proj_in.b = L.get("proj_in.bias", {D});
  w.proj_out.w = L.get("proj_out.weight", {P, D});
  w.proj_out.b = L.get("proj_out.bias", {P});
  w.time1.w = L.get_f32("time_embedder.linear_1.weight", {D, cfg.timestep_channels});
  w.time1.b = L.get_f32("time_embedder.linear_1.bias", {D});
  w.time2.w = L.get_f32("time_embedder.linear_2.weight", {D, D});
  w.time2.b = L.get_f32("time_embedder.linear_2.bias", {D});
  return w;
}

}  // namespace

Cosmos3Weights load_cosmos3_weights(const WeightStore& store, const Cosmos3Config& cfg, Device device, DType dtype) {
  return build_weights(Loader{store, cfg, device, dtype});
}

Cosmos3Weights request_cosmos3_weights(WeightStream& stream, int component, const WeightStore& store,
                                       const Cosmos3Config& cfg, DType dtype, bool und_on_host,
                                       const Cosmos3DwdpOptions& dwdp) {
  Loader L{store, cfg, Device::kCUDA, dtype};
  L.stream = &stream;
  L.component = component;
  return build_weights(L, und_on_host, dwdp);
}

Cosmos3GenDwdp::~Cosmos3GenDwdp() {
  if (!weights || !world || std::uncaught_exceptions() > 0) return;
  try {
    sync_compute_stream();
    world->barrier();
  } catch (...) {
    // Teardown: a failed barrier means the job is ending anyway (a peer died or aborted).
  }
}

#ifndef VGEN_WITH_CUDA
void permute_rope_rows_device(const Tensor&, Tensor&, int64_t) { throw_no_cuda("permute_rope_rows (device)"); }
std::shared_ptr<Storage> pinned_host_storage(size_t) { throw_no_cuda("pinned host memory"); }
#endif

size_t pack_cosmos3_und(const WeightStore& store, const Cosmos3Config& cfg, DType dtype,
                        std::vector<Cosmos3Layer>& layers, std::vector<std::shared_ptr<Storage>>& blocks,
                        const std::function<std::shared_ptr<Storage>(size_t)>& alloc) {
  TowerArena arena;
  Loader A{store, cfg, Device::kCPU, dtype};
  A.arena = &arena;
  return pack_und(A, arena, layers, blocks, alloc);
}

void check_cosmos3_weights(const WeightStore& store, const Cosmos3Config& cfg) {
  build_weights(Loader{store, cfg, Device::kCPU, DType::kF32, true});
}

}  // namespace vgen
