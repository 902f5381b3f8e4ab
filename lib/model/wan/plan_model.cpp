// The Wan family's facts for `vgen plan` (model/plan_facts.h): configs, and weight sizes from
// safetensors headers (no tensor data is read) or, when a folder has no weights, from the
// architecture formulas of wan_spec.md; the block linears and the VAE decoder's work for the time
// model.
#include <filesystem>
#include <map>
#include <sstream>

#include "core/log.h"
#include "io/diffusers_dir.h"
#include "io/safetensors.h"
#include "model/wan/dit/transformer_weights.h"
#include "model/wan/family.h"
#include "model/wan/plan_image.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// diffusers `_keep_in_fp32_modules` of WanTransformer3DModel: a parameter stays fp32 when one of
// these names is a component of its dotted name.
bool keep_fp32(const std::string& name) {
  static const char* kKeep[] = {"rope", "time_embedder", "scale_shift_table", "norm1", "norm2", "norm3"};
  std::stringstream ss(name);
  for (std::string part; std::getline(ss, part, '.');)
    for (const char* k : kKeep)
      if (part == k) return true;
  return false;
}

struct DitSize {
  int64_t params = 0, bytes = 0, max_block = 0;
};

DitSize dit_from_headers(const std::string& dir, size_t run_bytes) {
  WeightStore ws = WeightStore::open(dir);
  DitSize d;
  std::map<int, int64_t> blocks;
  for (auto& name : ws.names()) {
    Tensor t = ws.get(name);  // mmap view: only the header is parsed
    int64_t n = t.numel();
    int64_t b = n * int64_t(keep_fp32(name) ? 4 : run_bytes);
    d.params += n;
    d.bytes += b;
    if (name.rfind("blocks.", 0) == 0) blocks[std::atoi(name.c_str() + 7)] += b;
  }
  for (auto& [i, b] : blocks) d.max_block = std::max(d.max_block, b);
  return d;
}

// Parameter count of WanTransformer3DModel (matches 1.3B and 14B exactly, wan_spec.md §1).
DitSize dit_from_config(const PlanModel& m, size_t run_bytes) {
  const int64_t D = m.dim(), F = m.ffn, P = int64_t(m.patch[0]) * m.patch[1] * m.patch[2];
  const int64_t attn = 4 * (D * D + D) + 2 * D;  // q, k, v, out + norm_q, norm_k
  const int64_t blk_plain = 2 * attn + (F * D + F + D * F + D);
  const int64_t blk_fp32 = 2 * D /*norm2*/ + 6 * D /*scale_shift_table*/;
  const int64_t time_emb = D * m.freq_dim + D + D * D + D;  // fp32
  const int64_t top_plain = D * m.in_channels * P + D + 6 * D * D + 6 * D + D * m.text_dim + D + D * D + D +
                            int64_t(m.out_channels) * P * D + int64_t(m.out_channels) * P;
  const int64_t top_fp32 = time_emb + 2 * D;
  DitSize d;
  d.params = m.layers * (blk_plain + blk_fp32) + top_plain + top_fp32;
  d.max_block = blk_plain * int64_t(run_bytes) + blk_fp32 * 4;
  d.bytes = m.layers * d.max_block + top_plain * int64_t(run_bytes) + top_fp32 * 4;
  return d;
}

// UMT5 encoder: vocab·d_model + layers·(4·d_model·d_kv·heads + 3·d_model·d_ff) + norms + rel. bias.
int64_t umt5_params(const Json& c) {
  int64_t vocab = json_get_or<int64_t>(c, "vocab_size", 256384), dm = json_get_or<int64_t>(c, "d_model", 4096);
  int64_t dkv = json_get_or<int64_t>(c, "d_kv", 64), h = json_get_or<int64_t>(c, "num_heads", 64);
  int64_t dff = json_get_or<int64_t>(c, "d_ff", 10240), l = json_get_or<int64_t>(c, "num_layers", 24);
  int64_t buckets = json_get_or<int64_t>(c, "relative_attention_num_buckets", 32);
  bool gated = json_get_or<std::string>(c, "feed_forward_proj", "gated-gelu").rfind("gated", 0) == 0;
  return vocab * dm + l * (4 * dm * dkv * h + (gated ? 3 : 2) * dm * dff) + l * 2 * dm + dm + l * buckets * h;
}

