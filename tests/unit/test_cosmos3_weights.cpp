// Cosmos 3 weight loading: the rope pair permutation by hand, a checkpoint without lm_head loads (it
// is never read), a missing or misshaped tensor is refused naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
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

}  // namespace
}  // namespace vgen
