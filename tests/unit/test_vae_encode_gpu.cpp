// The VAE encoder on the device (model/wan/vae/vae_encoder.h) on the tiny golden VAEs of
// tests/golden-i2v (Wan 2.1, and Wan 2.2 with residual down blocks and patchify): the golden
// posterior mean in fp32 (rel-L2 <= 1e-4) and bf16 (<= 3e-2), `vgen golden --case vae_encode /
// vae22_encode` with device cuda, agreement with the host encoder on other sizes for both conv
// backends, a device video against a host one, batch items encoded independently, and the split
// encode's context on one rank (every halo and the stride-2 conv's extra row/col materialised).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <iostream>

#include "dist/mesh.h"
#include "dit_test_util.h"
#include "kernels/conv3d/conv3d.cuh"
#include "model/wan/vae/autoencoder.h"
#include "model/wan/vae/vae_encoder_parallel.h"
#include "ops/vae_device_ops.h"
#include "tools/golden.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const std::string kFixtures = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v";

struct VaeCase {
  const char* name;
  const char* model;
};
const VaeCase kCases[] = {{"vae_encode", "wan21-i2v-tiny"}, {"vae22_encode", "wan22-ti2v-tiny"}};

std::string vae_dir(const VaeCase& c) { return kFixtures + "/" + c.model + "/vae"; }

std::shared_ptr<WanVaeEncoder> device_encoder(const VaeCase& c, DType dt,
                                              VaeConvBackend backend = VaeConvBackend::kAuto) {
  WanVaeOptions opt;
  opt.device = Device::kCUDA;
  opt.dtype = dt;
  opt.conv.backend = backend;
  return std::make_shared<WanVaeEncoder>(WanVaeEncoder::load(vae_dir(c), opt));
}

Tensor random_video(const Shape& s, uint32_t seed) {
  return Tensor::from_vector(random_vec(size_t(shape_numel(s)), seed, -1.0f, 1.0f), s);
}

TEST(VaeEncodeGpu, GoldenMoments) {
  VGEN_REQUIRE_GPU();
  for (const VaeCase& c : kCases) {
    WeightStore ws = WeightStore::open(kFixtures + "/cases/" + c.name + ".safetensors");
    const Tensor video = ws.get_f32("video"), ref = ws.get_f32("latents_mode");
    for (DType dt : {DType::kF32, DType::kBF16}) {
      const Tensor mode = device_encoder(c, dt)->encode_mode(video);
      ASSERT_EQ(mode.shape(), ref.shape()) << c.name;
      const double err = rel_l2(mode, ref);
      std::cout << "[vae encode gpu] " << c.name << " " << dtype_name(dt) << " rel-L2 " << err << "\n";
      EXPECT_LE(err, dt == DType::kF32 ? 1e-4 : 3e-2) << c.name << " " << dtype_name(dt);
    }
  }
}

TEST(VaeEncodeGpu, GoldenCasesThroughTheRunner) {
  VGEN_REQUIRE_GPU();
  for (const VaeCase& c : kCases)
    for (Precision precision : {Precision::kFp32, Precision::kBf16}) {
      Recipe recipe;
      recipe.device = Device::kCUDA;
      recipe.precision = precision;
      Mesh mesh = test::single_rank_mesh();
      EXPECT_EQ(run_golden(kFixtures, recipe, mesh, c.name), 0) << c.name << " " << precision_name(precision);
    }
}

