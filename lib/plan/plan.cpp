// `vgen plan`: mesh table, token shards, collective volumes and memory estimate (see plan.h).
#include "plan/plan.h"
#include "pipeline/device_check.h"

#include <fmt/format.h>

#include <algorithm>

#include "ops/fp8.h"
#include "parallel/ulysses.h"  // ulysses_kv_heads

namespace vgen {

namespace {

// Bytes with a binary unit that keeps 3-4 significant digits ("1.25 GiB", "840 B").
std::string human_bytes(double b) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) b /= 1024.0, ++u;
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.2f} {}", b, kUnits[u]);
}

std::string human_count(int64_t n) {
  if (n >= 1000000000) return fmt::format("{:.2f} B", n / 1e9);
  if (n >= 1000000) return fmt::format("{:.2f} M", n / 1e6);
  return fmt::format("{}", n);
}

// The world ranks obtained by varying the selected coordinates of `c` (in group-rank order).
template <typename Fn>
std::vector<int> group_of(const MeshShape& m, MeshCoord c, Fn vary) {
  std::vector<int> out;
  vary(c, [&](const MeshCoord& x) { out.push_back(mesh_rank_of(m, x)); });
  return out;
}

// precision fp8: the 0-based steps that run in bf16, as "1-2, 40" (1-based, for people).
std::string bf16_steps_text(const Recipe& r) {
  const int n = r.generation.num_inference_steps;
  std::vector<std::string> parts;
  for (int i = 0; i < n;) {
    if (r.fp8.step_in_fp8(i, n)) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < n && !r.fp8.step_in_fp8(j + 1, n)) ++j;
    parts.push_back(i == j ? fmt::format("{}", i + 1) : fmt::format("{}-{}", i + 1, j + 1));
    i = j + 1;
  }
  return parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, ", "));
}

// The precision line of the plan: what runs in which format.
std::string precision_text(const Recipe& r) {
  const char* rest = r.compute_dtype() == DType::kBF16 ? "bf16" : "fp32";
  if (!r.is_quantised())
    return fmt::format("{} (norms, modulation and softmax statistics fp32)", precision_name(r.precision));
  const Fp8Config& f = r.fp8;
  if (r.is_fp4())
    return fmt::format("fp4{}: block GEMMs {}, attention and the rest {} (norms, modulation and softmax statistics "
                       "fp32); steps without fp4 (fp4_config.bf16_first/last_steps): {} (of {})",
                       r.is_cuda() ? "" : " (CPU emulation: the NVFP4 quantisation, then fp32 math)",
                       f.gemm ? "NVFP4" : rest, rest, bf16_steps_text(r), r.generation.num_inference_steps);
  auto list = [](const std::vector<int>& v) { return fmt::format("{}", fmt::join(v, ", ")); };
  return fmt::format("fp8{}: self-attention {}, block GEMMs {}, cross-attention and the rest {} (norms, modulation "
                     "and softmax statistics fp32); steps without fp8 (fp8_config.bf16_first/last_steps): {} (of {}){}{}{}",
                     r.is_cuda() ? "" : " (CPU emulation: the fp8 quantisation, then fp32 math)",
                     !f.attention ? rest : f.qk_int8() ? "INT8 Q·Kᵀ + e4m3 P·V" : "e4m3",
                     f.gemm ? f.gemm_label() : rest, rest, bf16_steps_text(r), r.generation.num_inference_steps,
                     f.bf16_blocks.empty() ? "" : "; blocks wholly in bf16 (fp8_config.bf16_blocks): " + list(f.bf16_blocks),
                     f.bf16_gemm_blocks.empty()
                         ? ""
                         : "; blocks with bf16 GEMMs (fp8_config.bf16_gemm_blocks): " + list(f.bf16_gemm_blocks),
                     f.bf16_linears.empty() || !f.gemm
                         ? ""
                         : fmt::format("; linears in bf16 in every block (fp8_config.bf16_linears): {}",
                                       fmt::join(f.bf16_linears, ", ")));
}

