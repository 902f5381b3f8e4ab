// The first-block cache on the device DiT (tiny golden model, fp32 and bf16): a threshold no step
// meets changes nothing bit for bit; a threshold every step meets reproduces the full forward on
// the same inputs from the cached update; on another timestep the fp32 device forward decides as
// the CPU forward does (the same relative change within fp32 summation) and skips alike.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <cmath>
#include <string>

#include "dist/communicator.h"
#include "model/first_block_cache.h"
#include "model/wan/dit/transformer.h"
#include "parallel/local_attention.h"
#include "model/dit_step.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

std::string fixtures() { return std::string(VGEN_SOURCE_DIR) + "/tests/golden"; }

struct Pred {
  Tensor out;
  int64_t hits;
  double change;
};

// dit_predict on a single rank with `cache`, host f32 result.
Pred predict(const WanTransformer& m, const Tensor& x, float t, const TextContext& text, FirstBlockCache& cache) {
  auto seq = make_self_communicator();
  auto attn = make_local_attention();
  Tensor out = dit_predict(m, x, Tensor::from_vector({t}, {1}), text, *seq, *attn, &cache);
  return {out, cache.hits(), cache.last_change()};
}

TEST(FirstBlockCacheGpu, DeviceForwardSkipsAsTheCpuForward) {
  VGEN_REQUIRE_GPU();
  Tensor x = Tensor::from_vector(random_vec(size_t(16 * 3 * 4 * 6), 3), {1, 16, 3, 4, 6});
  Tensor ctx = Tensor::from_vector(random_vec(size_t(8 * 32), 4), {1, 8, 32});
  auto cpu = WanTransformer::load(fixtures() + "/wan21-tiny/transformer");
  ASSERT_EQ(cpu->config().text_dim, 32);
  const TextContext cpu_text = cpu->prepare_text(ctx);
  for (DType dt : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dt));
    auto dev = WanTransformer::load(fixtures() + "/wan21-tiny/transformer");
    dev->to_device(WanDeviceOptions{dt});
    const TextContext text = dev->prepare_text(ctx);
    FirstBlockCache off, never(1e-30), always(1e30);
    const Pred plain = predict(*dev, x, 700.0f, text, off);
    // Never skipping runs the decision every forward and changes nothing.
    predict(*dev, x, 800.0f, text, never);
    const Pred n2 = predict(*dev, x, 700.0f, text, never);
    EXPECT_EQ(n2.hits, 0);
    EXPECT_GT(n2.change, 0.0);
    EXPECT_EQ(host_f32(n2.out), host_f32(plain.out));
    // Always skipping: the same inputs again give the full forward back from the cached update.
    predict(*dev, x, 700.0f, text, always);
    const Pred a2 = predict(*dev, x, 700.0f, text, always);
    EXPECT_EQ(a2.hits, 1);
    EXPECT_EQ(a2.change, 0.0);
    EXPECT_LT(rel_l2(a2.out, plain.out), dt == DType::kF32 ? 1e-6 : 1e-2);
    // Another timestep: the device takes the CPU's decision on the same relative change.
    if (dt == DType::kF32) {
      FirstBlockCache c_cpu(1e30), c_dev(1e30);
      predict(*cpu, x, 700.0f, cpu_text, c_cpu);
      predict(*dev, x, 700.0f, text, c_dev);
      const Pred rc = predict(*cpu, x, 500.0f, cpu_text, c_cpu), rd = predict(*dev, x, 500.0f, text, c_dev);
      EXPECT_EQ(rd.hits, rc.hits);
      EXPECT_NEAR(rd.change, rc.change, 1e-4 * rc.change);
      EXPECT_LT(rel_l2(rd.out, rc.out), 1e-4);
    }
  }
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(FirstBlockCacheGpu)
#endif
