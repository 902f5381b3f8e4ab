#include "model/cosmos3/transformer.h"

#include <algorithm>

#include "core/on_unwind.h"
#include "dist/weight_stream.h"
#include "model/cosmos3/attention.h"
#include "model/cosmos3/latent_tokens.h"
#include "model/cosmos3/mrope.h"
#include "model/cosmos3/tower.h"
#include "ops/activation.h"
#include "ops/device_ops.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/linear_layer.h"
#include "ops/norm.h"

namespace vgen {

Cosmos3Transformer::Cosmos3Transformer(Cosmos3Config cfg, Cosmos3Weights w, Device device, DType dtype)
    : cfg_(std::move(cfg)), w_(std::move(w)), device_(device), dtype_(dtype) {
  VGEN_CHECK(device != Device::kCPU || dtype == DType::kF32, ExitCode::kInternal,
             "cosmos3 transformer: the host computes in f32 (got {})", dtype_name(dtype));
  if (w_.und_host.streamed()) und_stream_ = std::make_shared<const Cosmos3UndStream>();
}

Cosmos3Transformer Cosmos3Transformer::load(const std::string& dir, Device device, DType dtype, bool und_streamed) {
  if (device != Device::kCPU) {
    WeightStream stream(nullptr, nullptr);
    return stream_to_device(dir, stream, dtype, und_streamed);
  }
  Cosmos3Config cfg = Cosmos3Config::load(dir);
  WeightStore store = WeightStore::open(dir);
  Cosmos3Weights w = load_cosmos3_weights(store, cfg, device, dtype);
  return Cosmos3Transformer(std::move(cfg), std::move(w), device, dtype);
}

Cosmos3Transformer Cosmos3Transformer::stream_to_device(const std::string& dir, WeightStream& stream, DType dtype,
                                                        bool und_streamed, const Cosmos3DwdpOptions& dwdp) {
  Cosmos3Config cfg = Cosmos3Config::load(dir);
  const WeightStore store = WeightStore::open(dir);
  const int component = stream.add_component("transformer", store);
  Cosmos3Weights w = request_cosmos3_weights(stream, component, store, cfg, dtype, und_streamed, dwdp);
  stream.run();
  return Cosmos3Transformer(std::move(cfg), std::move(w), Device::kCUDA, dtype);
}

Tensor Cosmos3Transformer::embed_prompt(const std::vector<int64_t>& ids) const {
  const int64_t L = int64_t(ids.size()), D = cfg_.hidden_size;
  VGEN_CHECK(L >= 1, ExitCode::kInput, "cosmos3: the prompt has no tokens");
  Tensor x = Tensor::empty({1, L, D}, DType::kF32);  // [1, L, D]
  const char* table = static_cast<const char*>(w_.embed.raw());
  const size_t row_bytes = size_t(D) * dtype_size(w_.embed.dtype());
  for (int64_t i = 0; i < L; ++i) {
    const int64_t id = ids[size_t(i)];
    VGEN_CHECK(id >= 0 && id < cfg_.vocab_size, ExitCode::kInput,
               "cosmos3: prompt token {} (id {}) is outside the vocabulary of {}", i, id, cfg_.vocab_size);
    convert_dtype(table + size_t(id) * row_bytes, w_.embed.dtype(), x.f32() + i * D, DType::kF32, size_t(D));
  }
  return cast(x.to(device_), dtype_);  // [1, L, D]
}

Cosmos3PromptKv Cosmos3Transformer::prefill(const std::vector<int64_t>& ids) const {
  Tensor x = embed_prompt(ids);  // [1, L, D]
  const int64_t L = x.dim(1);
  const MropeTables text = mrope_tables(mrope_angles(cfg_, mrope_text_position_ids(L)), device_);  // [L, Dh]
  Cosmos3PromptKv kv;
  kv.len = L;
  // The understanding tower runs once per prompt, never in fp8.
  const TowerModes m = TowerModes::all(plain_mode());
  const size_t n = w_.layers.size();
  auto layer = [&](size_t i, const Cosmos3Tower& und) {
    TowerQkv a = tower_qkv(cfg_, und, x, text, m);
    kv.k.push_back(a.k_other.defined() ? a.k_other : a.k);  // [1, L, KVH, Dh]
    kv.v.push_back(a.v);                                    // [1, L, KVH, Dh]
    if (i + 1 == n) return false;  // the last layer's output feeds no further K/V
    const Tensor o = causal_attention(a.q, a.k, a.v);  // [1, L, H, Dh]
    tower_finish(cfg_, und, x, o, m);
    return true;
  };
  if (und_stream_) {
    und_stream_->run(w_.und_host, layer);  // the same layers on the device slots' copies
  } else {
    for (size_t i = 0; i < n; ++i)
      if (!layer(i, w_.layers[i].und)) break;
  }
  return kv;
}

Tensor Cosmos3Transformer::timestep_embedding_row(float timestep) const {
  // diffusers: time_embedder(time_proj(t · timestep_scale)), all fp32 (the embedder is kept in fp32).
  Tensor t = Tensor::from_vector({timestep * float(cfg_.timestep_scale)}, {1}).to(device_);  // [1]
  const LinearMode m = plain_mode();
  Tensor h = linear(w_.time1, timestep_embedding(t, cfg_.timestep_channels, true, 0.0f), m);  // [1, D] f32
  silu_(h);
  return linear(w_.time2, h, m);  // [1, D] f32
}

Tensor Cosmos3Transformer::embed_video(const Cosmos3VideoInput& in) const {
  const int p = cfg_.latent_patch_size;
  const auto grid = latent_patch_grid(in.latents, p);
  const int64_t per_frame = grid[1] * grid[2], S = grid[0] * per_frame;
  const Tensor tok = patch_tokens(in.latents, p, device_, dtype_);               // [1, S, C·p·p]
  Tensor x = linear(w_.proj_in, tok.reshape({S, tok.dim(2)}), plain_mode());     // [S, D]
  const Tensor temb = timestep_embedding_row(in.timestep);                       // [1, D]
  for (int64_t f : in.noisy_frames) {  // the noisy frames' tokens take the timestep embedding
    Tensor rows = x.narrow(f * per_frame, per_frame);  // [per_frame, D]
    rows.copy_from(add_row(rows, temb.reshape({cfg_.hidden_size})));
  }
  return x.reshape({1, S, cfg_.hidden_size});  // [1, S, D]
}

void Cosmos3Transformer::check_input(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in) const {
  VGEN_CHECK(in.latents.defined() && in.latents.ndim() == 5 && in.latents.dim(0) == 1 &&
                 in.latents.dim(1) == cfg_.latent_channel,
             ExitCode::kInput, "cosmos3: latents must be [1, {}, T, H, W], got {}", cfg_.latent_channel,
             in.latents.defined() ? in.latents.str() : std::string("undefined"));
  VGEN_CHECK(prompt.k.size() == w_.layers.size() && prompt.v.size() == w_.layers.size(), ExitCode::kInternal,
             "cosmos3: the prompt K/V has {} layers, the model {}", prompt.k.size(), w_.layers.size());
  const int64_t T = in.latents.dim(2);
  VGEN_CHECK(std::is_sorted(in.noisy_frames.begin(), in.noisy_frames.end()) &&
                 std::adjacent_find(in.noisy_frames.begin(), in.noisy_frames.end()) == in.noisy_frames.end() &&
                 (in.noisy_frames.empty() || (in.noisy_frames.front() >= 0 && in.noisy_frames.back() < T)),
             ExitCode::kInput, "cosmos3: the noisy frames must be ascending, distinct and within the {} latent frames",
             T);
}

MropeTables Cosmos3Transformer::video_rope(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in) const {
  const auto grid = latent_patch_grid(in.latents, cfg_.latent_patch_size);
  const int64_t L = prompt.len, S = grid[0] * grid[1] * grid[2];
  const Tensor ids = mrope_position_ids(cfg_, L, grid, in.fps, in.temporal_compression);  // [3, L + S]
  const MropeTables rope = mrope_tables(mrope_angles(cfg_, ids), device_);
  return {rope.cos.narrow(L, S), rope.sin.narrow(L, S)};  // [S, Dh]
}

Tensor Cosmos3Transformer::generation_tower(const Cosmos3PromptKv& prompt, Tensor x, const MropeTables& rope,
                                            const SeqLayout& layout, SeqAttention* attention, bool fp8) const {
  for (size_t i = 0; i < w_.layers.size(); ++i) {
    const Cosmos3Tower& gen = block_begin(i);
    OnUnwind end_on_error([&] { block_end(i); });  // a DWDP slot stays usable after an error
    const TowerModes m = generation_modes(i, fp8);
    const TowerQkv a = tower_qkv(cfg_, gen, x, rope, m);
    const Tensor o = joint_attention(a.q, a.k, a.v, prompt.k[i], prompt.v[i], layout, attention,
                                     generation_attention(i, fp8));  // [1, S_loc, H, Dh]
    tower_finish(cfg_, gen, x, o, m);
    block_end(i);
  }
  return rms_norm(x, w_.norm_gen, float(cfg_.rms_norm_eps));  // [1, S_loc, D]
}

Tensor Cosmos3Transformer::forward(const Cosmos3PromptKv& prompt, const Cosmos3VideoInput& in) const {
  check_input(prompt, in);
  const auto grid = latent_patch_grid(in.latents, cfg_.latent_patch_size);
  const int64_t S = grid[0] * grid[1] * grid[2];
  if (in.noisy_frames.empty())  // nothing to predict: every frame is clean
    return Tensor::zeros(in.latents.shape(), DType::kF32, in.latents.device());
  // One rank's window of the unpadded sequence: every token, zero velocity on the clean frames.
  const Tensor tokens = forward_tokens(prompt, in, SeqLayout::make(S, 1, 0), nullptr);  // [1, S, p·p·C]
  return tokens_to_video(tokens, cfg_.latent_patch_size, cfg_.latent_channel, in.latents.dim(2), in.latents.dim(3),
                         in.latents.dim(4))
      .to(in.latents.device());  // [1, C, T, H, W]
}

}  // namespace vgen