// Tokens: latent T = (F-1)/4 + 1, H = height/8, W = width/8, then the patch grid, padded to a
// multiple of the seq degree.
PlanTokens plan_tokens(const GenerationConfig& g, const PlanModel& md, const MeshShape& m) {
  // A DiT that pads the latent grid to its patch takes any multiple of the VAE's factor.
  const int sp_h = md.vae_spatial * (md.pads_to_patch ? 1 : md.patch[1]);
  const int sp_w = md.vae_spatial * (md.pads_to_patch ? 1 : md.patch[2]);
  VGEN_CHECK(g.height % sp_h == 0 && g.width % sp_w == 0, ExitCode::kRecipe,
             "generation.height {} / width {} must be multiples of {} / {} for this model (VAE ×{} · patch)",
             g.height, g.width, sp_h, sp_w, md.vae_spatial);
  PlanTokens t;
  t.latent_t = (g.num_frames - 1) / md.vae_temporal + 1;
  t.latent_h = g.height / md.vae_spatial;
  t.latent_w = g.width / md.vae_spatial;
  VGEN_CHECK(t.latent_t % md.patch[0] == 0, ExitCode::kRecipe,
             "generation.num_frames {}: latent frames {} not divisible by the temporal patch {}", g.num_frames,
             t.latent_t, md.patch[0]);
  auto grid = [](int64_t n, int p) { return (n + p - 1) / p; };  // exact unless the DiT pads
  t.tokens = int64_t(t.latent_t / md.patch[0]) * grid(t.latent_h, md.patch[1]) * grid(t.latent_w, md.patch[2]);
  const int sp = m.seq();
  t.padded = (t.tokens + sp - 1) / sp * sp;
  t.per_rank = t.padded / sp;
  return t;
}

// The sizes the collective volumes and the memory estimate read, per rank.
struct PlanSizes {
  double b = 0;  // activations (fp8: bf16 between ops)
  bool cfg_on = false;
  int fwd = 0;  // DiT forwards per step on this rank
  double D = 0, L = 0, s = 0;
  double cp_tokens = 0;  // tokens per rank after the Ulysses all-to-all
  double d_u = 0;        // channels (heads·head_dim) per rank after it
  // Grouped K/V heads: K and V leave the rank with ulysses_kv_heads(KVH, U) heads (the Ulysses
  // exchange's, KVH itself without Ulysses) and are expanded to the queries' heads at the kernel.
  double dkv = 0;    // K/V channels of the local tokens sent by the Ulysses all-to-all
  double dkv_u = 0;  // K/V channels per rank after it (Ring's blocks, Attention2D's gathers)
  double latent = 0;     // elements of the latents
};

PlanSizes plan_sizes(const Recipe& recipe, const Plan& p) {
  const PlanModel& md = p.model;
  const MeshShape& m = p.shape;
  const PlanTokens& t = p.tokens;
  PlanSizes z;
  z.b = recipe.compute_dtype() == DType::kBF16 ? 2 : 4;
  z.cfg_on = recipe.generation.guidance_scale > 1.0;
  z.fwd = z.cfg_on ? (m.cfg == 2 ? 1 : 2) : 1;
  z.D = md.dim(), z.L = md.layers, z.s = double(t.per_rank);
  z.cp_tokens = double(t.padded) / m.cp();
  z.d_u = z.D / m.ulysses;
  z.dkv = double(ulysses_kv_heads(md.self_kv_heads(), m.ulysses)) * md.head_dim;
  z.dkv_u = z.dkv / m.ulysses;
  z.latent = double(md.out_channels) * t.latent_t * t.latent_h * t.latent_w;
  return z;
}

