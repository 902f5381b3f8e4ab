// The UMT5 / T5 encoder on the GPU (Umt5Encoder on kCUDA) against the host Umt5Encoder on small random
// checkpoints (UMT5 gated-gelu, T5 v1.0 relu with one shared bias, bf16 files, the largest head
// dim), in f32 (tight) and bf16; TextEncoder on the device and its text cache identity; the golden
// text_encode case on the device. The kernels alone: test_t5_kernels_gpu.cpp.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/json.h"
#include "io/recipe.h"
#include "io/safetensors.h"
#include "model/wan/text/text_encoder.h"
#include "model/wan/text/umt5.h"
#include "model/wan/family.h"
#include "tools/golden.h"
#include "pipeline/text_cache.h"

using namespace vgen;
using namespace vgen::testing;
namespace fs = std::filesystem;

namespace {

const DType kTypes[] = {DType::kF32, DType::kBF16};

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = double(a[i]) - b[i];
    num += d * d;
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

std::vector<float> host_vec(const Tensor& t) {  // host f32 tensor → vector
  return std::vector<float>(t.f32(), t.f32() + t.numel());
}

// Exact equality, element by element (the first few differences are reported).
void expect_equal(const std::vector<float>& got, const std::vector<float>& ref, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == ref[i]) && ++bad <= 5)
      ADD_FAILURE() << what << ": element " << i << " = " << got[i] << ", expected " << ref[i];
}

struct TinyT5 {
  std::string model_type = "umt5";
  std::string ffn = "gated-gelu";
  int64_t d_model = 96, d_kv = 24, heads = 5, d_ff = 200, layers = 3, vocab = 300;
  DType file_dtype = DType::kF32;
};

