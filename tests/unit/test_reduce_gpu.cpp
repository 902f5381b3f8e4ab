// The first-block cache's device ops against their CPU references: sub (kernels/elementwise) and
// abs_diff_sums (kernels/reduce) in f32 and bf16, odd sizes up to several passes of the grid,
// unaligned views of one or both inputs (the scalar path), an empty input, and the same sums on a
// second run (a fixed reduction order).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include "kernels/elementwise/elementwise_ref.h"
#include "kernels/reduce/reduce_ref.h"
#include "ops/elementwise.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const DType kTypes[] = {DType::kF32, DType::kBF16};

TEST(ReduceGpu, SubAndAbsDiffSumsMatchRef) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 90;
  for (DType dt : kTypes)
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(4096), int64_t(100003), (int64_t(1) << 20) + 3})
      for (int64_t offset : {0, 1, 2}) {  // 1: both views off 16-byte alignment; 2: only b
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " n " << n << " offset " << offset);
        const int64_t oa = offset == 1 ? 1 : 0, ob = offset >= 1 ? 1 : 0;
        auto a = maybe_round(random_vec(size_t(n + oa), ++seed, -3.0f, 3.0f), dt);
        auto b = maybe_round(random_vec(size_t(n + ob), ++seed, -2.0f, 2.0f), dt);
        Tensor da = device_tensor(a, {n + oa}, dt).narrow(oa, n);
        Tensor db = device_tensor(b, {n + ob}, dt).narrow(ob, n);
        std::vector<float> ha(a.begin() + oa, a.end()), hb(b.begin() + ob, b.end());

        std::vector<float> want(static_cast<size_t>(n));
        kern::sub_ref(ha.data(), hb.data(), want.data(), n);
        const std::vector<float> got = host_f32(sub(da, db));
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], dt == DType::kBF16 ? kUlp * std::fabs(want[i]) : 0.0) << "sub at " << i;

        double diff = 0, ref = 0;
        kern::abs_diff_sums_ref(ha.data(), hb.data(), n, &diff, &ref);
        const std::vector<float> s1 = host_f32(abs_diff_sums(da, db)), s2 = host_f32(abs_diff_sums(da, db));
        ASSERT_EQ(s1.size(), 2u);
        EXPECT_NEAR(s1[0], diff, 1e-6 * diff + 1e-6);  // double sums, rounded once to f32
        EXPECT_NEAR(s1[1], ref, 1e-6 * ref + 1e-6);
        EXPECT_EQ(s1, s2) << "two runs differ";
      }
  Tensor empty = Tensor::empty({0}, DType::kF32, Device::kCUDA);
  EXPECT_EQ(host_f32(abs_diff_sums(empty, empty)), (std::vector<float>{0.0f, 0.0f}));
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(ReduceGpu)
#endif