// Collective volumes per rank per denoising step (bytes leaving / arriving at the rank).
void add_comm(Plan& p, const PlanSizes& z) {
  const PlanModel& md = p.model;
  const MeshShape& m = p.shape;
  const PlanTokens& t = p.tokens;
  const double b = z.b, D = z.D, L = z.L, s = z.s, cp_tokens = z.cp_tokens, d_u = z.d_u, dkv_u = z.dkv_u;
  const int fwd = z.fwd, sp = m.seq();
  if (m.ulysses > 1 && z.dkv == D)
    p.comm.push_back({"ulysses all-to-all", fwd * L * 4 * s * D * b * (m.ulysses - 1) / m.ulysses,
                      fmt::format("4 per layer of the local [{}, {}] activations", t.per_rank, md.dim())});
  else if (m.ulysses > 1)
    p.comm.push_back({"ulysses all-to-all", fwd * L * 2 * s * (D + z.dkv) * b * (m.ulysses - 1) / m.ulysses,
                      fmt::format("per layer: Q and the output [{}, {}], K and V [{}, {}] ({} K/V heads: "
                                  "lcm(KVH {}, U {}))",
                                  t.per_rank, md.dim(), t.per_rank, z.dkv, z.dkv / md.head_dim, md.self_kv_heads(),
                                  m.ulysses)});
  if (m.ring && m.cols > 1)
    p.comm.push_back({"ring K/V exchange", fwd * L * (m.cols - 1) * 2 * cp_tokens * dkv_u * b,
                      fmt::format("{} K/V block exchanges per layer of [{}, {}]", m.cols - 1, cp_tokens, dkv_u)});
  if (!m.ring && m.cp() > 1) {
    const double n = cp_tokens * d_u, nkv = cp_tokens * dkv_u;
    const double per_layer = (m.cols - 1) * n * b + 2 * (m.rows - 1) * nkv * b + (m.cols - 1) * n * b +
                             (m.cols - 1) * cp_tokens * (md.heads / m.ulysses) * 4;
    p.comm.push_back({"attention2d", fwd * L * per_layer,
                      fmt::format("per layer: Q all-gather on the row group ({} ranks), K/V all-gather on the "
                                  "column group ({} ranks), output + fp32 LSE all-to-all",
                                  m.cols, m.rows)});
  }
  const int proj = md.out_channels * md.patch[0] * md.patch[1] * md.patch[2];
  if (sp > 1)
    p.comm.push_back({"proj_out gather", fwd * (sp - 1) * s * proj * b,
                      fmt::format("all-gather of [{}, {}] over the seq group of {}", t.per_rank, proj, sp)});
  if (m.cfg == 2 && z.cfg_on)
    p.comm.push_back({"cfg all-gather", z.latent * b, "one all-gather of the noise prediction per step"});
  if (m.cfg == 2 && !z.cfg_on)
    p.notes.push_back("guidance_scale <= 1 disables CFG: the cfg-1 ranks idle during denoising");
}

// Memory per GPU: the DiT weights (by DWDP a share of its blocks and its staging slots; less a
// streamed understanding tower, whose layers pass through two device slots).
void add_dit_memory(Plan& p, const ParallelConfig& pc) {
  const PlanModel& md = p.model;
  const double dit = double(md.dit_bytes) * md.experts;
  const PlanPromptPrefix* streamed = md.prompt_prefix && md.prompt_prefix->streamed ? &*md.prompt_prefix : nullptr;
  // The understanding tower's layers stay in pinned host memory (the embedding table is a host
  // view of the file in every mode); two of its layers at a time pass through the device for the prefill.
  const double off = streamed ? double(streamed->tower_bytes) : 0.0;
  const std::string less = streamed ? fmt::format(" less the understanding tower streamed from host memory ({})",
                                                  human_bytes(off))
                                    : std::string();
  if (pc.dwdp_size > 1) {
    const double shared = md.dwdp_shared_bytes >= 0 ? double(md.dwdp_shared_bytes) * md.experts : dit;
    if (shared < dit)
      p.memory.push_back({fmt::format("DiT weights ({} expert(s), {}; its blocks, {}, 1/{} by DWDP, the rest whole){}",
                                      md.experts, md.dit_source, human_bytes(shared), pc.dwdp_size, less),
                          dit - off - shared + shared / pc.dwdp_size});
    else
      p.memory.push_back({fmt::format("DiT weights ({} expert(s), 1/{} by DWDP, {}){}", md.experts, pc.dwdp_size,
                                      md.dit_source, less),
                          dit / pc.dwdp_size - off});
    p.memory.push_back({"DWDP staging slots (2 blocks per expert)", 2.0 * md.dit_block_bytes * md.experts});
  } else if (streamed) {
    p.memory.push_back({fmt::format("DiT weights ({} params, {}){}", human_count(md.dit_params), md.dit_source, less),
                        dit - off});
  } else {
    p.memory.push_back({fmt::format("DiT weights ({} expert(s) × {} params, {})", md.experts,
                                    human_count(md.dit_params), md.dit_source),
                        dit});
  }
  if (!streamed) return;
  p.memory.push_back({"understanding tower: 2 device layer slots for the streamed prefill", 2.0 * streamed->layer_bytes});
  p.notes.push_back(fmt::format("the understanding tower's {} sit in pinned host memory, one copy per process",
                                human_bytes(off)));
}

