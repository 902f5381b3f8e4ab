// The runtime path table's decisions (ops/path_table.h) for each compute capability, build
// architecture list and precision: which code the driver runs, which attention and GEMM paths
// serve, whether precision fp8 and fp4 run and why not (the block-scaled GEMMs on 10.x / 12.x).
// Pure functions: no GPU.
#include <gtest/gtest.h>

#include "core/error.h"
#include "ops/path_table.h"

namespace vgen {
namespace {

constexpr const char* kDefault = "80;86;89;90a;100a;120";

PathQuery query(int cc, const char* built, Precision precision = Precision::kBf16,
                AttentionBackend backend = AttentionBackend::kAuto, bool cudnn = true) {
  PathQuery q;
  q.cc = cc;
  q.built = parse_cuda_archs(built);
  q.precision = precision;
  q.backend = backend;
  q.cudnn_usable = cudnn;
  if (!cudnn) q.cudnn_why = "built without cuDNN";
  return q;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(PathTable, ParsesArchitectureLists) {
  const auto a = parse_cuda_archs(kDefault);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[3].cc, 90);
  EXPECT_EQ(a[3].variant, 'a');
  EXPECT_TRUE(a[3].sass && a[3].ptx);
  EXPECT_EQ(cuda_archs_str(a), kDefault);
  const auto b = parse_cuda_archs("80-real,90a-virtual 100f");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_TRUE(b[0].sass && !b[0].ptx);
  EXPECT_TRUE(!b[1].sass && b[1].ptx);
  EXPECT_EQ(b[2].variant, 'f');
  EXPECT_EQ(cuda_archs_str(b), "80-real;90a-virtual;100f");
  EXPECT_TRUE(parse_cuda_archs("").empty());
  EXPECT_THROW(parse_cuda_archs("90b"), Error);
  EXPECT_THROW(parse_cuda_archs("sm_90"), Error);
  EXPECT_THROW(parse_cuda_archs("native"), Error);
}

TEST(PathTable, DeviceCodeFollowsTheDriverRules) {
  const auto def = parse_cuda_archs(kDefault);
  EXPECT_EQ(device_code_for(80, def).str(), "sm_80");    // A100
  EXPECT_EQ(device_code_for(86, def).str(), "sm_86");    // RTX 3090, A40
  EXPECT_EQ(device_code_for(87, def).str(), "sm_86");    // a later minor runs its major's cubin
  EXPECT_EQ(device_code_for(89, def).str(), "sm_89");    // RTX 4090, L40S
  EXPECT_EQ(device_code_for(90, def).str(), "sm_90a");   // H100, H200
  EXPECT_EQ(device_code_for(100, def).str(), "sm_100a");  // B200, GB200
  EXPECT_EQ(device_code_for(120, def).str(), "sm_120");  // RTX 5090
  EXPECT_EQ(device_code_for(121, def).str(), "sm_120");
  // sm_100a runs on 10.0 only: a B300 (10.3) gets the newest plain PTX older than it.
  const DeviceCodeChoice b300 = device_code_for(103, def);
  EXPECT_EQ(b300.kind, DeviceCode::kPtx);
  EXPECT_EQ(b300.arch.cc, 89);
  EXPECT_EQ(device_code_for(103, parse_cuda_archs("100f")).str(), "sm_100f");
  // A Hopper build alone: nothing for an A100 or a B200 (90a PTX is 9.0 only).
  EXPECT_EQ(device_code_for(80, parse_cuda_archs("90a")).kind, DeviceCode::kNone);
  EXPECT_EQ(device_code_for(100, parse_cuda_archs("90a")).kind, DeviceCode::kNone);
  // An H100 under a build without 90a: PTX of 89 compiled at load, or nothing without PTX.
  EXPECT_EQ(device_code_for(90, parse_cuda_archs("80;89")).str(), "compute_89 PTX (compiled at load)");
  EXPECT_EQ(device_code_for(90, parse_cuda_archs("80-real;89-real")).kind, DeviceCode::kNone);
  // Both 90 and 90a: the arch-specific cubin.
  EXPECT_EQ(device_code_for(90, parse_cuda_archs("90;90a")).str(), "sm_90a");
}

TEST(PathTable, HopperWithSm90aCodeTakesTheOwnKernels) {
  const ExecutionPaths bf16 = choose_execution_paths(query(90, kDefault));
  EXPECT_TRUE(bf16.refusal.empty());
  EXPECT_TRUE(bf16.sm90a);
  EXPECT_EQ(bf16.attention, AttentionPath::kHopper);
  EXPECT_EQ(bf16.gemm, GemmPath::kCublasLt);
  EXPECT_TRUE(bf16.fp8_allowed);
  EXPECT_EQ(choose_execution_paths(query(90, kDefault, Precision::kBf16, AttentionBackend::kNative)).attention,
            AttentionPath::kHopper);
  EXPECT_EQ(choose_execution_paths(query(90, kDefault, Precision::kBf16, AttentionBackend::kCudnn)).attention,
            AttentionPath::kCudnn);
  PathQuery q = query(90, "90a", Precision::kFp8);
  ExecutionPaths fp8 = choose_execution_paths(q);
  EXPECT_EQ(fp8.self_attention, AttentionPath::kFp8Hopper);
  EXPECT_EQ(fp8.attention, AttentionPath::kHopper);  // cross-attention and bf16 steps
  EXPECT_EQ(fp8.gemm, GemmPath::kHopperInt8);
  q.fp8.gemm_format = GemmFormat::kE4m3;
  q.fp8.attention = false;
  fp8 = choose_execution_paths(q);
  EXPECT_EQ(fp8.gemm, GemmPath::kCublasLtFp8);
  EXPECT_EQ(fp8.self_attention, AttentionPath::kHopper);
  q.fp8.gemm = false;
  EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kCublasLt);
  EXPECT_EQ(choose_execution_paths(query(90, kDefault, Precision::kFp32)).attention, AttentionPath::kFlashF32);
}

TEST(PathTable, HopperWithoutSm90aCodeOrLoadFallsBackAndRefusesFp8) {
  ExecutionPaths p = choose_execution_paths(query(90, "80;89", Precision::kFp8));
  EXPECT_TRUE(p.refusal.empty());  // compute_89 PTX runs
  EXPECT_FALSE(p.sm90a);
  EXPECT_EQ(p.attention, AttentionPath::kCudnn);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "no sm_90a code")) << p.fp8_why;
  EXPECT_EQ(p.self_attention, AttentionPath::kNone);
  EXPECT_EQ(p.gemm, GemmPath::kNone);
  PathQuery q = query(90, kDefault, Precision::kFp8);
  q.sm90a_attention_loads = false;
  q.sm90a_fp8_loads = false;
  p = choose_execution_paths(q);
  EXPECT_EQ(p.attention, AttentionPath::kCudnn);
  // The own FP8 attention does not load: cuDNN's FP8 SDPA serves (the INT8 GEMM still loads);
  // without cuDNN both reasons are given.
  EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
  EXPECT_EQ(p.self_attention, AttentionPath::kCudnnFp8);
  q.cudnn_usable = false;
  p = choose_execution_paths(q);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_TRUE(has(p.fp8_why, "do not load")) << p.fp8_why;
  // The INT8 GEMM's own check matters only when the run uses it.
  q = query(90, kDefault, Precision::kFp8);
  q.sm90a_int8_loads = false;
  EXPECT_FALSE(choose_execution_paths(q).fp8_allowed);
  q.fp8.gemm_format = GemmFormat::kE4m3;
  EXPECT_TRUE(choose_execution_paths(q).fp8_allowed);
}

