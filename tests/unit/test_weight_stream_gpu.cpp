// The device side of the checkpoint loader (dist/weight_stream.h): tensors of every float dtype at
// aligned and odd file offsets, cut into many small segments, converted on the device into every
// float dtype (bit-identical to the host conversion); the VAE conv-weight layout kernel against its
// CPU reference; the DiT streamed to the device against the host load + upload (same forward, bit
// for bit).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "dist/weight_stream.h"
#include "kernels/conv3d/conv_weight_ref.h"
#include "model/wan/dit/transformer.h"
#include "ops/vae_device_ops.h"
#include "parallel/local_attention.h"

using namespace vgen;
using namespace vgen::testing;
namespace fs = std::filesystem;

namespace {

std::vector<float> host_f32(const Tensor& t) {
  Tensor h = t.to(Device::kCPU).to(DType::kF32);
  return std::vector<float>(h.f32(), h.f32() + h.numel());
}

bool same_bits(const Tensor& a, const Tensor& b) {
  Tensor x = a.to(Device::kCPU), y = b.to(Device::kCPU);
  return x.dtype() == y.dtype() && x.numel() == y.numel() && std::memcmp(x.raw(), y.raw(), x.nbytes()) == 0;
}

TEST(WeightStreamGpu, EveryDtypeAndOffsetIntoEveryDtype) {
  VGEN_REQUIRE_GPU();
  const std::string path = fmt::format("/tmp/vgen_ws_gpu_{}.safetensors", getpid());
  // A 1-element bf16 first puts the f32 tensor after it at an offset that is not a multiple of 4.
  std::vector<std::pair<std::string, Tensor>> ts = {
      {"a_odd", Tensor::from_vector(random_vec(1, 1), {1}).to(DType::kBF16)},
      {"b_f32", Tensor::from_vector(random_vec(3001, 2, -3, 3), {3001})},
      {"c_bf16", Tensor::from_vector(random_vec(10007, 3), {10007}).to(DType::kBF16)},
      {"d_f16", Tensor::from_vector(random_vec(4099, 4), {4099}).to(DType::kF16)},
      {"e_mat", Tensor::from_vector(random_vec(33 * 65, 5), {33, 65}).to(DType::kBF16)},
  };
  save_safetensors(path, ts);
  WeightStore ws = WeightStore::open(path);
  for (DType out : {DType::kF32, DType::kBF16, DType::kF16}) {
    WeightStreamOptions o;
    o.threads = 2;
    o.buffers = 2;
    o.buffer_bytes = 4096;  // tensors cross several segments
    WeightStream stream(nullptr, nullptr, o);
    const int c = stream.add_component("test", ws);
    std::vector<Tensor> dst;
    for (auto& [name, t] : ts) {
      dst.push_back(poisoned(t.shape(), out));
      stream.request(c, name, dst.back());
    }
    stream.run();
    for (size_t i = 0; i < ts.size(); ++i)
      EXPECT_TRUE(same_bits(dst[i], ts[i].second.to(out))) << ts[i].first << " into " << dtype_name(out);
    size_t bytes = 0;
    for (auto& [name, t] : ts) bytes += t.nbytes();
    EXPECT_EQ(stream.stats().components.at("test").bytes, bytes);
    EXPECT_GE(stream.stats().bytes_read, bytes);
  }
  // A transposed matrix is refused by name.
  WeightStream stream(nullptr, nullptr);
  const int c = stream.add_component("test", ws);
  Tensor wrong = Tensor::empty({65, 33}, DType::kBF16, Device::kCUDA);
  try {
    stream.request(c, "e_mat", wrong);
    ADD_FAILURE() << "a [65, 33] destination took the [33, 65] tensor";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(std::string(e.what()).find("e_mat"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

TEST(WeightStreamGpu, ConvWeightLayoutMatchesRef) {
  VGEN_REQUIRE_GPU();
  struct Case {
    int64_t cout, cout_store, cin, taps;
  };
  for (Case c : {Case{3, 8, 5, 27}, Case{7, 7, 13, 9}, Case{16, 16, 1, 1}, Case{1, 8, 33, 3}}) {
    const auto src = random_vec(size_t(c.cout * c.cin * c.taps), uint32_t(c.cin * 7 + c.taps));
    std::vector<float> ref(size_t(c.cout_store * c.taps * c.cin));
    kern::conv_weight_taps_last_ref(src.data(), ref.data(), c.cout, c.cout_store, c.cin, c.taps);
    Tensor s = device_tensor(src, {c.cout, c.cin, c.taps}, DType::kF32);
    for (DType dt : {DType::kF32, DType::kBF16}) {
      Tensor d = poisoned({c.cout_store, c.taps, c.cin}, dt);
      cuda_vae_conv_weight_layout(s, d);
      const auto got = host_f32(d);
      for (size_t i = 0; i < ref.size(); ++i) {
        const float want = dt == DType::kBF16 ? kern::round_bf16(ref[i]) : ref[i];
        ASSERT_EQ(got[i], want) << "element " << i << " of case " << c.cout << "x" << c.cin << "x" << c.taps;
      }
    }
  }
}

TEST(WeightStreamGpu, DitStreamedEqualsUploaded) {
  VGEN_REQUIRE_GPU();
  const std::string dir = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/transformer";
  for (DType dt : {DType::kF32, DType::kBF16}) {
    WanDeviceOptions o;
    o.dtype = dt;
    auto uploaded = WanTransformer::load(dir);
    uploaded->to_device(o);
    WeightStream stream(nullptr, nullptr);
    WeightStore ws = WeightStore::open(dir);
    auto streamed = WanTransformer::stream_to_device(dir, stream, stream.add_component("transformer", ws), o);
    stream.run();
    const WanTransformerConfig& cfg = uploaded->config();
    Tensor latents = Tensor::from_vector(random_vec(size_t(cfg.in_channels * 2 * 4 * 6), 9), {1, cfg.in_channels, 2, 4, 6});
    Tensor t = Tensor::from_vector({500.0f}, {1});
    Tensor text = Tensor::from_vector(random_vec(size_t(7 * cfg.text_dim), 10), {1, 7, cfg.text_dim});
    Tensor a = uploaded->forward(latents, t, text), b = streamed->forward(latents, t, text);
    EXPECT_TRUE(same_bits(a, b)) << "dtype " << dtype_name(dt);
  }
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(WeightStreamGpu)
#endif