// precision fp8: the quantised copies of the block linears (after the DiT weights item, which
// loses the bf16 originals where they are freed).
// Bytes a quantised weight takes: e4m3 / INT8 one, MXFP8 one and a scale byte per 32, NVFP4 half
// and an e4m3 scale per 16; the CPU emulation of the block formats keeps them in f32.
double quantised_bytes_per_weight(const Recipe& r) {
  const GemmFormat f = r.fp8.gemm_format_on(0);
  if (!gemm_format_block_scaled(f)) return 1.0;
  if (!r.is_cuda()) return 4.0;
  return f == GemmFormat::kNvfp4 ? 0.5 + 1.0 / 16 : 1.0 + 1.0 / 32;
}

void add_fp8_linear_memory(Plan& p, const Recipe& recipe, const PlanSizes& z) {
  const PlanModel& md = p.model;
  const ParallelConfig& pc = recipe.parallel;
  const double b = z.b;
  const Fp8BlockLists lists{recipe.fp8.bf16_blocks, recipe.fp8.bf16_gemm_blocks};
  if (recipe.is_quantised()) lists.check(md.layers);
  int quantised = 0;  // blocks with e4m3 linears: bf16_blocks and bf16_gemm_blocks keep their bf16 ones, no copy
  for (int64_t i = 0; i < md.layers; ++i) quantised += lists.gemm_in_fp8(i, md.layers);
  // fp8_config.bf16_linears: those keep their bf16 weight only, in every block.
  const std::vector<bool> bf16_lin =
      recipe.is_quantised() ? plan_bf16_linears(md, recipe.fp8.bf16_linears) : std::vector<bool>(md.block_linears.size());
  const bool all_bf16 = std::find(bf16_lin.begin(), bf16_lin.end(), false) == bf16_lin.end();
  if (!(recipe.is_quantised() && recipe.fp8.gemm && quantised > 0 && !all_bf16)) return;
  // e4m3 copies of the block linears + an fp32 scale per output channel; on the GPU the bf16
  // originals are freed unless some step runs in bf16.
  const double layers = quantised;
  double params = 0, rows = 0;  // per block, of the quantised linears: [N, K] and N
  for (size_t i = 0; i < md.block_linears.size(); ++i) {
    const double n = double(md.block_linears[i].n), k = double(md.block_linears[i].k);
    if (!bf16_lin[i]) params += layers * n * k, rows += layers * n;
  }
  if (pc.dwdp_size > 1) {
    p.notes.push_back("precision fp8 with DWDP (CPU): each staged block is quantised at its use, no quantised copy kept");
    return;
  }
  const bool freed = recipe.is_cuda() && !recipe.fp8.has_bf16_steps();
  if (freed) {  // the DiT weights item (pushed first, above) loses the bf16 originals
    p.memory[0].first += ", without the bf16 block linears (freed: no bf16 steps)";
    p.memory[0].second -= params * b * md.experts;
  }
  p.memory.push_back({fmt::format("precision {}: {} block linears + fp32 scales ({} expert(s){}){}",
                                  precision_name(recipe.precision), recipe.fp8.gemm_label(), md.experts,
                                  quantised < md.layers ? fmt::format(", {} of {} blocks", quantised, md.layers)
                                                        : std::string(),
                                  freed              ? ""
                                  : recipe.is_cuda() ? ", beside the bf16 ones (kept for the bf16 steps)"
                                                     : ", beside the fp32 weights"),
                      (params * quantised_bytes_per_weight(recipe) + 4 * rows) * md.experts});
}