// The decoder's shapes from vae/config.json (defaults: the Wan 2.1 VAE).
struct WanVaeShape {
  int base_dim = 96, res_blocks = 2;  // base_dim: the decoder's (decoder_base_dim when given)
  std::vector<int> dim_mult = {1, 2, 4, 4};
  std::vector<bool> temporal_down = {false, true, true};
  double z_dim = 16;
  bool residual = false;  // Wan 2.2: residual up blocks (upsamplers keep the width, DupUp3D adds)
  int out_channels = 3;   // the decoder's (Wan 2.2: 12, unpatchified to RGB)
};

// The Wan VAE decoder as vgen runs it on the device (vae/vae_decoder.cpp): channels-last
// activations, one frame per call at every level (a latent frame through conv_in, the mid block and
// up block 0, each frame an upsampler emits through the next block), so every causal 3×3×3 conv
// sees [2 cached frames, 1 new]; an upsampler is a sub-pixel 2×2 conv of the low-resolution frame
// into four phases, then their shuffle onto the ×2 grid (ops/vae_subpixel_ops.h: read + write). Per
// call: the fill of the conv input (RMSNorm + SiLU, or a copy: read + write), the two cached
// frames copied to the buffer's front (read + write), the conv itself (its FLOPs), the residual add after each resnet (two reads, one
// write); the mid block's attention per latent frame (norm, 1×1 q/k/v and output, attention over
// the frame, add); conv_out's frames written as f32 RGB. The call structure is the benchmark's
// (results/vae/1xh200/2026-11-30_h200_issue7_bench_387c28e.json: 1,793 cuDNN convs per 720p×81 decode, of
// which 60 are the 3×1×1 time convs).
VaeWork vae_work(const WanVaeShape& md, double T, double h, double w, double eb, bool split_w) {
  VaeWork v;
  // decoder_dims (vae/vae_config.cpp): [base·mult.back(), base·mult reversed...]; upsampling in time
  // where temperal_downsample, reversed, says.
  const int nb = int(md.dim_mult.size());
  std::vector<double> d = {double(md.base_dim) * md.dim_mult.back()};
  for (int i = nb - 1; i >= 0; --i) d.push_back(double(md.base_dim) * md.dim_mult[size_t(i)]);
  const std::vector<bool> tup(md.temporal_down.rbegin(), md.temporal_down.rend());
  const int nr = md.res_blocks + 1;
  const double z_dim = md.z_dim;
  // conv_out's channels stored rounded up to 8 (cuDNN's tensor-core engines); each is one f32 video value.
  const double rgb = md.out_channels, out_store = double((md.out_channels + 7) / 8 * 8);
  double frames = T, H = h, W = w;
  auto conv = [&](double cin, double cout, int kt, int k, double calls) {
    const double px = H * W, in = px * cin * eb;
    v.flops += 2 * cin * cout * kt * k * k * px * calls;
    double mem = 2 * in;  // the fill: a norm or a copy reads and writes the input once
    if (kt > 1) mem += 2 * (kt - 1) * in;                 // the cached frames copied to the buffer's front
    v.bytes += mem * calls;
    if (k > 1) {
      v.spatial_convs += calls;
      v.spatial_in_bytes += in * calls;
      v.halo_bytes += double(k / 2) * (split_w ? H : W) * cin * eb * calls;  // k = 2: one row each side
    }
  };
  auto add = [&](double c) { v.bytes += 3 * H * W * c * eb * frames; };
  const double d0 = d[0];
  conv(z_dim, d0, 3, 3, frames);  // conv_in
  for (int r = 0; r < 2; ++r) {          // the mid block's two resnets
    conv(d0, d0, 3, 3, frames);
    conv(d0, d0, 3, 3, frames);
    add(d0);
  }
  {  // the mid block's attention, one latent frame at a time (queries local, keys of the whole frame)
    const double px = H * W;
    v.flops += frames * (2 * d0 * 3 * d0 * px + 4 * px * px * d0 + 2 * d0 * d0 * px);
    v.bytes += frames * 5 * px * d0 * eb;  // norm (read + write), residual add (2 reads + write)
    v.attn_gathers += frames;
    v.attn_gather_bytes += frames * px * 3 * d0 * eb;
  }
  for (int i = 0; i < nb; ++i) {
    const double in = i > 0 && !md.residual ? d[size_t(i)] / 2 : d[size_t(i)], out = d[size_t(i) + 1];
    for (int r = 0; r < nr; ++r) {
      const double cin = r == 0 ? in : out;
      if (cin != out) v.flops += 2 * cin * out * H * W * frames;  // the 1×1 shortcut
      conv(cin, out, 3, 3, frames);
      conv(out, out, 3, 3, frames);
      add(out);
    }
    if (i == nb - 1) {
      conv(out, out_store, 3, 3, frames);  // conv_out
      v.frame_bytes += frames * H * W * (out_store * eb + rgb * 4);
      v.out_gathers += frames;
      v.out_gather_bytes += frames * H * W * out_store * eb;
      break;
    }
    if (i < int(tup.size()) && tup[size_t(i)]) {
      conv(out, 2 * out, 3, 1, frames - 1);  // time_conv (the first chunk skips it)
      frames = 1 + 2 * (frames - 1);
    }
    const double up_out = md.residual ? out : out / 2;
    conv(out, 4 * up_out, 1, 2, frames);  // the upsampler's sub-pixel conv (low resolution)
    H *= 2, W *= 2;
    v.bytes += 2 * H * W * up_out * eb * frames;  // its shuffle onto the ×2 grid
    if (md.residual) add(up_out);                 // the DupUp3D shortcut added to its output
  }
  return v;
}


