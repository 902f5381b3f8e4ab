// The Cosmos 3 transformer on the device against the host's fp32 forward (the CPU oracle) and
// tests/golden-cosmos3 (made with diffusers): the understanding tower's K/V and one forward (cond
// and uncond prompts, every frame noisy and a clean first frame) for the Qwen3 and the Edge style
// checkpoints, on the fixture's latents (odd width: the padded patch grid) and on an even width;
// the weights streamed to the device (Q/K rows permuted there) as the host loads them.
// fp32: the K/V within 1e-5 of the host's, the velocity within 1e-4 of the host's and of
// diffusers' (tests/golden-cosmos3/README.md); bf16: 3e-2. precision fp8 (the generation tower's
// linears and attention): the GPU's fp8 tolerance of a DiT forward (golden_fp8_tolerance) against
// the host and diffusers, and a bf16 step of the fp8 model as the bf16 model computes it.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <string>
#include <tuple>
#include <vector>

#include "core/json.h"
#include "cosmos3_test_util.h"
#include "io/safetensors.h"
#include "model/cosmos3/transformer.h"
#include "model/golden_case.h"
#include "ops/fp8.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const std::string kRoot = kCosmos3Fixtures;

// latents [1, C, T, H, W] host f32 → their first W' columns (the fixture's odd width pads the patch
// grid; an even one takes ops/embed's patchify and unpatchify, the path of real resolutions).
Tensor crop_width(const Tensor& lat, int64_t w2) {
  const int64_t rows = lat.numel() / lat.dim(4), W = lat.dim(4);
  Tensor out = Tensor::empty({lat.dim(0), lat.dim(1), lat.dim(2), lat.dim(3), w2}, DType::kF32);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t w = 0; w < w2; ++w) out.f32()[r * w2 + w] = lat.f32()[r * W + w];
  return out;
}

// One case of tests/golden-cosmos3/cases: its parameters, tensors and transformer folder.
struct Case {
  explicit Case(const std::string& name)
      : params(read_json_file(kRoot + "/cases/" + name + ".json", ExitCode::kInput)),
        ws(WeightStore::open(kRoot + "/cases/" + name + ".safetensors")),
        dir(kRoot + "/" + params["model_dir"].get<std::string>() + "/transformer") {}
  Cosmos3VideoInput input(const char* mode, Device device) const {
    Cosmos3VideoInput in;
    in.latents = ws.get_f32("latents").to(device);
    in.timestep = params["timestep"].get<float>();
    in.fps = params["fps"].get<double>();
    in.noisy_frames = params["noisy_frames"][mode].get<std::vector<int64_t>>();
    return in;
  }
  Json params;
  WeightStore ws;
  std::string dir;
};

// The device model `dev` (computing in `dt`) against the host oracle and diffusers, each velocity
// within `tol`.
void check_forward(const std::string& name, const Cosmos3Transformer& dev, DType dt, double tol) {
  const Case c(name);
  const Cosmos3Transformer host = Cosmos3Transformer::load(c.dir, Device::kCPU, DType::kF32);
  const std::vector<int64_t> cond_ids = ids_of(c.ws, "input_ids_cond"), uncond_ids = ids_of(c.ws, "input_ids_uncond");
  const Cosmos3PromptKv cond = dev.prefill(cond_ids), uncond = dev.prefill(uncond_ids);
  const Cosmos3PromptKv host_cond = host.prefill(cond_ids), host_uncond = host.prefill(uncond_ids);
  const double kv_tol = dt == DType::kF32 ? 1e-5 : 3e-2;
  for (size_t i = 0; i < host_cond.k.size(); ++i) {  // the prompt's K/V as the host computes them
    EXPECT_EQ(cond.k[i].device(), Device::kCUDA);
    EXPECT_LE(rel_l2(cond.k[i], host_cond.k[i]), kv_tol) << "k_" << i;
    EXPECT_LE(rel_l2(cond.v[i], host_cond.v[i]), kv_tol) << "v_" << i;
  }
  for (const char* mode : {"t2v", "i2v"}) {
    const Cosmos3VideoInput in = c.input(mode, Device::kCUDA), host_in = c.input(mode, Device::kCPU);
    for (const auto& [which, kv, host_kv] :
         {std::tuple{"cond", &cond, &host_cond}, std::tuple{"uncond", &uncond, &host_uncond}}) {
      const std::string what = std::string("velocity_") + mode + "_" + which;
      const Tensor v = dev.forward(*kv, in);
      EXPECT_EQ(v.device(), Device::kCUDA);
      EXPECT_LE(rel_l2(v, host.forward(*host_kv, host_in)), tol) << what << " against the host";
      EXPECT_LE(rel_l2(v, c.ws.get_f32(what)), tol) << what << " against diffusers";
    }
    Cosmos3VideoInput even = host_in;  // a width that divides the patch, against the host
    const int64_t patch = dev.config().latent_patch_size;
    even.latents = crop_width(host_in.latents, host_in.latents.dim(4) / patch * patch);
    const Tensor ref = host.forward(host_cond, even);
    even.latents = even.latents.to(Device::kCUDA);
    EXPECT_LE(rel_l2(dev.forward(cond, even), ref), tol) << mode << " even width against the host";
  }
}