// Memory per GPU beside the DiT: the text encoder and VAE weights, the text K/V and first-block
// caches, the DiT's activations and precision fp8's attention workspace.
void add_runtime_memory(Plan& p, const Recipe& recipe, const PlanSizes& z) {
  const PlanModel& md = p.model;
  const MeshShape& m = p.shape;
  const PlanTokens& t = p.tokens;
  const double b = z.b, D = z.D, L = z.L, s = z.s, cp_tokens = z.cp_tokens, d_u = z.d_u;
  if (md.te_params == 0) {
    // No text encoder (Cosmos 3: the prompt's ids go to the transformer's understanding tower).
  } else if (recipe.text_on_cuda() || !recipe.is_cuda()) {
    p.memory.push_back({fmt::format("UMT5 encoder weights ({} params, {}; replica leaders only{})",
                                    human_count(md.te_params), md.te_source, recipe.is_cuda() ? "" : ", host"),
                        double(md.te_bytes)});
  } else {
    p.notes.push_back(fmt::format("text.device cpu: the UMT5 encoder ({} params) runs on the host in fp32 ({})",
                                  human_count(md.te_params), human_bytes(double(md.te_params) * 4)));
  }
  if (md.vae_bytes >= 0) p.memory.push_back({"VAE weights (fp32)", double(md.vae_bytes)});
  else p.notes.push_back("VAE weights not estimated (no vae/ safetensors)");
  if (md.image_encoder_bytes >= 0)
    p.memory.push_back({"CLIP image encoder weights (replica leaders only)", double(md.image_encoder_bytes)});
  const int streams = z.cfg_on ? (m.cfg == 2 ? 1 : 2) : 1;
  if (const auto& pp = md.prompt_prefix)  // the prompt's K/V of both towers' KV heads, whole on every rank
    p.memory.push_back({fmt::format("prompt K/V from the prefill ({} layers × {} stream(s) × {} tokens × {} KV heads)",
                                    md.layers, streams, pp->tokens, pp->kv_heads),
                        L * streams * 2.0 * double(pp->tokens) * pp->kv_heads * md.head_dim * b});
  else
    p.memory.push_back({fmt::format("text K/V cache ({} layers × {} stream(s) × {} tokens)", md.layers, streams,
                                    md.text_len),
                        L * streams * 2.0 * md.text_len * D * b});
  if (recipe.cache.first_block_threshold > 0)  // one expert's caches at a time (denoise releases the other's)
    p.memory.push_back({fmt::format("first-block cache ({} stream(s) × 2 of [{}, {}], + 3 per forward)", streams,
                                    t.per_rank, md.dim()),
                        (streams * 2.0 + 3.0) * s * D * b});
  double act = s * D * 4 /*fp32 residual*/ + 5 * s * D * b /*norm, q, k, v, attn out*/ + 2 * s * md.ffn * b;
  act += 4 * cp_tokens * d_u * b;  // attention inputs/outputs after the all-to-all
  if (m.ring && m.cols > 1) act += 4 * cp_tokens * d_u * b + cp_tokens * d_u * 4;
  if (!m.ring && m.cp() > 1) {
    const double rows_tok = double(t.padded) / m.rows, cols_tok = double(t.padded) / m.cols;
    act += rows_tok * d_u * (b + 4) + 2 * cols_tok * d_u * b;
  }
  act += 4 * z.latent * 4;  // latents, noise predictions, scheduler history (fp32)
  p.memory.push_back({"DiT activations (rough)", act});
  // attention_fp8_workspace_bytes (the own kernel: e4m3 Q, K, Vᵀ, 128-token padding) or, under
  // attention_config.backend cudnn, attention_cudnn_fp8_workspace_bytes (e4m3 Q, K, V and a 2-byte output).
  const bool cudnn_fp8 = recipe.attention.backend == AttentionBackend::kCudnn;
  if (recipe.is_fp8() && recipe.fp8.attention && recipe.is_cuda())
    p.memory.push_back({cudnn_fp8 ? "precision fp8: attention workspace (cuDNN: e4m3 Q, K, V and the output of one call)"
                                  : "precision fp8: attention workspace (e4m3 Q, K, Vᵀ of one call)",
                        (cudnn_fp8 ? 5.0 : 3.0) * (cp_tokens + 128) * d_u + 8.0 * cp_tokens * (d_u / double(md.head_dim))});
  p.notes.push_back("VAE decode activations are not included (bounded by the frame-by-frame decode)");
}

}  // namespace

std::string format_rank_list(const std::vector<int>& v) {
  if (v.empty()) return "-";
  bool arith = v.size() >= 4;
  for (size_t i = 2; arith && i < v.size(); ++i) arith = v[i] - v[i - 1] == v[1] - v[0];
  if (arith && v[1] - v[0] == 1) return fmt::format("[{}-{}]", v.front(), v.back());
  if (arith) return fmt::format("[{},{},...,{}]", v[0], v[1], v.back());
  return fmt::format("[{}]", fmt::join(v, ","));
}

