// The path table on a real device (ops/path_table.h, label gpu): the device's facts are read, the
// table's answer agrees with the kernels' own load checks (the Hopper kernel is chosen exactly where
// it loads, precision fp8 is allowed exactly where its kernels load) and with what the dispatch
// and the fp8 refusal use.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_fp8.cuh"
#include "kernels/gemm/gemm_int8.cuh"
#include "ops/fp8.h"
#include "ops/path_table.h"

using namespace vgen;

namespace {

TEST(PathTableGpu, AgreesWithTheKernelsLoadChecks) {
  VGEN_REQUIRE_GPU();
  PathQuery q;
  std::string gpu, why;
  ASSERT_TRUE(current_device_query(q, &gpu, &why)) << why;
  EXPECT_FALSE(gpu.empty());
  EXPECT_GE(q.cc, 80);
  EXPECT_FALSE(q.built.empty());
  const ExecutionPaths p = choose_execution_paths(q);
  ASSERT_TRUE(p.refusal.empty()) << p.refusal << " (this test binary runs here, so the build has code for it)";
  EXPECT_NE(p.code.kind, DeviceCode::kNone);
  EXPECT_EQ(p.sm90a, kern::attention_wgmma_available()) << execution_paths_text(p);
  EXPECT_EQ(p.attention == AttentionPath::kHopper, kern::attention_wgmma_available()) << execution_paths_text(p);
  EXPECT_EQ(device_attention_path(AttentionBackend::kAuto), p.attention);
  EXPECT_EQ(device_attention_path(AttentionBackend::kNative),
            kern::attention_wgmma_available() ? AttentionPath::kHopper : AttentionPath::kFlash);
  q.precision = Precision::kFp8;
  const ExecutionPaths f = choose_execution_paths(q);
  // The default fp8_config (INT8 GEMMs): the own kernels on a Hopper; refused on 8.x; block-scaled
  // GEMMs on 10.x / 12.x, allowed by the table but not yet driven by the forward.
  const bool own = kern::attention_fp8_available() && kern::linear_int8_available();
  if (q.cc < 100) EXPECT_EQ(f.fp8_allowed, own) << f.fp8_why;
  EXPECT_EQ(f.fp8_allowed && f.gemm != GemmPath::kCublasLtMxfp8, cuda_fp8_available(nullptr)) << f.fp8_why;
  // The portable paths (e4m3 GEMMs, cuDNN's FP8 SDPA forced): wherever cuDNN runs on 9.0 or newer.
  PathQuery pq;
  pq.precision = Precision::kFp8;
  pq.backend = AttentionBackend::kCudnn;
  pq.fp8.gemm_format = GemmFormat::kE4m3;
  pq.fp8.scaling = Fp8Scaling::kTensor;
  ASSERT_TRUE(current_device_query(pq, nullptr, &why)) << why;
  const ExecutionPaths portable = choose_execution_paths(pq);
  const bool cudnn_fp8 = pq.cc >= kCudnnFp8AttentionMinCc && pq.cudnn_usable;
  EXPECT_EQ(portable.fp8_allowed, cudnn_fp8) << portable.fp8_why;
  EXPECT_EQ(device_fp8_attention_path(AttentionBackend::kCudnn, pq.fp8),
            cudnn_fp8 ? AttentionPath::kCudnnFp8 : AttentionPath::kNone);
  if (cudnn_fp8) EXPECT_EQ(portable.gemm, GemmPath::kCublasLtFp8);
  Fp8Config portable_fp8 = pq.fp8;
  EXPECT_EQ(cuda_precision_available(Precision::kFp8, portable_fp8, nullptr, AttentionBackend::kCudnn), cudnn_fp8);
  EXPECT_FALSE(nccl_version_string().empty());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(PathTableGpu)
#endif
