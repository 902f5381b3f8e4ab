// The GQA CUDA kernels (kernels/gqa) and their Tensor wrappers (ops/gqa) against the CPU references:
// repeat_kv exactly, gqa_attention causal and full on odd shapes (query tiles and key tiles cut,
// grouped heads, valid-key counts, causal offsets, rows without keys) in f32 and bf16. Outputs of the
// launcher start as NaN so an unwritten element fails.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <string>

#include "kernels/gqa/gqa_attention.cuh"
#include "kernels/gqa/gqa_attention_ref.h"
#include "kernels/gqa/repeat_kv_ref.h"
#include "ops/gqa/gqa_ops.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const DType kTypes[] = {DType::kF32, DType::kBF16};

}  // namespace

TEST(Cosmos3GqaGpu, RepeatKvHeads) {
  VGEN_REQUIRE_GPU();
  for (DType dt : kTypes) {
    const std::vector<float> kv = maybe_round(random_vec(2 * 37 * 3 * 128, 11), dt);
    const Tensor out = repeat_kv_heads(device_tensor(kv, {2, 37, 3, 128}, dt), 5);  // [2, 37, 15, 128]
    ASSERT_EQ(out.shape(), Shape({2, 37, 15, 128}));
    std::vector<float> ref(size_t(2 * 37 * 15 * 128));
    kern::repeat_kv_ref(kv.data(), ref.data(), 2 * 37, 3, 5, 128);
    sync_stream();
    expect_close(host_f32(out), ref, [](size_t) { return 0.0; }, std::string("repeat_kv ") + dtype_name(dt));
  }
}

struct AttnCase {
  int64_t B, Sq, Skv, H, KVH, D, valid;
  bool causal;
  int64_t offset;
};

TEST(Cosmos3GqaGpu, AttentionMatchesReference) {
  VGEN_REQUIRE_GPU();
  const AttnCase cases[] = {{1, 83, 83, 32, 8, 128, 83, true, 0},  {2, 17, 17, 4, 2, 32, 17, true, 0},
                            {1, 40, 75, 6, 3, 64, 75, true, 35},  {1, 9, 9, 4, 1, 8, 5, true, 0},
                            {1, 33, 70, 8, 2, 96, 70, false, 0},  {3, 5, 41, 2, 2, 1, 30, false, 0},
                            {1, 20, 20, 4, 2, 16, 20, true, -3}};
  for (DType dt : kTypes)
    for (const AttnCase& c : cases) {
      const std::string what = std::string(dtype_name(dt)) + " Sq " + std::to_string(c.Sq) + " Skv " +
                               std::to_string(c.Skv) + " D " + std::to_string(c.D) + (c.causal ? " causal" : " full");
      const std::vector<float> q = maybe_round(random_vec(size_t(c.B * c.Sq * c.H * c.D), 21), dt);
      const std::vector<float> k = maybe_round(random_vec(size_t(c.B * c.Skv * c.KVH * c.D), 22), dt);
      const std::vector<float> v = maybe_round(random_vec(size_t(c.B * c.Skv * c.KVH * c.D), 23), dt);
      const float scale = float(1.0 / std::sqrt(double(c.D)));
      std::vector<float> ref(q.size());
      kern::gqa_attention_ref(q.data(), k.data(), v.data(), ref.data(), c.B, c.Sq, c.Skv, c.H, c.KVH, c.D, c.valid,
                              c.causal, c.offset, scale);
      const Tensor dq = device_tensor(q, {c.B, c.Sq, c.H, c.D}, dt);
      const Tensor dk = device_tensor(k, {c.B, c.Skv, c.KVH, c.D}, dt), dv = device_tensor(v, {c.B, c.Skv, c.KVH, c.D}, dt);
      Tensor out = poisoned({c.B, c.Sq, c.H, c.D}, dt);
      ASSERT_EQ(kern::gqa_attention(dq.raw(), dk.raw(), dv.raw(), out.raw(), ft(dt), c.B, c.Sq, c.Skv, c.H, c.KVH, c.D,
                                    c.valid, c.causal, c.offset, scale, compute_stream()),
                cudaSuccess)
          << what;
      sync_stream();
      // f32: fp32 accumulation orders differ from the double reference; bf16: one output rounding.
      const double tol = dt == DType::kF32 ? 2e-5 : 2 * kUlp;
      expect_close(host_f32(out), ref, [&](size_t i) { return tol * (1.0 + std::fabs(ref[i])); }, what);
      // The Tensor wrapper (its scale is 1/√D too) gives the same values.
      const Tensor wrapped = gqa_attention(dq, dk, dv, c.valid, c.causal, c.offset);
      sync_stream();
      expect_close(host_f32(wrapped), host_f32(out), [](size_t) { return 0.0; }, what + " (ops)");
    }
}

#else
VGEN_GPU_TESTS_NEED_CUDA(Cosmos3GqaGpu)
#endif
