// The Cosmos 3 transformer on the device against tests/golden-cosmos3 (made with diffusers): the
// understanding tower's K/V and one forward (cond and uncond prompts, every frame noisy and a clean
// first frame) for the Qwen3 and the Edge style checkpoints, in fp32 (rel-L2 ≤ 1e-4, and the K/V
// against the host's) and bf16 (≤ 3e-2), as tests/golden-cosmos3/README.md.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <string>
#include <vector>

#include "core/json.h"
#include "io/safetensors.h"
#include "model/cosmos3/transformer.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const std::string kRoot = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3";

std::vector<int64_t> ids_of(const WeightStore& ws, const std::string& name) {
  const Tensor t = ws.get(name);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

void forward_case(const std::string& name, DType dt, double tol) {
  SCOPED_TRACE(name + " " + dtype_name(dt));
  const Json p = read_json_file(kRoot + "/cases/" + name + ".json", ExitCode::kInput);
  const WeightStore ws = WeightStore::open(kRoot + "/cases/" + name + ".safetensors");
  const std::string dir = kRoot + "/" + p["model_dir"].get<std::string>() + "/transformer";
  const Cosmos3Transformer dev = Cosmos3Transformer::load(dir, Device::kCUDA, dt);
  const Cosmos3Transformer host = Cosmos3Transformer::load(dir, Device::kCPU, DType::kF32);
  const std::vector<int64_t> cond_ids = ids_of(ws, "input_ids_cond"), uncond_ids = ids_of(ws, "input_ids_uncond");
  const Cosmos3PromptKv cond = dev.prefill(cond_ids), uncond = dev.prefill(uncond_ids);
  if (dt == DType::kF32) {  // the prompt's K/V as the host computes them
    const Cosmos3PromptKv ref = host.prefill(cond_ids);
    for (size_t i = 0; i < ref.k.size(); ++i) {
      EXPECT_LE(rel_l2(cond.k[i], ref.k[i]), 1e-5) << "k_" << i;
      EXPECT_LE(rel_l2(cond.v[i], ref.v[i]), 1e-5) << "v_" << i;
    }
  }
  for (const char* mode : {"t2v", "i2v"}) {
    Cosmos3VideoInput in;
    in.latents = ws.get_f32("latents").to(Device::kCUDA);
    in.timestep = p["timestep"].get<float>();
    in.fps = p["fps"].get<double>();
    in.noisy_frames = p["noisy_frames"][mode].get<std::vector<int64_t>>();
    for (const auto& [which, kv] : {std::pair{"cond", &cond}, std::pair{"uncond", &uncond}}) {
      const Tensor v = dev.forward(*kv, in);
      EXPECT_EQ(v.device(), Device::kCUDA);
      const std::string what = std::string("velocity_") + mode + "_" + which;
      EXPECT_LE(rel_l2(v, ws.get_f32(what)), tol) << what;
    }
  }
}

}  // namespace

TEST(Cosmos3ForwardGpu, Fp32) {
  VGEN_REQUIRE_GPU();
  forward_case("transformer_forward", DType::kF32, 1e-4);
  forward_case("transformer_forward_edge", DType::kF32, 1e-4);
}

TEST(Cosmos3ForwardGpu, Bf16) {
  VGEN_REQUIRE_GPU();
  forward_case("transformer_forward", DType::kBF16, 3e-2);
  forward_case("transformer_forward_edge", DType::kBF16, 3e-2);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(Cosmos3ForwardGpu)
#endif
