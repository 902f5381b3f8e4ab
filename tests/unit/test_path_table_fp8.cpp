// precision fp8's paths per GPU (ops/path_table.h): the own sm_90a kernels on a Hopper with their
// code, the portable paths elsewhere (cuBLASLt e4m3 GEMMs, cuDNN's FP8 SDPA), forcible on the Hopper
// (attention_config.backend cudnn, fp8_config.gemm_format e4m3), refused by name where a switch asks
// for what the GPU lacks. Pure functions: no GPU.
#include <gtest/gtest.h>

#include "ops/path_table.h"

namespace vgen {
namespace {

constexpr const char* kDefault = "80;86;89;90a;100a;120";

// precision fp8 with the portable switches (e4m3 GEMMs; scaling tensor keeps 10.x / 12.x off MXFP8).
PathQuery fp8_query(int cc, AttentionBackend backend = AttentionBackend::kAuto, bool cudnn = true) {
  PathQuery q;
  q.cc = cc;
  q.built = parse_cuda_archs(kDefault);
  q.precision = Precision::kFp8;
  q.backend = backend;
  q.cudnn_usable = cudnn;
  if (!cudnn) q.cudnn_why = "built without cuDNN";
  q.fp8.gemm_format = GemmFormat::kE4m3;
  q.fp8.scaling = Fp8Scaling::kTensor;
  return q;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(PathTableFp8, AmpereRefusesWithTheReason) {
  for (int cc : {80, 86}) {
    SCOPED_TRACE(cc);
    for (AttentionBackend b : {AttentionBackend::kAuto, AttentionBackend::kCudnn, AttentionBackend::kNative}) {
      const ExecutionPaths p = choose_execution_paths(fp8_query(cc, b));
      EXPECT_TRUE(p.refusal.empty());  // bf16 runs
      EXPECT_FALSE(p.fp8_allowed);
      EXPECT_TRUE(has(p.fp8_why, "FP8 tensor cores need compute capability 8.9 or newer")) << p.fp8_why;
      EXPECT_EQ(p.self_attention, AttentionPath::kNone);
      EXPECT_EQ(p.gemm, GemmPath::kNone);
    }
  }
}

TEST(PathTableFp8, AdaRunsE4m3GemmsWithABf16SelfAttention) {
  // cuDNN has no FP8 SDPA for 8.9: fp8 attention refused by name, the GEMMs portable.
  PathQuery q = fp8_query(89);
  ExecutionPaths p = choose_execution_paths(q);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "cuDNN's FP8 SDPA runs on compute capability 9.0 and newer, not 8.9")) << p.fp8_why;
  EXPECT_TRUE(has(p.fp8_why, "fp8_config.attention false")) << p.fp8_why;
  q.fp8.attention = false;
  p = choose_execution_paths(q);
  EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
  EXPECT_EQ(p.gemm, GemmPath::kCublasLtFp8);
  EXPECT_EQ(p.self_attention, AttentionPath::kCudnn);
  EXPECT_EQ(p.fp8_self_attention, AttentionPath::kCudnn);
  // The INT8 GEMM is the own sm_90a kernel: refused by name with the e4m3 way out.
  q.fp8.gemm_format = GemmFormat::kInt8;
  p = choose_execution_paths(q);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "fp8_config.gemm_format int8")) << p.fp8_why;
  EXPECT_TRUE(has(p.fp8_why, "set fp8_config.gemm_format e4m3")) << p.fp8_why;
  // scaling auto on 8.9 is tensor: e4m3 as asked.
  q = fp8_query(89);
  q.fp8.attention = false;
  q.fp8.scaling = Fp8Scaling::kAuto;
  EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kCublasLtFp8);
  // No cuDNN: the bf16 self-attention is the flash kernel.
  q = fp8_query(89, AttentionBackend::kAuto, false);
  q.fp8.attention = false;
  EXPECT_EQ(choose_execution_paths(q).self_attention, AttentionPath::kFlash);
}

TEST(PathTableFp8, HopperTakesTheOwnKernelsUnlessForced) {
  PathQuery q = fp8_query(90);
  ExecutionPaths p = choose_execution_paths(q);
  EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
  EXPECT_EQ(p.self_attention, AttentionPath::kFp8Hopper);
  EXPECT_EQ(p.gemm, GemmPath::kCublasLtFp8);  // gemm_format e4m3: cuBLASLt
  q.fp8.gemm_format = GemmFormat::kInt8;
  EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kHopperInt8);
  // attention_config.backend cudnn forces both attentions onto cuDNN.
  q = fp8_query(90, AttentionBackend::kCudnn);
  p = choose_execution_paths(q);
  EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
  EXPECT_EQ(p.self_attention, AttentionPath::kCudnnFp8);
  EXPECT_EQ(p.attention, AttentionPath::kCudnn);
  EXPECT_EQ(p.gemm, GemmPath::kCublasLtFp8);
  EXPECT_TRUE(has(execution_paths_text(p), "self-attention: cuDNN FP8 SDPA")) << execution_paths_text(p);
  // Forced without cuDNN: refused with both reasons.
  p = choose_execution_paths(fp8_query(90, AttentionBackend::kCudnn, false));
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "attention_config.backend cudnn")) << p.fp8_why;
  EXPECT_TRUE(has(p.fp8_why, "cuDNN is unavailable: built without cuDNN")) << p.fp8_why;
  // cuDNN initialises but its FP8 SDPA builds no plan here (the start-up probe): refused by name.
  q = fp8_query(90, AttentionBackend::kCudnn);
  q.cudnn_fp8_usable = false;
  q.cudnn_fp8_why = "check_support: no engine";
  p = choose_execution_paths(q);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "cuDNN's FP8 SDPA does not run on this device: check_support: no engine")) << p.fp8_why;
  // cuDNN's FP8 SDPA takes e4m3 Q and K only.
  q = fp8_query(90, AttentionBackend::kCudnn);
  q.fp8.attention_qk = QkFormat::kInt8;
  p = choose_execution_paths(q);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "fp8_config.attention_qk int8")) << p.fp8_why;
  // native keeps the own kernel, which runs here.
  EXPECT_EQ(choose_execution_paths(fp8_query(90, AttentionBackend::kNative)).self_attention, AttentionPath::kFp8Hopper);
}