TEST(VaeEncodeGpu, MatchesHostEncoderBothBackends) {
  VGEN_REQUIRE_GPU();
  for (const VaeCase& c : kCases) {
    const WanVaeEncoder host = WanVaeEncoder::load(vae_dir(c));
    const int64_t s = vae_encoder_spatial_factor(host.config());
    const Tensor video = random_video({1, 3, 9, 3 * s, 5 * s}, 7);
    const Tensor ref = host.encode_moments(video);  // [1, 2z, 3, 3, 5]
    for (VaeConvBackend b : {VaeConvBackend::kAuto, VaeConvBackend::kGemm})
      for (DType dt : {DType::kF32, DType::kBF16}) {
        const VaeConvCounts c0 = vae_conv_counts();
        const Tensor m = device_encoder(c, dt, b)->encode_moments(video);
        const VaeConvCounts c1 = vae_conv_counts();
        ASSERT_EQ(m.device(), Device::kCUDA);
        ASSERT_EQ(m.shape(), ref.shape());
        const double err = rel_l2(m, ref);
        std::cout << "[vae encode gpu] " << c.name << " vs host, backend "
                  << (b == VaeConvBackend::kGemm ? "gemm" : "auto") << ", " << dtype_name(dt) << ": rel-L2 " << err
                  << " (cudnn calls " << c1.cudnn - c0.cudnn << ", gemm calls " << c1.gemm - c0.gemm << ")\n";
        EXPECT_LE(err, dt == DType::kF32 ? 1e-4 : 3e-2);
        if (b == VaeConvBackend::kGemm) {
          EXPECT_EQ(c1.cudnn, c0.cudnn);
        }
      }
  }
}

TEST(VaeEncodeGpu, DeviceVideoAndBatchItems) {
  VGEN_REQUIRE_GPU();
  for (const VaeCase& c : kCases) {
    auto enc = device_encoder(c, DType::kF32);
    const int64_t s = vae_encoder_spatial_factor(enc->config());
    const Tensor video = random_video({2, 3, 5, 2 * s, 3 * s}, 9);
    const Tensor both = enc->encode_moments(video.to(Device::kCUDA)).to(Device::kCPU);  // device input
    for (int64_t b = 0; b < 2; ++b) {
      const Tensor one = enc->encode_moments(video.narrow(b, 1)).to(Device::kCPU);  // host input
      EXPECT_LE(rel_l2(both[b], one[0]), 1e-7) << c.name << " " << b;
    }
  }
}

TEST(VaeEncodeGpu, HaloContextOnOneRankEqualsLocal) {
  VGEN_REQUIRE_GPU();
  auto self = make_self_communicator();
  for (const VaeCase& c : kCases)
    for (DType dt : {DType::kF32, DType::kBF16}) {
      auto enc = device_encoder(c, dt);
      const int64_t s = vae_encoder_spatial_factor(enc->config());
      const Tensor video = random_video({1, 3, 5, 3 * s, 2 * s}, 11);
      const Tensor local = enc->encode_moments(video);
      for (VaeSplitDim d : {VaeSplitDim::kWidth, VaeSplitDim::kHeight}) {
        EXPECT_LE(rel_l2(vae_group_encode(*enc, video, self.get(), d), local), 1e-7);
        EXPECT_LE(rel_l2(parallel_vae_encode(*enc, video, *self, d), local), dt == DType::kF32 ? 1e-5 : 1e-2)
            << c.name << " " << dtype_name(dt);
      }
    }
}

// The encoder's warm-up (beside the load, random weights) builds the cuDNN plans of the condition's
// encode, so the first line's encode builds none. 112 × 176 is a size no other case here uses (the
// plan cache is process-wide).
TEST(VaeEncodeGpu, WarmUpBuildsTheEncodePlans) {
  VGEN_REQUIRE_GPU();
  const VaeCase& c = kCases[1];
  const WanVaeConfig cfg = load_wan_vae_config(vae_dir(c));
  WanAutoencoderPlacement p;
  p.mesh = vgen::test::single_rank_mesh();
  p.cuda = true;
  p.dtype = DType::kBF16;
  p.height = 112;
  p.width = 176;
  p.num_frames = 5;
  p.encode_frames = 1;  // a first frame alone, as TI2V encodes it
  p.warm_up = true;
  WanVideoAutoencoder ae(cfg, LatentStats{cfg.latents_mean, cfg.latents_std}, p);
  ae.start_warm_up();
  ae.set_encoder(device_encoder(c, DType::kBF16));
  ae.finish_warm_up();
  const uint64_t plans = kern::conv3d_stats().cudnn_plans;
  const Tensor z = ae.encode(random_video({1, 3, 1, 112, 176}, 11));  // [1, z, 1, 7, 11]
  EXPECT_EQ(z.dim(2), 1);
  EXPECT_EQ(kern::conv3d_stats().cudnn_plans, plans) << "the first encode built plans the warm-up did not";
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(VaeEncodeGpu)
#endif