// The weights streamed to the device (the Q/K rows permuted there) as the host loads them: exact
// in f32 (the same conversion and permutation).
void expect_same_weights(const Cosmos3Transformer& dev, const Cosmos3Transformer& host) {
  const auto same = [](const Tensor& d, const Tensor& h, const std::string& what) {
    ASSERT_EQ(d.defined(), h.defined()) << what;
    if (!h.defined()) return;
    EXPECT_EQ(d.device(), Device::kCUDA) << what;
    EXPECT_EQ(rel_l2(d, h), 0.0) << what;
  };
  for (size_t i = 0; i < host.weights().layers.size(); ++i)
    for (const auto& [tower, d, h] : {std::tuple{"und", &dev.weights().layers[i].und, &host.weights().layers[i].und},
                                      std::tuple{"gen", &dev.weights().layers[i].gen, &host.weights().layers[i].gen}}) {
      const std::string at = std::string(tower) + " layer " + std::to_string(i) + " ";
      same(d->q.w, h->q.w, at + "q.w");
      same(d->k.w, h->k.w, at + "k.w");
      same(d->q.b, h->q.b, at + "q.b");
      same(d->k.b, h->k.b, at + "k.b");
      same(d->q_norm, h->q_norm, at + "q_norm");
      same(d->k_norm, h->k_norm, at + "k_norm");
      same(d->k_norm_for_gen, h->k_norm_for_gen, at + "k_norm_for_gen");
      same(d->v.w, h->v.w, at + "v.w");
      same(d->down.w, h->down.w, at + "down.w");
    }
  same(dev.weights().proj_in.w, host.weights().proj_in.w, "proj_in.w");
  same(dev.weights().time1.w, host.weights().time1.w, "time1.w");
}

void forward_case(const std::string& name, DType dt, double tol) {
  SCOPED_TRACE(name + " " + dtype_name(dt));
  const Case c(name);
  const Cosmos3Transformer dev = Cosmos3Transformer::load(c.dir, Device::kCUDA, dt);
  if (dt == DType::kF32) expect_same_weights(dev, Cosmos3Transformer::load(c.dir, Device::kCPU, DType::kF32));
  check_forward(name, dev, dt, tol);
}

// precision fp8 with `format` GEMMs: the fp8 forward within the GPU's fp8 tolerance, and a bf16
// step (Cosmos3VideoInput::fp8 false) of the quantised model as the bf16 model computes it.
void fp8_case(const std::string& name, GemmFormat format) {
  SCOPED_TRACE(name + " fp8 " + gemm_format_name(format));
  const Case c(name);
  Cosmos3Transformer dev = Cosmos3Transformer::load(c.dir, Device::kCUDA, DType::kBF16);
  const Cosmos3Transformer bf16 = Cosmos3Transformer::load(c.dir, Device::kCUDA, DType::kBF16);
  Cosmos3Fp8Options o;
  o.gemm = o.attention = true;
  o.gemm_format = format;
  dev.enable_fp8(o);
  const Cosmos3Tower& gen = dev.weights().layers[0].gen;
  ASSERT_TRUE(gen.q.w8.defined() && !gen.q.w8.is_cpu() && gen.down.w8.defined());
  EXPECT_FALSE(dev.weights().layers[0].und.q.w8.defined());  // the understanding tower stays bf16
  check_forward(name, dev, DType::kBF16, golden_fp8_tolerance("dit_forward", true));
  const Cosmos3PromptKv kv = dev.prefill(ids_of(c.ws, "input_ids_cond"));
  Cosmos3VideoInput in = c.input("i2v", Device::kCUDA);
  const Tensor fp8_out = dev.forward(kv, in);
  in.fp8 = false;
  const Tensor bf16_step = dev.forward(kv, in);
  EXPECT_GT(rel_l2(fp8_out, bf16_step), 0.0) << "the fp8 step ran in bf16";
  EXPECT_LE(rel_l2(bf16_step, bf16.forward(bf16.prefill(ids_of(c.ws, "input_ids_cond")), in)), 1e-6);
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

TEST(Cosmos3ForwardGpu, Fp8) {
  VGEN_REQUIRE_GPU();
  std::string gpu;
  if (!cuda_fp8_available(&gpu)) GTEST_SKIP() << "no FP8 tensor cores this build drives: " << gpu;
  // INT8 GEMMs (fp8_config's default) on both checkpoints. e4m3 on the Qwen3 style one only: the
  // Edge style's relu² MLP with e4m3 GEMMs is at 3.1e-2 already in the CPU emulation (INT8: 1.1e-2).
  fp8_case("transformer_forward", GemmFormat::kInt8);
  fp8_case("transformer_forward_edge", GemmFormat::kInt8);
  fp8_case("transformer_forward", GemmFormat::kE4m3);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(Cosmos3ForwardGpu)
#endif
