// Cosmos 3 weight loading: the rope pair permutation by hand, a checkpoint without lm_head loads (it
// is never read), a missing or misshaped tensor is refused naming it, and the understanding tower
// packed into host blocks (text.device stream) as the host load reads it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "core/error.h"
#include "io/safetensors.h"
#include "model/cosmos3/transformer.h"

namespace vgen {
namespace {

namespace fs = std::filesystem;
const std::string kTiny = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3/cosmos3-tiny/transformer";

TEST(Cosmos3Weights, PermuteRopeRows) {
  // Two heads of head_dim 4, one column: rows (h, j) → pairs (h, 0), (h, 2), (h, 1), (h, 3).
  const Tensor w = Tensor::from_vector({0, 1, 2, 3, 10, 11, 12, 13}, {8, 1});
  const Tensor p = permute_rope_rows(w, 4);
  const std::vector<float> want = {0, 2, 1, 3, 10, 12, 11, 13};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(p.f32()[i], want[size_t(i)]) << i;
}

// A copy of the tiny transformer in a temporary folder, `edit` applied to its tensor list.
std::string edited_copy(const std::string& tag,
                        const std::function<void(std::vector<std::pair<std::string, Tensor>>&)>& edit) {
  const fs::path dir = fs::temp_directory_path() / ("vgen_cosmos3_" + tag + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kTiny + "/config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  const WeightStore ws = WeightStore::open(kTiny);
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string& n : ws.names()) tensors.emplace_back(n, ws.get(n));
  edit(tensors);
  save_safetensors((dir / "diffusion_pytorch_model.safetensors").string(), tensors);
  return dir.string();
}

std::string load_error(const std::string& dir) {
  try {
    Cosmos3Transformer::load(dir, Device::kCPU, DType::kF32);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    return e.what();
  }
  return "";
}

TEST(Cosmos3Weights, LmHeadIsNotNeeded) {
  const std::string dir = edited_copy("nolmhead", [](auto& t) {
    std::erase_if(t, [](const auto& e) { return e.first == "lm_head.weight" || e.first == "norm.weight"; });
  });
  EXPECT_EQ(load_error(dir), "");
  fs::remove_all(dir);
}

TEST(Cosmos3Weights, MissingOrMisshapedTensorIsNamed) {
  const std::string missing = edited_copy("missing", [](auto& t) {
    std::erase_if(t, [](const auto& e) { return e.first == "layers.1.self_attn.norm_added_k.weight"; });
  });
  EXPECT_NE(load_error(missing).find("layers.1.self_attn.norm_added_k.weight"), std::string::npos);
  fs::remove_all(missing);
  const std::string shaped = edited_copy("shape", [](auto& t) {
    for (auto& [name, tensor] : t)
      if (name == "layers.0.mlp_moe_gen.up_proj.weight") tensor = Tensor::zeros({95, 64}, DType::kF32);
  });
  EXPECT_NE(load_error(shaped).find("layers.0.mlp_moe_gen.up_proj.weight"), std::string::npos);
  fs::remove_all(shaped);
}

// text.device stream's host copy of the understanding tower (pack_cosmos3_und: one block per layer,
// converted on the host, Q/K rows permuted on the file's rows) holds the bits of the host load's
// tensors (f32) and of their bf16 rounding, for the Qwen3 and the Edge style fixtures.
TEST(Cosmos3Weights, PackedUnderstandingTowerAsLoaded) {
  const std::string edge = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3/cosmos3-edge-tiny/transformer";
  auto host_block = [](size_t bytes) {
    auto st = std::make_shared<Storage>();
    st->ptr = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    st->bytes = bytes;
    st->release = [](void* p) { std::free(p); };
    return st;
  };
  for (const std::string& dir : {kTiny, edge})
    for (const DType dt : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(dir + " " + dtype_name(dt));
      const Cosmos3Config cfg = Cosmos3Config::load(dir);
      const WeightStore store = WeightStore::open(dir);
      const Cosmos3Weights ref = load_cosmos3_weights(store, cfg, Device::kCPU, DType::kF32);
      std::vector<Cosmos3Layer> layers(ref.layers.size());
      std::vector<std::shared_ptr<Storage>> blocks;
      const size_t bytes = pack_cosmos3_und(store, cfg, dt, layers, blocks, host_block);
      ASSERT_EQ(blocks.size(), layers.size());
      EXPECT_GT(bytes, 0u);
      for (size_t i = 0; i < layers.size(); ++i) {
        const Cosmos3Tower &p = layers[i].und, &r = ref.layers[i].und;
        EXPECT_FALSE(layers[i].gen.q.w.defined());  // only the understanding tower is packed
        for (const auto& [name, a, b] :
             {std::tuple{"in_norm", &p.in_norm, &r.in_norm}, std::tuple{"q.w", &p.q.w, &r.q.w},
              std::tuple{"k.w", &p.k.w, &r.k.w}, std::tuple{"v.w", &p.v.w, &r.v.w}, std::tuple{"o.w", &p.o.w, &r.o.w},
              std::tuple{"q.b", &p.q.b, &r.q.b}, std::tuple{"k.b", &p.k.b, &r.k.b},
              std::tuple{"q_norm", &p.q_norm, &r.q_norm}, std::tuple{"k_norm", &p.k_norm, &r.k_norm},
              std::tuple{"k_norm_for_gen", &p.k_norm_for_gen, &r.k_norm_for_gen},
              std::tuple{"gate.w", &p.gate.w, &r.gate.w}, std::tuple{"up.w", &p.up.w, &r.up.w},
              std::tuple{"down.w", &p.down.w, &r.down.w}, std::tuple{"post_norm", &p.post_norm, &r.post_norm}}) {
          const std::string what = "layer " + std::to_string(i) + " " + name;
          ASSERT_EQ(a->defined(), b->defined()) << what;
          if (!b->defined()) continue;
          const Tensor want = b->to(dt);
          ASSERT_EQ(a->dtype(), dt) << what;
          ASSERT_EQ(a->shape(), want.shape()) << what;
          EXPECT_EQ(std::memcmp(a->raw(), want.raw(), want.nbytes()), 0) << what;
          EXPECT_EQ(reinterpret_cast<uintptr_t>(a->raw()) % 256, 0u) << what;
        }
      }
    }
}

}  // namespace
}  // namespace vgen
