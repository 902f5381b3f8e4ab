// The execution paths of a GPU: per op and precision, the fastest path the GPU runs given its
// compute capability and the code this build holds (VGEN_CUDA_ARCHS, cmake/vgen_cuda_archs.cmake).
// choose_execution_paths is the one place that decides (a pure function, tested on the CPU); the
// attention dispatch (ops/attention_backend_cuda.cpp) and the start-up refusals (pipeline/) follow
// it, and the Hopper kernels' own load checks (kernels/common/sm90a_check.cuh) still refuse a launch
// on a GPU their code was not built for. docs/support.md lists the outcomes per GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/attention_config.h"
#include "config/fp8_config.h"
#include "config/precision.h"
#include "core/json.h"

namespace vgen {

// One entry of VGEN_CUDA_ARCHS: "90a" → cc 90, arch-specific, SASS and PTX; "-real" is SASS only,
// "-virtual" PTX only.
struct CudaArch {
  int cc = 0;             // major·10 + minor, e.g. 90, 120
  char variant = 0;       // 'a': runs only on exactly cc (wgmma, TMA, setmaxnreg); 'f': the family; 0
  bool sass = true;       // a cubin for the GPU itself
  bool ptx = true;        // PTX the driver compiles for newer GPUs
  std::string str() const;  // "90a", "80-real"
};

// "80;86;90a-real;120" (CMake's list syntax, also ',' or ' '); an entry that is not an
// architecture is kInternal (the list comes from the build).
std::vector<CudaArch> parse_cuda_archs(const std::string& list);
std::string cuda_archs_str(const std::vector<CudaArch>& archs);  // "80;86;90a"

// The code of a build a device of compute capability cc runs, as the CUDA driver picks it: the
// newest compatible cubin (same major, minor not above the device's; 'a' only on its exact cc),
// else the newest compatible PTX (any older cc, compiled at load; 'a' only on its exact cc, 'f'
// within its major). kNone: nothing of this build runs there.
enum class DeviceCode : uint8_t { kSass, kPtx, kNone };
struct DeviceCodeChoice {
  DeviceCode kind = DeviceCode::kNone;
  CudaArch arch;
  std::string str() const;  // "sm_90a", "compute_80 PTX (compiled at load)", "none"
};
DeviceCodeChoice device_code_for(int cc, const std::vector<CudaArch>& built);

enum class AttentionPath : uint8_t {
  kHopper,     // the own sm_90a kernel (TMA, wgmma) at head dim 128, the flash kernel elsewhere
  kCudnn,      // cuDNN's fused SDPA where it serves the call, the flash kernel elsewhere
  kFlash,      // the own flash kernel (mma.sync bf16, sm_80+)
  kFlashF32,   // the own fp32 kernel on CUDA cores (precision fp32)
  kFp8Hopper,  // the own FP8 kernel (sm_90a: TMA, wgmma e4m3 / s8)
  kCudnnFp8,   // cuDNN's FP8 SDPA (e4m3 Q/K/V and P, per-tensor scales; compute capability 9.0+)
  kNone,       // refused (ExecutionPaths::refusal says why)
};
const char* attention_path_name(AttentionPath p);

enum class GemmPath : uint8_t {
  kCublasLt,     // cuBLASLt bf16 / fp32
  kCublasLtFp8,  // cuBLASLt e4m3 with outer-vector scales (fp8_config.gemm_format e4m3)
  kHopperInt8,   // the own sm_90a INT8 W8A8 kernel (fp8_config.gemm_format int8)
  kCublasLtMxfp8,  // cuBLASLt block-scaled e4m3, a UE8M0 scale per 32 values (fp8 on 10.x / 12.x)
  kCublasLtNvfp4,  // cuBLASLt block-scaled E2M1, an e4m3 scale per 16 values (precision fp4)
  kNone,         // refused
};
const char* gemm_path_name(GemmPath p);

// The facts the choice rests on: the device, the build, and the run's settings.
struct PathQuery {
  int cc = 0;                  // the device's compute capability, major·10 + minor
  std::vector<CudaArch> built;  // this build's architectures
  // The sm_90a kernel families' own load checks on the device (sm90a_check.cuh: the driver's
  // tensor-map encoder, shared memory, the probe kernel); true where not asked (tests, no GPU).
  bool sm90a_attention_loads = true, sm90a_fp8_loads = true, sm90a_int8_loads = true;
  bool cudnn_usable = false;   // built with cuDNN and it initialises on the device
  std::string cudnn_why;       // why not, when not
  // cuDNN's FP8 SDPA builds a plan on the device (attention_cudnn_fp8_available's probe); true where
  // not asked (tests, or a run that does not take it).
  bool cudnn_fp8_usable = true;
  std::string cudnn_fp8_why;   // why not, when not
  Precision precision = Precision::kBf16;
  AttentionBackend backend = AttentionBackend::kAuto;
  Fp8Config fp8;               // precision fp8's parts (fp4's switches under precision fp4)
};

// FP8 tensor cores (e4m3 GEMMs through cuBLASLt): compute capability 8.9 (Ada) and newer.
constexpr int kFp8MinCc = 89;
// cuDNN's FP8 SDPA forward: Hopper and newer (cuDNN has none for 8.9).
constexpr int kCudnnFp8AttentionMinCc = 90;

// Blackwell's block-scaled tensor cores (MXFP8, NVFP4 through cuBLASLt): compute capability 10.x
// (B200, GB200, B300) and 12.x (RTX 5090, RTX PRO 6000).
inline bool has_block_scaled_mma(int cc) { return cc / 10 == 10 || cc / 10 == 12; }

struct ExecutionPaths {
  int cc = 0;
  DeviceCodeChoice code;
  bool sm90a = false;           // the device runs this build's sm_90a code (the own Hopper kernels)
  AttentionPath attention = AttentionPath::kNone;       // self and cross attention (fp8: cross, bf16 steps)
  AttentionPath self_attention = AttentionPath::kNone;  // the DiT's self-attention at the run's precision
  GemmPath gemm = GemmPath::kNone;                      // the block linears at the run's precision
  bool fp8_allowed = false;     // precision fp8 can run here (with q's fp8_config)
  // The paths precision fp8 takes here (whatever the run's precision; kNone where refused): the
  // fp8 self-attention and the block linears.
  AttentionPath fp8_self_attention = AttentionPath::kNone;
  GemmPath fp8_gemm = GemmPath::kNone;
  std::string fp8_why;          // why not, when not
  bool fp4_allowed = false;     // precision fp4 can run here
  std::string fp4_why;          // why not, when not
  std::string refusal;          // non-empty: the run cannot start here, and why
  std::string attention_why;    // what decided the attention path, in words
};

// The fastest paths the device runs for q; decides and explains, never throws.
ExecutionPaths choose_execution_paths(const PathQuery& q);

// One line per decision, for the start-up log (GPU name and library versions added by the caller).
std::string execution_paths_text(const ExecutionPaths& p);
// timing.json's "execution_paths" (without the caller's GPU name, NCCL and NVLink fields).
Json execution_paths_json(const ExecutionPaths& p);

// This build's architectures (empty without the CUDA backend).
const std::vector<CudaArch>& built_cuda_archs();

// Fills q's device facts for the current device (cc, the load checks, cuDNN only where the choice
// depends on it) and *gpu_name; false without a usable device or the CUDA backend (*why says so).
bool current_device_query(PathQuery& q, std::string* gpu_name, std::string* why);

// The NCCL version this process loads ("2.27.7").
std::string nccl_version_string();

// The current device's paths for bf16 calls with `backend` (cached per device and backend): what
// the attention dispatch follows.
AttentionPath device_attention_path(AttentionBackend backend);

// The current device's fp8 self-attention path for `backend` and f's switches (kFp8Hopper,
// kCudnnFp8 or kNone; cached per device, backend and Q·Kᵀ format): what cuda_attention_fp8 follows.
AttentionPath device_fp8_attention_path(AttentionBackend backend, const Fp8Config& f);

}  // namespace vgen