// Writes a random checkpoint of `t` (config.json + model.safetensors) into a fresh temp folder.
std::string write_checkpoint(const std::string& name, const TinyT5& t, uint32_t seed) {
  fs::path d = fs::temp_directory_path() / ("vgen_test_t5gpu_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  const int64_t D = t.d_model, I = t.heads * t.d_kv, F = t.d_ff;
  std::vector<std::pair<std::string, Tensor>> tensors;
  auto add = [&](const std::string& n, const Shape& s, float lo, float hi) {
    Tensor x = Tensor::from_vector(random_vec(size_t(shape_numel(s)), ++seed, lo, hi), s);
    tensors.push_back({n, t.file_dtype == DType::kF32 ? x : x.to(t.file_dtype)});
  };
  // Unit-variance outputs for unit-RMS inputs, times `gain`.
  auto lin = [&](const std::string& n, int64_t out, int64_t in, float gain = 1.0f) {
    const float b = gain * std::sqrt(3.0f / float(in));
    add(n, {out, in}, -b, b);
  };
  // q and k entries of variance d_kv^(-1/2): unscaled T5 scores of about unit variance (as a
  // trained model's), so bf16's score rounding stays within the precision the test expects.
  const float qk_gain = std::pow(float(t.d_kv), -0.25f);
  add("shared.weight", {t.vocab, D}, -1.0f, 1.0f);
  const bool gated = t.ffn.rfind("gated-", 0) == 0;
  for (int64_t l = 0; l < t.layers; ++l) {
    const std::string a = fmt::format("encoder.block.{}.layer.0.", l), f = fmt::format("encoder.block.{}.layer.1.", l);
    lin(a + "SelfAttention.q.weight", I, D, qk_gain);
    lin(a + "SelfAttention.k.weight", I, D, qk_gain);
    lin(a + "SelfAttention.v.weight", I, D);
    lin(a + "SelfAttention.o.weight", D, I);
    if (l == 0 || t.model_type == "umt5")
      add(a + "SelfAttention.relative_attention_bias.weight", {32, t.heads}, -1.0f, 1.0f);
    add(a + "layer_norm.weight", {D}, 0.5f, 1.5f);
    if (gated) {
      lin(f + "DenseReluDense.wi_0.weight", F, D);
      lin(f + "DenseReluDense.wi_1.weight", F, D);
    } else {
      lin(f + "DenseReluDense.wi.weight", F, D);
    }
    lin(f + "DenseReluDense.wo.weight", D, F);
    add(f + "layer_norm.weight", {D}, 0.5f, 1.5f);
  }
  add("encoder.final_layer_norm.weight", {D}, 0.5f, 1.5f);
  save_safetensors((d / "model.safetensors").string(), tensors);
  Json cfg = {{"model_type", t.model_type},
              {"d_model", t.d_model},
              {"d_kv", t.d_kv},
              {"num_heads", t.heads},
              {"d_ff", t.d_ff},
              {"num_layers", t.layers},
              {"vocab_size", t.vocab},
              {"relative_attention_num_buckets", 32},
              {"relative_attention_max_distance", 128},
              {"feed_forward_proj", t.ffn},
              {"layer_norm_epsilon", 1e-6}};
  std::ofstream(d / "config.json") << cfg.dump();
  return d.string();
}

// Padded rows (37 rows, 30 valid), a single token, a long sequence over several query and key
// tiles and log-spaced buckets, a short full one.
std::vector<Umt5Sequence> test_sequences(int64_t vocab) {
  std::vector<Umt5Sequence> seqs;
  uint32_t s = 1;
  for (auto [rows, valid] : {std::pair<int64_t, int64_t>{37, 30}, {1, 1}, {150, 150}, {20, 20}}) {
    Umt5Sequence q;
    for (int64_t r = 0; r < rows; ++r) q.ids.push_back(int64_t((s = s * 1103515245u + 12345u) >> 8) % vocab);
    q.num_valid = valid;
    seqs.push_back(q);
  }
  return seqs;
}

void compare_encoders(const std::string& dir, DType dt, double tol) {
  SCOPED_TRACE(::testing::Message() << dir << " " << dtype_name(dt));
  Umt5Encoder cpu = Umt5Encoder::load(dir);
  auto gpu = std::make_unique<Umt5Encoder>(Umt5Encoder::load(dir, Umt5Options{Device::kCUDA, dt}));
  EXPECT_EQ(gpu->dtype(), dt);
  EXPECT_EQ(gpu->embedding_rows(), cpu.embedding_rows());
  auto seqs = test_sequences(cpu.config().vocab_size);
  Tensor want = cpu.forward(seqs), got = gpu->forward(seqs);
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_TRUE(got.is_cpu() && got.dtype() == DType::kF32) << got.str();
  std::vector<float> g = host_vec(got), w = host_vec(want);
  for (float x : g) ASSERT_TRUE(std::isfinite(x));
  const double e = rel_l2(g, w);
  EXPECT_LT(e, tol);
  std::printf("  %s %s: rel_l2 %.3e (tol %.0e)\n", fs::path(dir).filename().c_str(), dtype_name(dt), e, tol);
  // forward_device: the same rows on the device in the compute dtype.
  Tensor dev = gpu->forward_device(seqs);
  EXPECT_EQ(dev.device(), Device::kCUDA);
  EXPECT_EQ(dev.dtype(), dt);
  expect_equal(host_f32(dev), g, "forward_device");
  // Each sequence alone gives its rows of the batched result (sequences do not interact; the
  // GEMMs of another row count may take another algorithm, hence a tolerance, not equality).
  int64_t r0 = 0;
  for (auto& s : seqs) {
    std::vector<float> one = host_vec(gpu->forward({s}));
    const int64_t D = cpu.config().d_model, n = int64_t(s.ids.size());
    std::vector<float> part(g.begin() + r0 * D, g.begin() + (r0 + n) * D);
    EXPECT_LT(rel_l2(one, part), dt == DType::kF32 ? 2e-6 : 1e-2) << "sequence of " << n << " rows alone";
    r0 += n;
  }
}

}  // namespace

TEST(T5EncoderGpu, Umt5MatchesCpuF32AndBf16) {
  VGEN_REQUIRE_GPU();
  std::string dir = write_checkpoint("umt5", TinyT5{}, 1000);
  compare_encoders(dir, DType::kF32, 1e-5);
  compare_encoders(dir, DType::kBF16, 3e-2);
  // Token ids outside the embedding are an input error.
  auto gpu = std::make_unique<Umt5Encoder>(Umt5Encoder::load(dir, Umt5Options{Device::kCUDA, DType::kF32}));
  try {
    gpu->forward({{{5, 300}, 2}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInput);
  }
  fs::remove_all(dir);
}

TEST(T5EncoderGpu, T5ReluSharedBiasAndBf16Files) {
  VGEN_REQUIRE_GPU();
  TinyT5 t5;
  t5.model_type = "t5";
  t5.ffn = "relu";
  t5.d_model = 64, t5.d_kv = 16, t5.heads = 4, t5.d_ff = 96, t5.layers = 2;
  std::string d1 = write_checkpoint("t5relu", t5, 2000);
  compare_encoders(d1, DType::kF32, 1e-5);
  compare_encoders(d1, DType::kBF16, 3e-2);
  // bf16 files: the CPU encoder converts them to f32 at load, the device one on the device.
  TinyT5 bf;
  bf.file_dtype = DType::kBF16;
  bf.d_kv = 128, bf.heads = 2;  // the largest head dim
  std::string d2 = write_checkpoint("bf16file", bf, 3000);
  compare_encoders(d2, DType::kF32, 1e-5);
  compare_encoders(d2, DType::kBF16, 3e-2);
  // A missing tensor is a model error naming it.
  const std::string wo = "encoder.block.1.layer.1.DenseReluDense.wo.weight";
  WeightStore ws = WeightStore::open(d1);
  std::vector<std::pair<std::string, Tensor>> keep;
  for (auto& n : ws.names())
    if (n != wo) keep.push_back({n, ws.get(n).clone()});
  save_safetensors((fs::path(d1) / "model.safetensors").string(), keep);
  try {
    Umt5Encoder::load(d1, Umt5Options{Device::kCUDA, DType::kBF16});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find(wo), std::string::npos) << e.message();
  }
  fs::remove_all(d1);
  fs::remove_all(d2);
}