TEST(PathTable, OtherGpusTakeCudnnOrTheFlashKernel) {
  for (int cc : {80, 86, 89, 100, 120}) {
    SCOPED_TRACE(cc);
    ExecutionPaths p = choose_execution_paths(query(cc, kDefault));
    EXPECT_TRUE(p.refusal.empty());
    EXPECT_FALSE(p.sm90a);
    EXPECT_EQ(p.attention, AttentionPath::kCudnn);
    EXPECT_EQ(p.gemm, GemmPath::kCublasLt);
    // The default fp8_config (INT8 GEMMs, fp8 attention): no FP8 tensor cores on 8.x before 8.9;
    // the INT8 GEMM is sm_90a code on 8.9; 10.x / 12.x block-scale the GEMMs and run cuDNN's FP8 SDPA.
    if (cc < 89) EXPECT_TRUE(has(p.fp8_why, "compute capability 8.9 or newer")) << p.fp8_why;
    if (cc == 89) EXPECT_TRUE(has(p.fp8_why, "fp8_config.gemm_format int8")) << p.fp8_why;
    EXPECT_EQ(p.fp8_allowed, cc >= 100) << p.fp8_why;
    p = choose_execution_paths(query(cc, kDefault, Precision::kBf16, AttentionBackend::kAuto, false));
    EXPECT_EQ(p.attention, AttentionPath::kFlash);
    EXPECT_TRUE(has(p.attention_why, "built without cuDNN")) << p.attention_why;
    EXPECT_EQ(choose_execution_paths(query(cc, kDefault, Precision::kBf16, AttentionBackend::kNative)).attention,
              AttentionPath::kFlash);
    p = choose_execution_paths(query(cc, kDefault, Precision::kBf16, AttentionBackend::kCudnn, false));
    EXPECT_EQ(p.attention, AttentionPath::kNone);
    EXPECT_TRUE(has(p.attention_why, "unavailable")) << p.attention_why;
    p = choose_execution_paths(query(cc, kDefault, Precision::kFp8));
    EXPECT_EQ(p.gemm, cc >= 100 ? GemmPath::kCublasLtMxfp8 : GemmPath::kNone);
    EXPECT_EQ(choose_execution_paths(query(cc, kDefault, Precision::kFp32)).gemm, GemmPath::kCublasLt);
  }
}