PlanRank plan_rank(const MeshShape& m, int rank) {
  PlanRank r;
  r.rank = rank;
  r.coord = mesh_coord_of(m, rank);
  r.seq_rank = seq_rank_of(m, r.coord);
  const MeshCoord c = r.coord;
  r.cfg = group_of(m, c, [&](MeshCoord x, auto emit) { for (x.cfg = 0; x.cfg < m.cfg; ++x.cfg) emit(x); });
  r.cp = group_of(m, c, [&](MeshCoord x, auto emit) {
    for (x.row = 0; x.row < m.rows; ++x.row)
      for (x.col = 0; x.col < m.cols; ++x.col) emit(x);
  });
  // Row group: the cols ranks of one row (Attention2D Q gather / the ring); col group: one column.
  r.row = group_of(m, c, [&](MeshCoord x, auto emit) { for (x.col = 0; x.col < m.cols; ++x.col) emit(x); });
  r.col = group_of(m, c, [&](MeshCoord x, auto emit) { for (x.row = 0; x.row < m.rows; ++x.row) emit(x); });
  r.ulysses = group_of(m, c, [&](MeshCoord x, auto emit) { for (x.u = 0; x.u < m.ulysses; ++x.u) emit(x); });
  r.seq = group_of(m, c, [&](MeshCoord x, auto emit) {
    for (x.row = 0; x.row < m.rows; ++x.row)
      for (x.col = 0; x.col < m.cols; ++x.col)
        for (x.u = 0; x.u < m.ulysses; ++x.u) emit(x);
  });
  // VAE group: seq ranks 0..vae-1 of the replica's cfg-0 group.
  if (c.cfg == 0 && r.seq_rank < m.vae) {
    for (int s = 0; s < m.vae; ++s) {
      MeshCoord x = c;
      x.u = s % m.ulysses;
      int cp = s / m.ulysses;
      x.row = cp / m.cols;
      x.col = cp % m.cols;
      r.vae.push_back(mesh_rank_of(m, x));
    }
  }
  return r;
}

Plan make_plan(const Recipe& recipe, int world) {
  validate_mesh(recipe.parallel, world, 0);  // world mismatch is reported before any model file is read
  preflight_device(recipe, /*will_run=*/false);
  Plan p = make_plan(recipe, world, read_plan_model(recipe));
  p.loras = plan_loras(recipe);
  return p;
}

Plan make_plan(const Recipe& recipe, int world, const PlanModel& model, bool with_ranks) {
  Plan p;
  p.model = model;
  validate_mesh(recipe.parallel, world, p.model.heads);
  p.shape = MeshShape::from(recipe.parallel);
  p.tokens = plan_tokens(recipe.generation, p.model, p.shape);
  if (with_ranks)
    for (int r = 0; r < world; ++r) p.ranks.push_back(plan_rank(p.shape, r));
  const PlanSizes z = plan_sizes(recipe, p);
  add_comm(p, z);
  add_dit_memory(p, recipe.parallel);
  add_fp8_linear_memory(p, recipe, z);
  add_runtime_memory(p, recipe, z);
  return p;
}

