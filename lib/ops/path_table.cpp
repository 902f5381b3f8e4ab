#include "ops/path_table.h"

#include <fmt/format.h>

#include <cctype>

#include "core/error.h"

namespace vgen {
namespace {

std::string cc_str(int cc) { return fmt::format("{}.{}", cc / 10, cc % 10); }

// Ranks the variants at one cc: the arch-specific code holds the most instructions.
int variant_rank(char v) { return v == 'a' ? 2 : v == 'f' ? 1 : 0; }

bool sass_runs(const CudaArch& a, int cc) {
  if (a.variant == 'a') return a.cc == cc;
  return a.cc / 10 == cc / 10 && a.cc <= cc;  // a cubin runs on later minors of its major
}

bool ptx_runs(const CudaArch& a, int cc) {
  if (a.variant == 'a') return a.cc == cc;
  if (a.variant == 'f') return a.cc / 10 == cc / 10 && a.cc <= cc;
  return a.cc <= cc;
}

bool better(const CudaArch& a, const CudaArch* best) {
  return !best || a.cc > best->cc || (a.cc == best->cc && variant_rank(a.variant) > variant_rank(best->variant));
}

// The own Hopper kernels run here: compute capability 9.0 running this build's sm_90a code.
bool runs_sm90a(const PathQuery& q, const DeviceCodeChoice& code) {
  return q.cc == 90 && code.kind != DeviceCode::kNone && code.arch.cc == 90 && code.arch.variant == 'a';
}

// Why the sm_90a kernels do not run here (empty when they do).
std::string sm90a_absent(const PathQuery& q, const DeviceCodeChoice& code, bool loads) {
  if (q.cc != 90)
    return fmt::format("compute capability {} (the own wgmma/TMA kernels are sm_90a code: compute capability 9.0 only)",
                       cc_str(q.cc));
  if (!runs_sm90a(q, code))
    return fmt::format("this build has no sm_90a code (VGEN_CUDA_ARCHS {}; add 90a)", cuda_archs_str(q.built));
  if (!loads)
    return "the sm_90a kernels do not load on this device (the driver's tensor-map encoder or their shared memory "
           "is missing)";
  return "";
}

// bf16 attention under q.backend (sets *why).
AttentionPath bf16_attention(const PathQuery& q, const DeviceCodeChoice& code, std::string* why) {
  const std::string no_hopper = sm90a_absent(q, code, q.sm90a_attention_loads);
  if (q.backend != AttentionBackend::kCudnn && no_hopper.empty()) {
    *why = "the own Hopper kernel serves head dim 128 (the fastest measured); the flash kernel other shapes";
    return AttentionPath::kHopper;
  }
  if (q.backend == AttentionBackend::kNative) {
    *why = "attention_config.backend native: " + no_hopper;
    return AttentionPath::kFlash;
  }
  if (q.cudnn_usable) {
    *why = q.backend == AttentionBackend::kCudnn ? "attention_config.backend cudnn" : "auto: " + no_hopper;
    return AttentionPath::kCudnn;
  }
  if (q.backend == AttentionBackend::kCudnn) {
    *why = "attention_config.backend cudnn, but cuDNN attention is unavailable: " + q.cudnn_why;
    return AttentionPath::kNone;
  }
  *why = fmt::format("auto: {}; cuDNN: {}", no_hopper, q.cudnn_why.empty() ? "unavailable" : q.cudnn_why);
  return AttentionPath::kFlash;
}

// The fp8 GEMM path of q (fp8_config.gemm, gemm_format, scaling); kNone with *why when refused.
// Block scaling (MXFP8) on 10.x / 12.x under scaling auto unless gemm_format e4m3 asks for
// cuBLASLt's per-token e4m3; INT8 only in the own sm_90a kernel; e4m3 through cuBLASLt anywhere with
// FP8 tensor cores.
GemmPath fp8_gemm(const PathQuery& q, const DeviceCodeChoice& code, std::string* why) {
  if (!q.fp8.gemm) return GemmPath::kCublasLt;
  if (q.fp8.gemm_format_on(q.cc) == GemmFormat::kMxfp8) {
    if (has_block_scaled_mma(q.cc)) return GemmPath::kCublasLtMxfp8;
    *why = fmt::format("fp8_config.scaling block (MXFP8) needs block-scaled tensor cores (compute capability 10.x "
                       "or 12.x), not {}",
                       cc_str(q.cc));
    return GemmPath::kNone;
  }
  if (!q.fp8.gemm_int8()) return GemmPath::kCublasLtFp8;
  const std::string no = sm90a_absent(q, code, q.sm90a_int8_loads);
  if (no.empty()) return GemmPath::kHopperInt8;
  *why = "fp8_config.gemm_format int8 is vgen's own sm_90a INT8 kernel: " + no +
         "; set fp8_config.gemm_format e4m3 (cuBLASLt's FP8 GEMM)";
  return GemmPath::kNone;
}

// The fp8 self-attention path (fp8_config.attention): the own sm_90a kernel where it runs and is
// not forced off (attention_config.backend cudnn), else cuDNN's FP8 SDPA (compute capability 9.0
// and newer: cuDNN has no FP8 SDPA for 8.9); kNone with *why when neither.
AttentionPath fp8_attention(const PathQuery& q, const DeviceCodeChoice& code, std::string* why) {
  const std::string no_own = q.backend == AttentionBackend::kCudnn
                                 ? std::string("attention_config.backend cudnn")
                                 : sm90a_absent(q, code, q.sm90a_fp8_loads);
  if (no_own.empty()) return AttentionPath::kFp8Hopper;
  std::string no_cudnn;
  if (q.backend == AttentionBackend::kNative)
    no_cudnn = "attention_config.backend native keeps cuDNN out";
  else if (q.cc < kCudnnFp8AttentionMinCc)
    no_cudnn = fmt::format("cuDNN's FP8 SDPA runs on compute capability 9.0 and newer, not {}", cc_str(q.cc));
  else if (!q.cudnn_usable)
    no_cudnn = "cuDNN is unavailable: " + (q.cudnn_why.empty() ? std::string("not initialised") : q.cudnn_why);
  else if (!q.cudnn_fp8_usable)
    no_cudnn = "cuDNN's FP8 SDPA does not run on this device: " + q.cudnn_fp8_why;
  else if (q.fp8.qk_int8())
    no_cudnn = "fp8_config.attention_qk int8 is the own kernel's (cuDNN's FP8 SDPA takes e4m3 Q and K)";
  if (no_cudnn.empty()) return AttentionPath::kCudnnFp8;
  *why = fmt::format("the FP8 self-attention runs in vgen's own sm_90a kernel (not here: {}) or in cuDNN's FP8 SDPA "
                     "(not here: {}); set fp8_config.attention false for a bf16 self-attention beside the fp8 GEMMs",
                     no_own, no_cudnn);
  return AttentionPath::kNone;
}

// Whether precision fp8 runs here, with its GEMM and self-attention paths (*gemm, *self_attention;
// `bf16` the self-attention when fp8_config.attention is false); *why says why not.
bool fp8_runs(const PathQuery& q, const DeviceCodeChoice& code, AttentionPath bf16, GemmPath* gemm,
              AttentionPath* self_attention, std::string* why) {
  *gemm = GemmPath::kNone;
  *self_attention = AttentionPath::kNone;
  if (q.cc < kFp8MinCc) {
    *why = fmt::format("FP8 tensor cores need compute capability 8.9 or newer (Ada, Hopper, Blackwell), not {}",
                       cc_str(q.cc));
    return false;
  }
  const GemmPath g = fp8_gemm(q, code, why);
  if (g == GemmPath::kNone) return false;
  const AttentionPath a = q.fp8.attention ? fp8_attention(q, code, why) : bf16;
  if (a == AttentionPath::kNone) {
    if (why->empty()) *why = "no bf16 attention path: " + q.cudnn_why;
    return false;
  }
  *gemm = g;
  *self_attention = a;
  return true;
}

// Whether precision fp4 runs here (NVFP4 GEMMs through cuBLASLt); *why says why not.
bool fp4_runs(const PathQuery& q, std::string* why) {
  if (has_block_scaled_mma(q.cc)) return true;
  *why = fmt::format("NVFP4 GEMMs need block-scaled FP4 tensor cores (compute capability 10.x or 12.x, Blackwell), "
                     "not {}",
                     cc_str(q.cc));
  return false;
}

}  // namespace

std::string CudaArch::str() const {
  std::string s = std::to_string(cc);
  if (variant) s += variant;
  if (sass && !ptx) s += "-real";
  if (ptx && !sass) s += "-virtual";
  return s;
}

std::vector<CudaArch> parse_cuda_archs(const std::string& list) {
  std::vector<CudaArch> out;
  std::string item;
  auto flush = [&] {
    if (item.empty()) return;
    CudaArch a;
    size_t i = 0;
    while (i < item.size() && std::isdigit(static_cast<unsigned char>(item[i]))) ++i;
    std::string rest = item.substr(i);
    if (!rest.empty() && (rest[0] == 'a' || rest[0] == 'f')) a.variant = rest[0], rest.erase(0, 1);
    if (rest == "-real") a.ptx = false;
    else if (rest == "-virtual") a.sass = false;
    else VGEN_CHECK(rest.empty(), ExitCode::kInternal, "CUDA architecture list '{}': '{}' is not an architecture", list, item);
    VGEN_CHECK(i >= 2 && i <= 3, ExitCode::kInternal, "CUDA architecture list '{}': '{}' is not an architecture", list,
               item);
    a.cc = std::stoi(item.substr(0, i));
    out.push_back(a);
    item.clear();
  };
  for (char c : list) {
    if (c == ';' || c == ',' || c == ' ') flush();
    else item += c;
  }
  flush();
  return out;
}

std::string cuda_archs_str(const std::vector<CudaArch>& archs) {
  std::string s;
  for (const CudaArch& a : archs) s += (s.empty() ? "" : ";") + a.str();
  return s.empty() ? "none" : s;
}

std::string DeviceCodeChoice::str() const {
  const std::string name = std::to_string(arch.cc) + (arch.variant ? std::string(1, arch.variant) : "");
  switch (kind) {
    case DeviceCode::kSass: return "sm_" + name;
    case DeviceCode::kPtx: return "compute_" + name + " PTX (compiled at load)";
    default: return "none";
  }
}

DeviceCodeChoice device_code_for(int cc, const std::vector<CudaArch>& built) {
  const CudaArch* sass = nullptr;
  const CudaArch* ptx = nullptr;
  for (const CudaArch& a : built) {
    if (a.sass && sass_runs(a, cc) && better(a, sass)) sass = &a;
    if (a.ptx && ptx_runs(a, cc) && better(a, ptx)) ptx = &a;
  }
  if (sass) return {DeviceCode::kSass, *sass};
  if (ptx) return {DeviceCode::kPtx, *ptx};
  return {};
}

const char* attention_path_name(AttentionPath p) {
  switch (p) {
    case AttentionPath::kHopper: return "own Hopper kernel (sm_90a wgmma/TMA)";
    case AttentionPath::kCudnn: return "cuDNN SDPA";
    case AttentionPath::kFlash: return "own flash kernel (mma.sync bf16)";
    case AttentionPath::kFlashF32: return "own fp32 kernel (CUDA cores)";
    case AttentionPath::kFp8Hopper: return "own FP8 kernel (sm_90a wgmma e4m3/s8)";
    case AttentionPath::kCudnnFp8: return "cuDNN FP8 SDPA (e4m3 Q/K/V/P, per-tensor scales)";
    default: return "none";
  }
}

const char* gemm_path_name(GemmPath p) {
  switch (p) {
    case GemmPath::kCublasLt: return "cuBLASLt";
    case GemmPath::kCublasLtFp8: return "cuBLASLt FP8 e4m3";
    case GemmPath::kHopperInt8: return "own Hopper INT8 kernel (sm_90a wgmma s8)";
    case GemmPath::kCublasLtMxfp8: return "cuBLASLt MXFP8 (block-scaled e4m3, unmeasured)";
    case GemmPath::kCublasLtNvfp4: return "cuBLASLt NVFP4 (block-scaled E2M1, unmeasured)";
    default: return "none";
  }
}

ExecutionPaths choose_execution_paths(const PathQuery& q) {
  ExecutionPaths p;
  p.cc = q.cc;
  p.code = device_code_for(q.cc, q.built);
  if (q.cc < 80) {
    p.refusal = fmt::format("compute capability {}: vgen needs 8.0 or newer (bf16 tensor cores)", cc_str(q.cc));
  } else if (p.code.kind == DeviceCode::kNone) {
    p.refusal = fmt::format("this build has no code for compute capability {} (VGEN_CUDA_ARCHS {}); rebuild with "
                            "its architecture in VGEN_CUDA_ARCHS, or native",
                            cc_str(q.cc), cuda_archs_str(q.built));
  }
  if (!p.refusal.empty()) {
    p.fp8_why = p.fp4_why = p.refusal;
    p.attention_why = p.refusal;
    return p;
  }
  p.sm90a = runs_sm90a(q, p.code);
  p.fp4_allowed = fp4_runs(q, &p.fp4_why);
  p.attention = p.self_attention = bf16_attention(q, p.code, &p.attention_why);
  p.fp8_allowed = fp8_runs(q, p.code, p.attention, &p.fp8_gemm, &p.fp8_self_attention, &p.fp8_why);
  p.gemm = GemmPath::kCublasLt;
  if (q.precision == Precision::kFp32) {
    p.attention = p.self_attention = AttentionPath::kFlashF32;
    p.attention_why = "precision fp32: fp32 q/k/v";
    return p;
  }
  if (q.precision == Precision::kFp8) {
    p.self_attention = p.fp8_self_attention;
    p.gemm = p.fp8_gemm;
  }
  if (q.precision == Precision::kFp4) {  // the self-attention as bf16's
    p.self_attention = p.fp4_allowed ? p.attention : AttentionPath::kNone;
    p.gemm = !p.fp4_allowed ? GemmPath::kNone : q.fp8.gemm ? GemmPath::kCublasLtNvfp4 : GemmPath::kCublasLt;
  }
  return p;
}

std::string execution_paths_text(const ExecutionPaths& p) {
  if (!p.refusal.empty()) return "paths: none: " + p.refusal;
  std::string s = fmt::format("paths: compute capability {} runs {}; own sm_90a kernels {}\n", cc_str(p.cc),
                              p.code.str(), p.sm90a ? "yes" : "no");
  s += fmt::format("  attention: {} ({})\n", attention_path_name(p.attention), p.attention_why);
  if (p.self_attention != p.attention)
    s += fmt::format("  self-attention: {}\n", attention_path_name(p.self_attention));
  s += fmt::format("  GEMM: {}\n", gemm_path_name(p.gemm));
  s += p.fp8_allowed ? fmt::format("  precision fp8: runs here (self-attention: {}; GEMM: {})\n",
                                   attention_path_name(p.fp8_self_attention), gemm_path_name(p.fp8_gemm))
                     : "  precision fp8: refused: " + p.fp8_why + "\n";
  s += p.fp4_allowed ? "  precision fp4: runs here" : "  precision fp4: refused: " + p.fp4_why;
  return s;
}

Json execution_paths_json(const ExecutionPaths& p) {
  Json j;
  j["compute_capability"] = cc_str(p.cc);
  j["code"] = p.code.str();
  j["sm90a_kernels"] = p.sm90a;
  j["attention"] = attention_path_name(p.attention);
  j["attention_why"] = p.attention_why;
  j["self_attention"] = attention_path_name(p.self_attention);
  j["gemm"] = gemm_path_name(p.gemm);
  j["fp8"] = p.fp8_allowed ? Json{{"allowed", true},
                                  {"self_attention", attention_path_name(p.fp8_self_attention)},
                                  {"gemm", gemm_path_name(p.fp8_gemm)}}
                            : Json{{"allowed", false}, {"why", p.fp8_why}};
  j["fp4"] = p.fp4_allowed ? Json{{"allowed", true}} : Json{{"allowed", false}, {"why", p.fp4_why}};
  if (!p.refusal.empty()) j["refusal"] = p.refusal;
  return j;
}

#ifndef VGEN_WITH_CUDA
const std::vector<CudaArch>& built_cuda_archs() {
  static const std::vector<CudaArch> none;
  return none;
}

bool current_device_query(PathQuery&, std::string* gpu_name, std::string* why) {
  if (gpu_name) *gpu_name = "none";
  if (why) *why = "this vgen was built without the CUDA backend (VGEN_CUDA=OFF)";
  return false;
}

AttentionPath device_attention_path(AttentionBackend) { return AttentionPath::kNone; }

AttentionPath device_fp8_attention_path(AttentionBackend, const Fp8Config&) { return AttentionPath::kNone; }

std::string nccl_version_string() { return "none (no CUDA backend)"; }
#endif

}  // namespace vgen