TEST(PathTable, BlackwellRunsBlockScaledGemms) {
  for (int cc : {100, 103, 120, 121}) {
    SCOPED_TRACE(cc);
    // precision fp4: NVFP4 GEMMs, the self-attention as bf16's.
    ExecutionPaths p = choose_execution_paths(query(cc, kDefault, Precision::kFp4));
    EXPECT_TRUE(p.fp4_allowed) << p.fp4_why;
    EXPECT_EQ(p.gemm, GemmPath::kCublasLtNvfp4);
    EXPECT_EQ(p.self_attention, p.attention);
    // precision fp8: MXFP8 GEMMs (scaling auto or block) beside a bf16 self-attention; tensor
    // scaling takes cuBLASLt's e4m3 GEMM, the INT8 one is sm_90a code, refused by name.
    PathQuery q = query(cc, kDefault, Precision::kFp8);
    q.fp8.attention = false;
    p = choose_execution_paths(q);
    EXPECT_TRUE(p.fp8_allowed) << p.fp8_why;
    EXPECT_EQ(p.gemm, GemmPath::kCublasLtMxfp8);
    EXPECT_EQ(p.self_attention, p.attention);
    EXPECT_EQ(q.fp8.gemm_format_on(cc), GemmFormat::kMxfp8);
    q.fp8.scaling = Fp8Scaling::kBlock;
    EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kCublasLtMxfp8);
    q.fp8.scaling = Fp8Scaling::kTensor;
    p = choose_execution_paths(q);
    EXPECT_FALSE(p.fp8_allowed);
    EXPECT_EQ(p.gemm, GemmPath::kNone);
    EXPECT_TRUE(has(p.fp8_why, "fp8_config.gemm_format int8")) << p.fp8_why;
    q.fp8.gemm_format = GemmFormat::kE4m3;
    EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kCublasLtFp8);
    q.fp8.gemm_format = GemmFormat::kInt8;
    q.fp8.gemm = false;  // no GEMM to scale: computes like bf16, allowed
    EXPECT_TRUE(choose_execution_paths(q).fp8_allowed);
  }
}

