// text.device stream on the device: the understanding tower read into pinned host memory (converted
// and its Q/K rows permuted on the host) holds the bits the resident load puts on the GPU, and the
// prefill over the two device slots (layer i + 1 copied while layer i computes) leaves the same
// prompt K/V bit for bit as the resident prefill, prompt after prompt (the slots reused), in f32 and
// bf16 on the Qwen3 and the Edge style fixtures of tests/golden-cosmos3; a forward on the streamed
// K/V is then the resident forward's.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/json.h"
#include "cosmos3_test_util.h"
#include "io/safetensors.h"
#include "model/cosmos3/transformer.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const std::string kRoot = kCosmos3Fixtures;

// a and b hold the same dtype, shape and bytes (either device).
void expect_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (!a.defined()) return;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  const Tensor ha = a.to(Device::kCPU), hb = b.to(Device::kCPU);
  EXPECT_EQ(std::memcmp(ha.raw(), hb.raw(), ha.nbytes()), 0) << what;
}

void expect_same_tower(const Cosmos3Tower& s, const Cosmos3Tower& r, const std::string& at) {
  for (const auto& [name, a, b] :
       {std::tuple{"in_norm", &s.in_norm, &r.in_norm}, std::tuple{"post_norm", &s.post_norm, &r.post_norm},
        std::tuple{"q.w", &s.q.w, &r.q.w}, std::tuple{"k.w", &s.k.w, &r.k.w}, std::tuple{"v.w", &s.v.w, &r.v.w},
        std::tuple{"o.w", &s.o.w, &r.o.w}, std::tuple{"q.b", &s.q.b, &r.q.b}, std::tuple{"k.b", &s.k.b, &r.k.b},
        std::tuple{"v.b", &s.v.b, &r.v.b}, std::tuple{"o.b", &s.o.b, &r.o.b},
        std::tuple{"q_norm", &s.q_norm, &r.q_norm}, std::tuple{"k_norm", &s.k_norm, &r.k_norm},
        std::tuple{"k_norm_for_gen", &s.k_norm_for_gen, &r.k_norm_for_gen},
        std::tuple{"gate.w", &s.gate.w, &r.gate.w}, std::tuple{"up.w", &s.up.w, &r.up.w},
        std::tuple{"down.w", &s.down.w, &r.down.w}})
    expect_same_bits(*a, *b, at + name);
}

void stream_case(const std::string& name, DType dt) {
  SCOPED_TRACE(name + " " + dtype_name(dt));
  const Json params = read_json_file(kRoot + "/cases/" + name + ".json", ExitCode::kInput);
  const WeightStore ws = WeightStore::open(kRoot + "/cases/" + name + ".safetensors");
  const std::string dir = kRoot + "/" + params["model_dir"].get<std::string>() + "/transformer";
  const Cosmos3Transformer resident = Cosmos3Transformer::load(dir, Device::kCUDA, dt);
  const Cosmos3Transformer streamed = Cosmos3Transformer::load(dir, Device::kCUDA, dt, true);
  ASSERT_FALSE(resident.und_streamed());
  ASSERT_TRUE(streamed.und_streamed());
  const Cosmos3Weights& sw = streamed.weights();
  EXPECT_EQ(sw.und_host.layers.size(), sw.layers.size());
  for (size_t i = 0; i < sw.layers.size(); ++i) {  // pinned host copies of the resident bits
    EXPECT_TRUE(sw.layers[i].und.q.w.is_cpu()) << i;
    EXPECT_FALSE(sw.layers[i].gen.q.w.is_cpu()) << i;
    expect_same_tower(sw.layers[i].und, resident.weights().layers[i].und, "und layer " + std::to_string(i) + " ");
  }
  for (size_t s = 0; s < 2; ++s) EXPECT_FALSE(sw.und_host.slots[s].q.w.is_cpu()) << "slot " << s;
  // Two prompts, each twice: the slots carry the previous prefill's layers when the next begins.
  for (int round = 0; round < 2; ++round)
    for (const char* prompt : {"input_ids_cond", "input_ids_uncond"}) {
      const std::vector<int64_t> ids = ids_of(ws, prompt);
      const Cosmos3PromptKv a = streamed.prefill(ids), b = resident.prefill(ids);
      ASSERT_EQ(a.k.size(), b.k.size());
      EXPECT_EQ(a.len, b.len);
      for (size_t i = 0; i < b.k.size(); ++i) {
        EXPECT_EQ(a.k[i].device(), Device::kCUDA);
        expect_same_bits(a.k[i], b.k[i], std::string(prompt) + " k_" + std::to_string(i));
        expect_same_bits(a.v[i], b.v[i], std::string(prompt) + " v_" + std::to_string(i));
      }
    }
  const Cosmos3PromptKv kv = streamed.prefill(ids_of(ws, "input_ids_cond"));
  Cosmos3VideoInput in;
  in.latents = ws.get_f32("latents").to(Device::kCUDA);
  in.timestep = params["timestep"].get<float>();
  in.fps = params["fps"].get<double>();
  in.noisy_frames = params["noisy_frames"]["t2v"].get<std::vector<int64_t>>();
  expect_same_bits(streamed.forward(kv, in), resident.forward(resident.prefill(ids_of(ws, "input_ids_cond")), in),
                   "velocity");
}

}  // namespace

TEST(Cosmos3UndStreamGpu, Fp32) {
  VGEN_REQUIRE_GPU();
  stream_case("transformer_forward", DType::kF32);
  stream_case("transformer_forward_edge", DType::kF32);
}

TEST(Cosmos3UndStreamGpu, Bf16) {
  VGEN_REQUIRE_GPU();
  stream_case("transformer_forward", DType::kBF16);
  stream_case("transformer_forward_edge", DType::kBF16);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(Cosmos3UndStreamGpu)
#endif
