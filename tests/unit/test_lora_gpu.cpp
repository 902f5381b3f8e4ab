// The LoRA merge on the device (model/wan/dit/lora_device_cuda.cpp) against the host merge: the add
// kernel against its CPU reference (bit for bit, f32 and bf16, odd sizes), and the DiT streamed to
// the GPU and merged there against the host weights merged on the CPU (f32: within fp32 GEMM
// rounding; bf16: within the weight's own rounding), with one adapter and with two adding up.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <cstring>

#include "dist/weight_stream.h"
#include "kernels/lora/lora_merge.cuh"
#include "kernels/lora/lora_merge_ref.h"
#include "model/wan/dit/lora.h"
#include "model/wan/dit/transformer.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const std::string kTiny = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/transformer";
const std::string kLoraDir = std::string(VGEN_SOURCE_DIR) + "/tests/golden/lora";

TEST(LoraGpu, AddScaledKernelMatchesReference) {
  VGEN_REQUIRE_GPU();
  for (int64_t n : {1, 7, 1000, 65537}) {
    for (DType dt : {DType::kF32, DType::kBF16}) {
      const std::vector<float> w = maybe_round(random_vec(size_t(n), 11, -2, 2), dt), d = random_vec(size_t(n), 12);
      Tensor dw = device_tensor(w, {n}, dt), dd = device_tensor(d, {n}, DType::kF32);
      ASSERT_EQ(cudaSuccess, kern::lora_add_scaled(dw.raw(), ft(dt), dd.f32(), -0.37f, n, compute_stream()));
      sync_stream();
      std::vector<float> ref = w;
      kern::lora_add_scaled_ref(ref.data(), d.data(), -0.37f, n);
      if (dt == DType::kBF16) ref = rounded_bf16(ref);
      const std::vector<float> got = host_f32(dw);
      EXPECT_EQ(0, std::memcmp(got.data(), ref.data(), got.size() * sizeof(float))) << "n " << n << " " << dtype_name(dt);
    }
  }
}

// Every changed weight of the device model against the host merge (packed: a LoraSet packed ahead,
// as the pipeline's load merges; else merge_lora packs the adapters itself).
void expect_device_matches_host(DType dt, const std::vector<LoraAdapter>& adapters, bool packed = false) {
  std::unique_ptr<WanTransformer> base = WanTransformer::load(kTiny), host = WanTransformer::load(kTiny);
  merge_lora(*host, adapters);
  WeightStore ws = WeightStore::open(kTiny);
  WeightStream stream(nullptr, nullptr);
  WanDeviceOptions o;
  o.dtype = dt;
  auto dev = WanTransformer::stream_to_device(kTiny, stream, stream.add_component("transformer", ws), o);
  stream.run();
  if (packed) {  // the load's path: factors packed on the host, one upload, views of it
    LoraSet set{adapters, Tensor()};
    pack_lora_factors(set);
    ASSERT_TRUE(set.packed.defined());
    merge_lora(*dev, set);
  } else {
    merge_lora(*dev, adapters);
  }
  WanTransformerWeights& hw = host->mutable_weights();
  WanTransformerWeights& dw = dev->mutable_device_model()->mutable_weights();
  int checked = 0;
  for (const LoraSlotUpdate& s : lora_slot_updates(adapters)) {
    const Tensor& h = *lora_weight_slot(hw, s.module, s.bias);
    const Tensor& d = *lora_weight_slot(dw, s.module, s.bias);
    const std::vector<float> ref = host_f32(h), got = host_f32(d);
    const std::vector<float> w0 = host_f32(*lora_weight_slot(base->mutable_weights(), s.module, s.bias));
    const bool bf16 = d.dtype() == DType::kBF16;
    // bf16: the device rounds the checkpoint's weight to bf16 before the merge (half an ulp of w0)
    // and the sum after it (half an ulp of the result); f32: the GEMMs' summation order only.
    auto tol = [&](size_t i) {
      return bf16 ? kUlp * (std::fabs(w0[i]) + std::fabs(ref[i])) + 1e-7 : 1e-6 * (1 + std::fabs(ref[i]));
    };
    expect_close(got, ref, tol, s.module + (s.bias ? ".bias" : ".weight"));
    ++checked;
  }
  EXPECT_EQ(checked, 2 * 10) << "q k v o of both attentions and the FFN of each block";
}

TEST(LoraGpu, DeviceMergeEqualsHostMergeF32) {
  VGEN_REQUIRE_GPU();
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  expect_device_matches_host(DType::kF32, {load_lora(kLoraDir + "/wan_format.safetensors", 0.7, cfg, true)});
}

TEST(LoraGpu, DeviceMergeEqualsHostMergeBf16) {
  VGEN_REQUIRE_GPU();
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  expect_device_matches_host(DType::kBF16, {load_lora(kLoraDir + "/diffusers_format.safetensors", 0.7, cfg, true)});
}

TEST(LoraGpu, SeveralAdaptersAddUpOnTheDevice) {
  VGEN_REQUIRE_GPU();
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  expect_device_matches_host(DType::kF32, {load_lora(kLoraDir + "/diffusers_format.safetensors", 0.4, cfg, true),
                                           load_lora(kLoraDir + "/wan_format.safetensors", -1.3, cfg, true)});
}

// An adapter whose factors are bf16 values, as a bf16 file's are (packed in bf16: the fused merge).
LoraAdapter bf16_valued(LoraAdapter a) {
  for (LoraUpdate& u : a.updates)
    if (u.down.defined()) u.up = u.up.to(DType::kBF16).to(DType::kF32), u.down = u.down.to(DType::kBF16).to(DType::kF32);
  return a;
}

TEST(LoraGpu, PackedDeviceMergeEqualsHostMerge) {
  VGEN_REQUIRE_GPU();
  const WanTransformerConfig cfg = WanTransformerConfig::load(kTiny);
  expect_device_matches_host(DType::kBF16, {load_lora(kLoraDir + "/wan_format.safetensors", 0.7, cfg, true)}, true);
  // bf16 factors: one GEMM per weight, the update added in its fp32 epilogue (bf16 and f32 weights);
  // two adapters on one weight still add up in fp32 first.
  const LoraAdapter w16 = bf16_valued(load_lora(kLoraDir + "/wan_format.safetensors", -0.9, cfg, true));
  expect_device_matches_host(DType::kBF16, {w16}, true);
  expect_device_matches_host(DType::kF32, {w16}, true);
  expect_device_matches_host(DType::kBF16,
                             {w16, bf16_valued(load_lora(kLoraDir + "/diffusers_format.safetensors", 0.4, cfg, true))}, true);
  expect_device_matches_host(DType::kF32, {load_lora(kLoraDir + "/diffusers_format.safetensors", 0.4, cfg, true),
                                           load_lora(kLoraDir + "/wan_format.safetensors", -1.3, cfg, true)},
                             true);
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(LoraGpu)
#endif