// The block linears of WanTransformerBlock per token, in kWanFp8LinearNames' order: q, k and v
// of the self-attention read one input; the cross-attention's keys and values read the prompt once.
std::vector<PlanLinear> block_linears(const PlanModel& m) {
  const int64_t D = m.dim(), F = m.ffn;
  std::vector<PlanLinear> l(8);
  const int64_t k[8] = {D, D, D, D, D, D, D, F};
  const int64_t n[8] = {D, D, D, D, D, D, F, D};
  const int input[8] = {0, 0, 0, 1, 2, 3, 4, 5};
  for (int i = 0; i < 8; ++i) l[size_t(i)] = {kWanFp8LinearNames[i], k[i], n[i], input[i]};
  return l;
}

}  // namespace

PlanModel WanFamily::plan_model(const Recipe& recipe, bool headers) const {
  VGEN_CHECK(!recipe.model.empty(), ExitCode::kRecipe, "{}: model: required key is missing", recipe.source_path);
  DiffusersDir dir(recipe.model);
  check_wan_text_device(recipe);
  const size_t run_bytes = recipe.compute_dtype() == DType::kBF16 ? 2 : 4;  // precision fp8 on the GPU: bf16
  PlanModel m;
  m.family = name();
  m.variant = wan_variant(dir);
  Json tc = dir.component_config("transformer");
  m.heads = json_get_or(tc, "num_attention_heads", 40);
  m.head_dim = json_get_or(tc, "attention_head_dim", 128);
  m.layers = json_get_or(tc, "num_layers", 40);
  m.ffn = json_get_or(tc, "ffn_dim", 13824);
  m.in_channels = json_get_or(tc, "in_channels", 16);
  m.out_channels = json_get_or(tc, "out_channels", m.in_channels);
  m.text_dim = json_get_or(tc, "text_dim", 4096);
  m.freq_dim = json_get_or(tc, "freq_dim", 256);
  if (tc.contains("patch_size") && tc["patch_size"].is_array() && tc["patch_size"].size() == 3)
    for (int i = 0; i < 3; ++i) m.patch[i] = tc["patch_size"][i].get<int>();
  VGEN_CHECK(m.heads >= 1 && m.head_dim >= 1 && m.layers >= 1 && m.ffn >= 1 && m.patch[0] >= 1 && m.patch[1] >= 1 &&
                 m.patch[2] >= 1,
             ExitCode::kModel, "{}/transformer/config.json: non-positive sizes", recipe.model);
  m.experts = dir.has_component("transformer_2") ? 2 : 1;
  m.text_len = recipe.generation.max_sequence_length;

  std::string tdir = (fs::path(recipe.model) / "transformer").string();
  const bool dit_headers = headers && has_safetensors(tdir);
  DitSize d = dit_headers ? dit_from_headers(tdir, run_bytes) : dit_from_config(m, run_bytes);
  m.dit_source = dit_headers ? "safetensors headers" : "config math";
  if (m.experts == 2) {
    std::string t2 = (fs::path(recipe.model) / "transformer_2").string();
    if (headers && has_safetensors(t2)) {
      DitSize d2 = dit_from_headers(t2, run_bytes);
      d.bytes = std::max(d.bytes, d2.bytes);
      d.max_block = std::max(d.max_block, d2.max_block);
    }
  }
  m.dit_params = d.params;
  m.dit_bytes = d.bytes;
  m.dit_block_bytes = d.max_block;

  std::string tec = (fs::path(recipe.model) / "text_encoder" / "config.json").string();
  if (fs::is_regular_file(tec)) {
    const Json te = read_json_file(tec, ExitCode::kModel);
    m.te_params = umt5_params(te);
    m.te_embed_params = json_get_or<int64_t>(te, "vocab_size", 256384) * json_get_or<int64_t>(te, "d_model", 4096);
    m.te_layers = json_get_or(te, "num_layers", 24);
    m.te_dmodel = json_get_or(te, "d_model", 4096);
    m.te_source = "text_encoder/config.json";
  } else {
    m.te_params = umt5_params(Json::object());
    m.te_embed_params = int64_t(256384) * 4096;
    m.te_source = "umt5-xxl defaults (no text_encoder/config.json)";
  }
  m.te_bytes = m.te_params * int64_t(run_bytes);

  plan_wan_vae_decoder(dir, m, headers);
  plan_image_side(dir, m, headers, run_bytes);
  m.block_linears = block_linears(m);
  return m;
}