std::string format_plan(const Recipe& recipe, const Plan& p) {
  const MeshShape& m = p.shape;
  const PlanModel& md = p.model;
  const PlanTokens& t = p.tokens;
  const GenerationConfig& g = recipe.generation;
  fmt::memory_buffer o;
  auto out = std::back_inserter(o);
  fmt::format_to(out, "recipe {} is valid for {} ranks\n", recipe.source_path, m.world());
  fmt::format_to(out, "model: {} ({} heads × {}, {} layers, ffn {}, {} expert(s))\n", recipe.model, md.heads,
                 md.head_dim, md.layers, md.ffn, md.experts);
  for (const PlanLora& l : p.loras)
    fmt::format_to(out, "lora[{}]: {} scale {} -> {}: {} weight(s) changed, rank {}{}\n", l.index, l.path, l.scale,
                   l.component, l.tensors, l.max_rank,
                   l.skipped_keys ? fmt::format(", {} key(s) skipped (lora_strict false)", l.skipped_keys) : "");
  fmt::format_to(out, "family: {} ({})\n", md.family, md.variant);
  for (const std::string& f : md.facts) fmt::format_to(out, "  {}\n", f);
  if (const auto& pp = md.prompt_prefix)
    fmt::format_to(out, "  understanding tower: {} ({} of the transformer's {} at the run dtype{}; {}); only the "
                   "prefill reads it, the denoising loop the generation tower\n",
                   pp->streamed ? "streamed from pinned host memory for each prefill" : "resident",
                   human_bytes(double(pp->tower_bytes)), human_bytes(double(md.dit_bytes)),
                   pp->streamed ? fmt::format(", copied {} a layer one layer ahead of the compute",
                                              human_bytes(double(pp->layer_bytes)))
                                : std::string(),
                   pp->why);
  if (!md.conditioning.empty()) fmt::format_to(out, "conditioning: {} ({})\n", md.conditioning, md.variant);
  fmt::format_to(out, "precision: {}\n", precision_text(recipe));
  fmt::format_to(out, "mesh: dp {} × cfg {} × {} × ulysses {} = {} (seq degree {}, vae group {})\n", m.dp, m.cfg,
                 m.ring ? fmt::format("ring {}", m.cols) : fmt::format("attn2d {}×{}", m.rows, m.cols), m.ulysses,
                 m.world(), m.seq(), m.vae);
  fmt::format_to(out, "\n{:>5}  {:<28} {:>4}  groups (world ranks)\n", "rank", "(dp, cfg, row, col, u)", "seq");
  for (auto& r : p.ranks) {
    const MeshCoord& c = r.coord;
    fmt::format_to(out, "{:>5}  {:<28} {:>4}  cfg {} cp {} row {} col {} ulysses {} seq {} vae {}\n", r.rank,
                   fmt::format("({}, {}, {}, {}, {})", c.dp, c.cfg, c.row, c.col, c.u), r.seq_rank,
                   format_rank_list(r.cfg), format_rank_list(r.cp), format_rank_list(r.row), format_rank_list(r.col),
                   format_rank_list(r.ulysses), format_rank_list(r.seq), format_rank_list(r.vae));
  }
  fmt::format_to(out, "\ntokens: {} frames → latent T {}; {}×{} px → latent {}×{}; S = {}·{}·{} = {}\n",
                 g.num_frames, t.latent_t, g.height, g.width, t.latent_h, t.latent_w, t.latent_t / md.patch[0],
                 (t.latent_h + md.patch[1] - 1) / md.patch[1], (t.latent_w + md.patch[2] - 1) / md.patch[2], t.tokens);
  fmt::format_to(out, "padded S = {} ({} pad tokens, excluded from attention), {} tokens per seq rank\n", t.padded,
                 t.padded - t.tokens, t.per_rank);
  for (int s = 0; s < m.seq(); ++s) {
    int64_t b = s * t.per_rank, e = b + t.per_rank;
    int64_t valid = std::clamp<int64_t>(t.tokens - b, 0, t.per_rank);
    fmt::format_to(out, "  seq rank {:>3}: [{}, {}) valid {}\n", s, b, e, valid);
  }
  fmt::format_to(out, "\ncommunication per rank per step ({}; {} steps):\n", precision_name(recipe.precision),
                 g.num_inference_steps);
  double total = 0;
  for (auto& c : p.comm) {
    fmt::format_to(out, "  {:<20} {:>12}  {}\n", c.what, human_bytes(c.bytes_per_step), c.detail);
    total += c.bytes_per_step;
  }
  if (p.comm.empty()) fmt::format_to(out, "  none (single rank per replica)\n");
  fmt::format_to(out, "  {:<20} {:>12}  ({} per video)\n", "total", human_bytes(total), human_bytes(total * g.num_inference_steps));
  fmt::format_to(out, "\nmemory estimate per GPU:\n");
  double mem = 0;
  for (auto& [what, bytes] : p.memory) {
    fmt::format_to(out, "  {:>12}  {}\n", human_bytes(bytes), what);
    mem += bytes;
  }
  fmt::format_to(out, "  {:>12}  total\n", human_bytes(mem));
  for (auto& n : p.notes) fmt::format_to(out, "note: {}\n", n);
  return fmt::to_string(o);
}

}  // namespace vgen