TEST(PathTable, BlockScalingElsewhereIsRefusedByName) {
  for (int cc : {80, 86, 89, 90}) {
    SCOPED_TRACE(cc);
    ExecutionPaths p = choose_execution_paths(query(cc, kDefault, Precision::kFp4));
    EXPECT_FALSE(p.fp4_allowed);
    EXPECT_EQ(p.gemm, GemmPath::kNone);
    EXPECT_EQ(p.self_attention, AttentionPath::kNone);
    EXPECT_TRUE(has(p.fp4_why, "compute capability 10.x or 12.x")) << p.fp4_why;
    PathQuery q = query(cc, kDefault, Precision::kFp8);
    q.fp8.scaling = Fp8Scaling::kBlock;
    p = choose_execution_paths(q);
    EXPECT_FALSE(p.fp8_allowed);
    // Before 8.9 there are no FP8 tensor cores at all: that is the reason given.
    EXPECT_TRUE(has(p.fp8_why, cc >= 89 ? "fp8_config.scaling block" : "8.9 or newer")) << p.fp8_why;
  }
  // Hopper keeps its paths under scaling auto (the default), as before block scaling.
  PathQuery q = query(90, kDefault, Precision::kFp8);
  EXPECT_EQ(q.fp8.scaling, Fp8Scaling::kAuto);
  EXPECT_EQ(q.fp8.gemm_format_on(90), GemmFormat::kInt8);
  EXPECT_EQ(q.fp8.gemm_format_on(0), GemmFormat::kInt8);  // the CPU
  EXPECT_EQ(choose_execution_paths(q).gemm, GemmPath::kHopperInt8);
  EXPECT_TRUE(choose_execution_paths(q).fp8_allowed);
  // A GPU the build has no code for refuses fp4 with the same reason.
  const ExecutionPaths none = choose_execution_paths(query(100, "90a", Precision::kFp4));
  EXPECT_FALSE(none.fp4_allowed);
  EXPECT_EQ(none.fp4_why, none.refusal);
}

TEST(PathTable, RefusesAGpuTheBuildHasNoCodeFor) {
  ExecutionPaths p = choose_execution_paths(query(80, "90a"));
  EXPECT_TRUE(has(p.refusal, "no code for compute capability 8.0")) << p.refusal;
  EXPECT_TRUE(has(p.refusal, "VGEN_CUDA_ARCHS 90a")) << p.refusal;
  EXPECT_EQ(p.attention, AttentionPath::kNone);
  EXPECT_EQ(p.gemm, GemmPath::kNone);
  EXPECT_FALSE(p.fp8_allowed);
  EXPECT_FALSE(choose_execution_paths(query(100, "90a")).refusal.empty());
  EXPECT_FALSE(choose_execution_paths(query(120, "80-real;89-real;90a")).refusal.empty());
  EXPECT_TRUE(choose_execution_paths(query(120, "80;89")).refusal.empty());  // PTX
  p = choose_execution_paths(query(75, "75;80"));
  EXPECT_TRUE(has(p.refusal, "8.0 or newer")) << p.refusal;
}

TEST(PathTable, ReportsEveryDecision) {
  const ExecutionPaths p = choose_execution_paths(query(80, kDefault, Precision::kFp8));
  const std::string text = execution_paths_text(p);
  EXPECT_TRUE(has(text, "compute capability 8.0 runs sm_80")) << text;
  EXPECT_TRUE(has(text, "attention: cuDNN SDPA")) << text;
  EXPECT_TRUE(has(text, "precision fp8: refused")) << text;
  EXPECT_TRUE(has(text, "precision fp4: refused: NVFP4 GEMMs need")) << text;
  const std::string bw = execution_paths_text(choose_execution_paths(query(100, kDefault, Precision::kFp4)));
  EXPECT_TRUE(has(bw, "GEMM: cuBLASLt NVFP4 (block-scaled E2M1, unmeasured)")) << bw;
  EXPECT_TRUE(has(bw, "precision fp4: runs here")) << bw;
  const Json j = execution_paths_json(p);
  EXPECT_EQ(j["compute_capability"], "8.0");
  EXPECT_EQ(j["code"], "sm_80");
  EXPECT_EQ(j["attention"], "cuDNN SDPA");
  EXPECT_EQ(j["fp8"]["allowed"], false);
  EXPECT_EQ(j["fp4"]["allowed"], false);
  EXPECT_FALSE(j.contains("refusal"));
  EXPECT_TRUE(execution_paths_json(choose_execution_paths(query(80, "90a"))).contains("refusal"));
}

}  // namespace
}  // namespace vgen