void plan_wan_vae_decoder(const DiffusersDir& dir, PlanModel& m, bool headers) {
  WanVaeShape vs;
  vs.z_dim = m.out_channels;  // the DiT's latent channels are the VAE's z_dim (I2V's input adds the condition)
  std::string vdir = (fs::path(dir.root()) / "vae").string();
  std::string vcfg = (fs::path(vdir) / "config.json").string();
  if (fs::is_regular_file(vcfg)) {
    Json vc = read_json_file(vcfg, ExitCode::kModel);
    m.vae_spatial = json_get_or(vc, "scale_factor_spatial", 8);
    m.vae_temporal = json_get_or(vc, "scale_factor_temporal", 4);
    vs.base_dim = json_get_or(vc, "decoder_base_dim", json_get_or(vc, "base_dim", 96));
    vs.res_blocks = json_get_or(vc, "num_res_blocks", 2);
    vs.residual = json_get_or(vc, "is_residual", false);
    vs.out_channels = json_get_or(vc, "out_channels", 3);
    if (vc.contains("dim_mult") && vc["dim_mult"].is_array() && !vc["dim_mult"].empty()) {
      vs.dim_mult.clear();
      for (auto& x : vc["dim_mult"]) vs.dim_mult.push_back(x.get<int>());
    }
    if (vc.contains("temperal_downsample") && vc["temperal_downsample"].is_array()) {
      vs.temporal_down.clear();
      for (auto& x : vc["temperal_downsample"]) vs.temporal_down.push_back(x.get<bool>());
    }
  }
  if (headers && has_safetensors(vdir)) {
    m.vae_bytes = WeightStore::open(vdir).total_numel() * 4;  // the VAE decodes in fp32 (as diffusers recommends)
  }
  m.vae_work = [vs](double T, double h, double w, double eb, bool split_w) { return vae_work(vs, T, h, w, eb, split_w); };
}

}  // namespace vgen
