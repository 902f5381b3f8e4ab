// precision fp8 of the Cosmos 3 transformer on the host (the CPU emulation, fp8_options.h): what is
// quantised (the generation tower's linears, not the understanding tower's; bf16_gemm_blocks
// leaves a layer out), the forward against tests/golden-cosmos3 under the fp8 tolerance of a DiT
// forward (golden_fp8_tolerance), a step outside fp8 (Cosmos3VideoInput::fp8 false) as the model
// without fp8 computes it, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/json.h"
#include "error_test_util.h"
#include "io/safetensors.h"
#include "model/cosmos3/transformer.h"
#include "model/golden_case.h"

namespace vgen {
namespace {

using testing::expect_error;

const std::string kRoot = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3";

struct Case {
  Json params;
  WeightStore tensors;
  explicit Case(const std::string& name)
      : params(read_json_file(kRoot + "/cases/" + name + ".json", ExitCode::kInput)),
        tensors(WeightStore::open(kRoot + "/cases/" + name + ".safetensors")) {}
  std::vector<int64_t> ids(const std::string& n) const {
    const Tensor t = tensors.get(n);
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  }
  std::string transformer_dir() const { return kRoot + "/" + params["model_dir"].get<std::string>() + "/transformer"; }
  Cosmos3VideoInput input(const char* mode) const {
    Cosmos3VideoInput in;
    in.latents = tensors.get_f32("latents");
    in.timestep = params["timestep"].get<float>();
    in.fps = params["fps"].get<double>();
    in.noisy_frames = params["noisy_frames"][mode].get<std::vector<int64_t>>();
    return in;
  }
};

double rel_l2(const Tensor& out, const Tensor& ref) {
  EXPECT_EQ(out.numel(), ref.numel()) << out.str() << " vs " << ref.str();
  double num = 0, den = 0;
  for (int64_t i = 0; i < std::min(out.numel(), ref.numel()); ++i) {
    const double d = double(out.f32()[i]) - double(ref.f32()[i]);
    num += d * d;
    den += double(ref.f32()[i]) * double(ref.f32()[i]);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

Cosmos3Fp8Options int8_options() {
  Cosmos3Fp8Options o;
  o.gemm = o.attention = true;
  o.gemm_format = GemmFormat::kInt8;
  return o;
}

void forward_case(const std::string& name) {
  SCOPED_TRACE(name);
  const Case c(name);
  const Cosmos3Transformer plain = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  Cosmos3Transformer fp8 = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  fp8.enable_fp8(int8_options());
  for (const Cosmos3Layer& l : fp8.weights().layers) {
    EXPECT_TRUE(l.gen.q.w8.defined() && l.gen.o.w8.defined() && l.gen.up.w8.defined() && l.gen.down.w8.defined());
    EXPECT_TRUE(l.gen.q.w.defined());  // the host keeps its fp32 weights
    EXPECT_FALSE(l.und.q.w8.defined() || l.und.down.w8.defined());
  }
  const Cosmos3PromptKv kv = fp8.prefill(c.ids("input_ids_cond")), ref_kv = plain.prefill(c.ids("input_ids_cond"));
  for (size_t i = 0; i < kv.k.size(); ++i) EXPECT_LE(rel_l2(kv.k[i], ref_kv.k[i]), 1e-6) << "k_" << i;
  const double tol = golden_fp8_tolerance("dit_forward", false);
  for (const char* mode : {"t2v", "i2v"}) {
    Cosmos3VideoInput in = c.input(mode);
    const Tensor v8 = fp8.forward(kv, in), ref = plain.forward(ref_kv, in);
    const double e = rel_l2(v8, c.tensors.get_f32(std::string("velocity_") + mode + "_cond"));
    std::printf("  %s %s fp8 rel-l2 %.3e (tol %.0e)\n", name.c_str(), mode, e, tol);
    EXPECT_LE(e, tol) << mode;
    EXPECT_GT(rel_l2(v8, ref), 1e-4) << mode << ": nothing was quantised";
    in.fp8 = false;  // a bf16 step of precision fp8: fp32 here, the linears row by row
    EXPECT_LE(rel_l2(fp8.forward(kv, in), ref), 1e-6) << mode;
  }
}

TEST(Cosmos3Fp8, GenerationTowerQuantisedWithinTheFp8Tolerance) {
  forward_case("transformer_forward");
  forward_case("transformer_forward_edge");
}

TEST(Cosmos3Fp8, Bf16GemmBlocksKeepALayerUnquantised) {
  const Case c("transformer_forward");
  Cosmos3Transformer m = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  Cosmos3Fp8Options o = int8_options();
  o.bf16_gemm_blocks = {-1};
  m.enable_fp8(o);
  const auto& layers = m.weights().layers;
  ASSERT_GE(layers.size(), 2u);
  EXPECT_TRUE(layers.front().gen.q.w8.defined());
  EXPECT_FALSE(layers.back().gen.q.w8.defined() || layers.back().gen.down.w8.defined());
}

TEST(Cosmos3Fp8, Refusals) {
  const Case c("transformer_forward");
  Cosmos3Transformer m = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  Cosmos3Fp8Options o = int8_options();
  o.bf16_blocks = {7};  // the tiny model has 2 layers
  expect_error([&] { m.enable_fp8(o); }, ExitCode::kRecipe, "bf16_blocks");
  m.enable_fp8(int8_options());
  expect_error([&] { m.enable_fp8(int8_options()); }, ExitCode::kInternal, "already");
}

// fp8_config.bf16_linears: the named generation linears keep no quantised copy and run in the
// compute dtype in every layer; an unknown name, or the gate of a non-gated MLP, is refused by name.
// The Edge style fixture's relu² MLP squares the error of its input projection: with e4m3 GEMMs its
// forward is over the fp8 tolerance (docs/cosmos3.md), and keeping mlp_moe_gen.up_proj in bf16
// brings it under.
TEST(Cosmos3Fp8, Bf16LinearsStayUnquantised) {
  EXPECT_EQ(cosmos3_bf16_linear_mask({"mlp_moe_gen.down_proj", "add_q_proj"}), uint8_t(0x41));
  expect_error([] { cosmos3_bf16_linear_mask({"attn1.to_q"}); }, ExitCode::kRecipe, "mlp_moe_gen.up_proj");
  const Case c("transformer_forward_edge");
  const Cosmos3Transformer plain = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  const Cosmos3PromptKv kv = plain.prefill(c.ids("input_ids_cond"));
  const double tol = golden_fp8_tolerance("dit_forward", false);
  double err[0x80] = {};
  for (uint8_t mask : {uint8_t(0), uint8_t(0x20), uint8_t(0x40), uint8_t(0x60)}) {
    Cosmos3Transformer m = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
    Cosmos3Fp8Options o = int8_options();
    o.gemm_format = GemmFormat::kE4m3;
    o.bf16_linears = mask;
    m.enable_fp8(o);
    const Cosmos3Tower& g = m.weights().layers.front().gen;
    EXPECT_EQ(g.up.w8.defined(), !(mask & 0x20));
    EXPECT_EQ(g.down.w8.defined(), !(mask & 0x40));
    EXPECT_TRUE(g.q.w8.defined());
    const Cosmos3VideoInput in = c.input("t2v");
    const double e = rel_l2(m.forward(kv, in), c.tensors.get_f32("velocity_t2v_cond"));
    std::printf("  edge e4m3 bf16_linears 0x%02x rel-l2 %.3e (tol %.0e)\n", mask, e, tol);
    err[mask] = e;
  }
  EXPECT_LT(err[0x20], 0.8 * err[0]) << "up_proj in bf16 removes the squared error";
  EXPECT_LE(err[0x20], tol);
  EXPECT_LE(err[0x60], err[0x20]);
  Cosmos3Transformer m = Cosmos3Transformer::load(c.transformer_dir(), Device::kCPU, DType::kF32);
  Cosmos3Fp8Options o = int8_options();
  o.bf16_linears = 0x10;  // the gate of a relu² MLP that has none
  expect_error([&] { m.enable_fp8(o); }, ExitCode::kRecipe, "gate_proj");
}

}  // namespace
}  // namespace vgen