// TextEncoder on the device: the same TextEncoding as on the host (up to precision), and a text
// cache identity of its own.
TEST(T5EncoderGpu, TextEncoderOnDevice) {
  VGEN_REQUIRE_GPU();
  const std::string model = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny";
  std::vector<std::string> prompts = {"dance monkey", "", "A cat walks on the grass, realistic style."};
  TextEncoder cpu(model);
  TextEncoding want = cpu.encode(prompts, 16, true);
  EXPECT_EQ(cpu.backend(), "cpu-f32");
  for (DType dt : kTypes) {
    TextEncoder gpu(model, TextEncoderOptions{Device::kCUDA, dt});
    EXPECT_EQ(gpu.backend(), std::string("cuda-") + dtype_name(dt));
    EXPECT_EQ(gpu.hidden_size(), cpu.hidden_size());
    EXPECT_NE(gpu.identity(), cpu.identity());
    EXPECT_EQ(gpu.encoder().device(), Device::kCUDA);
    TextEncoding got = gpu.encode(prompts, 16, true);
    EXPECT_EQ(got.lengths, want.lengths);
    ASSERT_EQ(got.prompt_embeds.shape(), want.prompt_embeds.shape());
    ASSERT_TRUE(got.last_hidden_state.defined());
    const double tol = dt == DType::kF32 ? 1e-5 : 3e-2;
    EXPECT_LT(rel_l2(host_vec(got.prompt_embeds), host_vec(want.prompt_embeds)), tol);
    EXPECT_LT(rel_l2(host_vec(got.last_hidden_state), host_vec(want.last_hidden_state)), tol);
    // Rows past each prompt's length are exact zeros.
    const int64_t D = gpu.hidden_size();
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t r = got.lengths[size_t(p)]; r < 16; ++r)
        for (int64_t c = 0; c < D; ++c) ASSERT_EQ(got.prompt_embeds.f32()[(p * 16 + r) * D + c], 0.0f);
  }
}

// The golden text_encode case with the encoder on the device (fp32 and bf16 tolerances).
TEST(T5EncoderGpu, GoldenTextEncodeOnDevice) {
  VGEN_REQUIRE_GPU();
  const std::string fixtures = std::string(VGEN_SOURCE_DIR) + "/tests/golden";
  for (Precision precision : {Precision::kFp32, Precision::kBf16}) {
    SCOPED_TRACE(precision_name(precision));
    Recipe recipe;
    recipe.device = Device::kCUDA;
    recipe.precision = precision;
    GoldenCase c;
    c.name = "text_encode";
    c.fixtures_dir = fixtures;
    c.recipe = &recipe;
    c.bf16 = recipe.is_bf16();
    c.params = read_json_file(fixtures + "/cases/text_encode.json", ExitCode::kInput);
    c.tensors = WeightStore::open(fixtures + "/cases/text_encode.safetensors");
    golden_text_encode(c);
    EXPECT_EQ(c.metrics.size(), 5u);
    for (auto& m : c.metrics) {
      EXPECT_TRUE(m.pass) << m.what << " " << m.metric << " " << m.value << " tol " << m.tol;
      std::printf("  %s %-18s %-10s %.4e (tol %.1e)\n", precision_name(precision), m.what.c_str(), m.metric.c_str(), m.value, m.tol);
    }
  }
}


#else
#include "model/wan/text/text_encoder.h"

// Without the CUDA backend the device text encoder is a usage error, not a silent host fallback.
TEST(T5EncoderGpu, NoCudaBackendRefusesDeviceEncoder) {
  const std::string model = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny";
  try {
    vgen::TextEncoder enc(model, vgen::TextEncoderOptions{vgen::Device::kCUDA, vgen::DType::kBF16});
    FAIL() << "no error";
  } catch (const vgen::Error& e) {
    EXPECT_EQ(e.code(), vgen::ExitCode::kUsage);
  }
}
VGEN_GPU_TESTS_NEED_CUDA(T5EncoderGpu)
#endif