TEST(PathTableFp8, HopperWithoutItsKernelsTakesThePortablePaths) {
  PathQuery q = fp8_query(90);
  q.built = parse_cuda_archs("80;89");  // compute_89 PTX: no sm_90a code
  ExecutionPaths p = choose_execution_paths(q);
  EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
  EXPECT_EQ(p.self_attention, AttentionPath::kCudnnFp8);
  EXPECT_EQ(p.gemm, GemmPath::kCublasLtFp8);
  q = fp8_query(90);
  q.sm90a_fp8_loads = false;  // the own FP8 kernel does not load
  EXPECT_EQ(choose_execution_paths(q).self_attention, AttentionPath::kCudnnFp8);
  q.backend = AttentionBackend::kNative;
  p = choose_execution_paths(q);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "do not load")) << p.fp8_why;
  EXPECT_TRUE(has(p.fp8_why, "attention_config.backend native")) << p.fp8_why;
}

TEST(PathTableFp8, BlackwellRunsThePortablePaths) {
  for (int cc : {100, 120}) {
    SCOPED_TRACE(cc);
    PathQuery q = fp8_query(cc);
    ExecutionPaths p = choose_execution_paths(q);
    EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
    EXPECT_FALSE(p.sm90a);
    EXPECT_EQ(p.self_attention, AttentionPath::kCudnnFp8);
    EXPECT_EQ(p.attention, AttentionPath::kCudnn);
    EXPECT_EQ(p.gemm, GemmPath::kCublasLtFp8);
    // scaling auto: e4m3 asked by name stays cuBLASLt's per-token e4m3; the default (int8) is MXFP8.
    q.fp8.scaling = Fp8Scaling::kAuto;
    EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kCublasLtFp8);
    EXPECT_EQ(q.fp8.gemm_format_on(cc), GemmFormat::kE4m3);
    q.fp8.gemm_format = GemmFormat::kInt8;
    EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kCublasLtMxfp8);
    q.fp8.scaling = Fp8Scaling::kBlock;
    q.fp8.gemm_format = GemmFormat::kE4m3;
    EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kCublasLtMxfp8);
    // INT8 with tensor scaling is the own sm_90a kernel: refused by name.
    q = fp8_query(cc);
    q.fp8.gemm_format = GemmFormat::kInt8;
    p = choose_execution_paths(q);
    EXPECT_FALSE(p.fp8_allowed);
    EXPECT_TRUE(has(p.fp8_why, "fp8_config.gemm_format int8")) << p.fp8_why;
    // No cuDNN or native: no FP8 attention; attention false runs the bf16 one.
    for (bool cudnn : {false, true}) {
      q = fp8_query(cc, cudnn ? AttentionBackend::kNative : AttentionBackend::kAuto, cudnn);
      p = choose_execution_paths(q);
      EXPECT_FALSE(p.fp8_allowed);
      EXPECT_TRUE(has(p.fp8_why, "fp8_config.attention false")) << p.fp8_why;
      q.fp8.attention = false;
      p = choose_execution_paths(q);
      EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
      EXPECT_EQ(p.self_attention, AttentionPath::kFlash);
    }
  }
}

TEST(PathTableFp8, OtherPrecisionsReportTheFp8Paths) {
  PathQuery q = fp8_query(120, AttentionBackend::kAuto);
  q.precision = Precision::kBf16;
  const ExecutionPaths p = choose_execution_paths(q);
  EXPECT_EQ(p.self_attention, AttentionPath::kCudnn);
  EXPECT_EQ(p.gemm, GemmPath::kCublasLt);
  EXPECT_TRUE(p.fp8_allowed);
  EXPECT_EQ(p.fp8_self_attention, AttentionPath::kCudnnFp8);
  EXPECT_EQ(p.fp8_gemm, GemmPath::kCublasLtFp8);
  const Json j = execution_paths_json(p);
  EXPECT_EQ(j["fp8"]["self_attention"], attention_path_name(AttentionPath::kCudnnFp8));
  EXPECT_EQ(j["fp8"]["gemm"], "cuBLASLt FP8 e4m3");
  EXPECT_EQ(std::string(attention_path_name(AttentionPath::kCudnnFp8)),
            "cuDNN FP8 SDPA (e4m3 Q/K/V/P, per-tensor scales)");
}

}  // namespace
}  // namespace vgen
