// cuDNN FP8 SDPA forward (see attention_cudnn_fp8.cuh): the workspace layout, the host checks, and
// the graph (built, cached and run like attention_cudnn.cpp's bf16 one). Host code only; compiled
// in every CUDA build, with the cuDNN path only when VGEN_WITH_CUDNN is defined.
#include "kernels/attention/attention_cudnn_fp8.cuh"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/attention/attention_cudnn_common.h"

#ifdef VGEN_WITH_CUDNN
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>
#endif

namespace vgen::kern {

using cudnn_sdpa::aligned16;
using cudnn_sdpa::reject;
namespace {

thread_local std::string t_last_error;

cudaError_t fail(cudaError_t e, std::string what) {
  t_last_error = std::move(what);
  return e;
}


size_t round256(size_t n) { return (n + 255) / 256 * 256; }
int64_t valid_kv(const AttnArgs& a) { return std::clamp<int64_t>(a.num_valid_kv, 0, a.Skv); }

}  // namespace

const char* attention_cudnn_fp8_last_error() { return t_last_error.c_str(); }

namespace {

// Bytes of K's mean and of its partial sums.
size_t mean_bytes(const AttnArgs& a) { return size_t(a.B * a.H * a.D) * sizeof(float); }
size_t ksum_bytes(const AttnArgs& a) {
  const int64_t chunks = (valid_kv(a) + kCudnnFp8KeyChunk - 1) / kCudnnFp8KeyChunk;
  return size_t(a.B * a.H * std::max<int64_t>(chunks, 1) * a.D) * sizeof(float);
}

}  // namespace

size_t attention_cudnn_fp8_workspace_bytes(const AttnArgs& a) {
  const size_t hd = size_t(a.H * attention_cudnn_fp8_head_dim(a.D)), q = size_t(a.B * a.Sq) * hd;
  const size_t kv = size_t(a.B * valid_kv(a)) * hd;
  return round256(kCudnnFp8Scalars * sizeof(float)) + round256(q) + 2 * round256(kv) + round256(2 * q) +
         round256(mean_bytes(a)) + round256(ksum_bytes(a));
}

CudnnFp8Buffers attention_cudnn_fp8_buffers(const AttnArgs& a, void* workspace) {
  const size_t hd = size_t(a.H * attention_cudnn_fp8_head_dim(a.D)), q = size_t(a.B * a.Sq) * hd;
  const size_t kv = size_t(a.B * valid_kv(a)) * hd;
  auto* p = static_cast<uint8_t*>(workspace);
  CudnnFp8Buffers b;
  b.scalars = reinterpret_cast<float*>(p);  // first: 256-byte aligned whatever the sizes
  p += round256(kCudnnFp8Scalars * sizeof(float));
  b.q8 = p;
  p += round256(q);
  b.k8 = p;
  p += round256(kv);
  b.v8 = p;
  p += round256(kv);
  b.o = p;  // e4m3 or bf16: 2 bytes an element
  p += round256(2 * q);
  b.km = reinterpret_cast<float*>(p);
  p += round256(mean_bytes(a));
  b.ksum = reinterpret_cast<float*>(p);
  return b;
}

bool attention_cudnn_fp8_supports(const AttnArgs& a, std::string* why) {
  if (a.B < 1 || a.Sq < 1 || a.Skv < 1 || a.H < 1)
    return reject(why, "empty problem (B=" + std::to_string(a.B) + " Sq=" + std::to_string(a.Sq) +
                           " Skv=" + std::to_string(a.Skv) + " H=" + std::to_string(a.H) + ")");
  if (a.D < 1 || a.D > kAttnMaxHeadDim) return reject(why, "head dim " + std::to_string(a.D) + " is not in [1, 128]");
  if (!a.q || !a.k || !a.v || !a.out) return reject(why, "null q/k/v/out pointer");
  const AttnStrides s = attn_strides(a);
  for (int64_t t : {s.q, s.k, s.v, s.o})
    if (t < a.H * a.D) return reject(why, "token stride " + std::to_string(t) + " is below H*D");
  if (a.lse && !aligned16(a.lse)) return reject(why, "lse is not 16-byte aligned");
  return true;
}

#ifndef VGEN_WITH_CUDNN

CudnnFp8Out attention_cudnn_fp8_out_type() { return CudnnFp8Out::kE4m3; }

bool attention_cudnn_fp8_available(std::string* why) {
  return reject(why, "this vgen was built without cuDNN (cuDNN or the cudnn-frontend headers were not found at "
                     "configure time; see VGEN_CUDNN_FRONTEND_DIR)");
}

cudaError_t attention_fwd_cudnn_fp8(const AttnArgs&, void*, size_t, cudaStream_t) {
  return fail(cudaErrorNotSupported, "this vgen was built without cuDNN");
}

CudnnFp8Stats attention_cudnn_fp8_stats() { return {}; }

#else  // VGEN_WITH_CUDNN

namespace fe = cudnn_frontend;

namespace {

constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidDq = 6, kUidDk = 7, kUidDv = 8,
                  kUidDs = 9, kUidSo = 10, kUidAmaxS = 11, kUidAmaxO = 12;

constexpr float kScaleS = 448.0f;  // P's e4m3 scale: the largest e4m3 value (fp8_e4m3_ref.h's kFp8E4M3Max)

// device, B, Sq, nv, H, Dp, out token stride (bf16 O written into out; 0: dense [B,Sq,H,Dp] in the
// workspace), LSE, e4m3 out, scale bits.
using GraphKey = std::array<int64_t, 10>;

struct GraphEntry {
  std::shared_ptr<fe::graph::Graph> graph;  // null: cuDNN rejected this key (why says so)
  std::string why;
  int64_t workspace = 0;
};

struct DeviceRes {
  cudnnHandle_t handle = nullptr;
  std::string init_error;
  int cc = 0;
  std::map<cudaStream_t, std::pair<void*, int64_t>> workspaces;
};

// Never destroyed: handles and graphs may outlive static destruction of the CUDA runtime.
struct State {
  std::mutex mu;
  std::vector<DeviceRes> devs;
  std::map<GraphKey, GraphEntry> graphs;
  CudnnFp8Stats stats;
};
State& state() {
  static State* s = new State();
  return *s;
}

std::string fe_error(const char* step, fe::error_t e) { return cudnn_sdpa::fe_error("cuDNN FP8 SDPA", step, e); }

// Caller holds the lock: the handle and compute capability of `dev` (made on first use).
cudaError_t device_res(State& st, int dev, DeviceRes** out) {
  if (size_t(dev) >= st.devs.size()) st.devs.resize(size_t(dev) + 1);
  DeviceRes& r = st.devs[size_t(dev)];
  if (!r.handle && r.init_error.empty()) {
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    r.cc = major * 10 + minor;
    cudnn_sdpa::ensure_handle(r.handle, r.init_error, dev);
  }
  if (!r.handle) return fail(cudaErrorNotSupported, r.init_error);
  *out = &r;
  return cudaSuccess;
}

std::shared_ptr<fe::graph::Tensor_attributes> scalar(fe::graph::Graph& g, const char* name, int64_t uid) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({1, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

// The FP8 SDPA graph of `key`: Q/K/V e4m3 [B,H,S,Dp] views of the dense [B,S,H,Dp] copies, the
// scalars per tensor, O bf16 or e4m3 (token stride key[6], dense when 0), Stats [B,H,Sq,1] like lse.
std::shared_ptr<fe::graph::Graph> make_graph(const GraphKey& key, float scale) {
  const int64_t B = key[1], Sq = key[2], nv = key[3], H = key[4], D = key[5], os = key[6];
  const bool has_lse = key[7] != 0, e4m3_out = key[8] != 0;
  const int64_t hd = H * D;
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(fe::DataType_t::FP8_E4M3)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto operand = [&](const char* name, int64_t uid, int64_t S) {
    return g->tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({B, H, S, D}).set_stride(
        {S * hd, D, hd, 1}));
  };
  auto Q = operand("Q", kUidQ, Sq), K = operand("K", kUidK, nv), V = operand("V", kUidV, nv);
  auto dq = scalar(*g, "descale_q", kUidDq), dk = scalar(*g, "descale_k", kUidDk), dv = scalar(*g, "descale_v", kUidDv);
  auto ds = scalar(*g, "descale_s", kUidDs), so = scalar(*g, "scale_o", kUidSo);
  auto ss = g->tensor(kScaleS);  // P stored as P · 448
  auto attrs = fe::graph::SDPA_fp8_attributes().set_name("vgen_sdpa_fp8").set_generate_stats(has_lse).set_attn_scale(
      scale);
  auto [O, Stats, AmaxS, AmaxO] = g->sdpa_fp8(Q, K, V, dq, dk, dv, ds, ss, so, attrs);
  const int64_t ot = os ? os : hd;
  O->set_output(true).set_uid(kUidO).set_dim({B, H, Sq, D}).set_stride({Sq * ot, D, ot, 1}).set_data_type(
      e4m3_out ? fe::DataType_t::FP8_E4M3 : fe::DataType_t::BFLOAT16);
  AmaxS->set_output(true).set_uid(kUidAmaxS).set_dim({1, 1, 1, 1}).set_stride({1, 1, 1, 1}).set_data_type(
      fe::DataType_t::FLOAT);
  AmaxO->set_output(true).set_uid(kUidAmaxO).set_dim({1, 1, 1, 1}).set_stride({1, 1, 1, 1}).set_data_type(
      fe::DataType_t::FLOAT);
  if (has_lse) {
    if (!Stats) return nullptr;
    Stats->set_output(true).set_uid(kUidStats).set_data_type(fe::DataType_t::FLOAT).set_dim({B, H, Sq, 1}).set_stride(
        {H * Sq, Sq, 1, 1});
  }
  return g;
}

GraphEntry build_graph(const GraphKey& key, float scale, cudnnHandle_t handle) {
  std::shared_ptr<fe::graph::Graph> g = make_graph(key, scale);
  if (!g) return {nullptr, "cuDNN FP8 SDPA: the graph has no Stats output", 0};
  fe::error_t e = g->validate();
  if (e.is_bad()) return {nullptr, fe_error("validate", e), 0};
  if ((e = g->build_operation_graph(handle)).is_bad()) return {nullptr, fe_error("build_operation_graph", e), 0};
  if ((e = g->create_execution_plans({fe::HeurMode_t::A})).is_bad())
    return {nullptr, fe_error("create_execution_plans", e), 0};
  if ((e = g->check_support(handle)).is_bad()) return {nullptr, fe_error("check_support", e), 0};
  if ((e = g->build_plans(handle, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE)).is_bad())
    return {nullptr, fe_error("build_plans", e), 0};
  int64_t ws = 0;
  if ((e = g->get_workspace_size(ws)).is_bad()) return {nullptr, fe_error("get_workspace_size", e), 0};
  return {std::move(g), "", ws};
}

// bf16 output where cuDNN has it (Blackwell, cuDNN 9.13+), else e4m3.
bool bf16_out_offered(int cc) { return cc >= 100 && cudnnGetVersion() >= 91300; }

// Caller holds the lock: the cached graph of `key`, built on first use.
const GraphEntry& graph_for(State& st, const GraphKey& key, float scale, cudnnHandle_t handle) {
  auto it = st.graphs.find(key);
  if (it == st.graphs.end()) {
    GraphEntry e = build_graph(key, scale, handle);
    ++(e.graph ? st.stats.graphs_built : st.stats.graphs_rejected);
    it = st.graphs.emplace(key, std::move(e)).first;
  }
  return it->second;
}

// Caller holds the lock: the cuDNN workspace of (device, stream), at least `bytes`.
cudaError_t cudnn_workspace(DeviceRes& r, cudaStream_t stream, int64_t bytes, void** out) {
  *out = nullptr;
  if (bytes <= 0) return cudaSuccess;
  auto& [ptr, size] = r.workspaces[stream];
  if (size < bytes) {
    if (ptr) cudaFree(ptr);  // waits for the device: queued work on the old block has finished
    ptr = nullptr, size = 0;
    const cudaError_t e = cudaMalloc(&ptr, size_t(bytes));
    if (e != cudaSuccess) return fail(e, "cudaMalloc of " + std::to_string(bytes) + " bytes of cuDNN workspace");
    size = bytes;
  }
  *out = ptr;
  return cudaSuccess;
}

// Caller holds the lock: the device's handle, refused before compute capability 9.0.
cudaError_t fp8_device(State& st, int dev, DeviceRes** r) {
  cudaError_t ce = device_res(st, dev, r);
  if (ce != cudaSuccess) return ce;
  if ((*r)->cc < 90)
    return fail(cudaErrorNotSupported, "cuDNN has no FP8 SDPA for compute capability " +
                                           std::to_string((*r)->cc / 10) + "." + std::to_string((*r)->cc % 10) +
                                           " (9.0 and newer)");
  return cudaSuccess;
}

// Caller holds the lock: the graph of a call (bf16 O where offered and it builds, else e4m3);
// *key says which. `direct`: a bf16 O may go straight into out.
const GraphEntry& graph_of(State& st, const DeviceRes& r, const AttnArgs& a, bool direct, GraphKey* key) {
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &a.scale, sizeof(scale_bits));
  const int64_t Dp = attention_cudnn_fp8_head_dim(a.D), dev = key->at(0);
  *key = GraphKey{dev, a.B, a.Sq, valid_kv(a), a.H, Dp, direct ? attn_strides(a).o : 0, a.lse ? 1 : 0, 0,
                  int64_t(scale_bits)};
  if (bf16_out_offered(r.cc)) {
    const GraphEntry& g = graph_for(st, *key, a.scale, r.handle);
    if (g.graph) return g;
  }
  (*key)[6] = 0;  // e4m3 out: the only one before Blackwell, the fallback on it
  (*key)[8] = 1;
  return graph_for(st, *key, a.scale, r.handle);
}

// Steps 1 to 3 once the graph is there (nothing is launched when cuDNN has none).
cudaError_t run_graph(const AttnArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  int dev = 0;
  cudaError_t ce = cudaGetDevice(&dev);
  if (ce != cudaSuccess) return fail(ce, "cudaGetDevice");
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  DeviceRes* r = nullptr;
  if ((ce = fp8_device(st, dev, &r)) != cudaSuccess) return ce;
  const cudnnStatus_t ss = cudnnSetStream(r->handle, stream);
  if (ss != CUDNN_STATUS_SUCCESS)
    return fail(cudaErrorUnknown, std::string("cudnnSetStream: ") + cudnnGetErrorString(ss));
  // A bf16 O goes straight into out when its layout allows, else through the workspace.
  const bool direct = attention_cudnn_fp8_head_dim(a.D) == a.D && attn_strides(a).o % 8 == 0 && aligned16(a.out);
  GraphKey key{};
  key[0] = dev;
  const GraphEntry* g = &graph_of(st, *r, a, direct, &key);
  if (!g->graph) return fail(cudaErrorNotSupported, g->why);
  if ((ce = attention_cudnn_fp8_quantize(a, workspace, workspace_bytes, stream)) != cudaSuccess)
    return fail(ce, "the FP8 quantisation of q/k/v");
  const CudnnFp8Buffers buf = attention_cudnn_fp8_buffers(a, workspace);
  const bool e4m3_out = key[8] != 0, into_out = key[6] != 0;
  void* ws = nullptr;
  if ((ce = cudnn_workspace(*r, stream, g->workspace, &ws)) != cudaSuccess) return ce;
  std::unordered_map<int64_t, void*> pack{{kUidQ, buf.q8},
                                          {kUidK, buf.k8},
                                          {kUidV, buf.v8},
                                          {kUidO, into_out ? a.out : buf.o},
                                          {kUidDq, buf.scalars + kDescaleQ},
                                          {kUidDk, buf.scalars + kDescaleK},
                                          {kUidDv, buf.scalars + kDescaleV},
                                          {kUidDs, buf.scalars + kDescaleS},
                                          {kUidSo, buf.scalars + (e4m3_out ? kScaleO : kOne)},
                                          {kUidAmaxS, buf.scalars + kAmaxS},
                                          {kUidAmaxO, buf.scalars + kAmaxO}};
  if (a.lse) pack.emplace(kUidStats, a.lse);
  const fe::error_t e = g->graph->execute(r->handle, pack, ws);
  if (e.is_bad()) return fail(cudaErrorUnknown, fe_error("execute", e));
  ++st.stats.calls;
  if (e4m3_out) ++st.stats.e4m3_out;
  if (a.lse && (ce = attention_cudnn_fp8_lse_fix(a, buf, stream)) != cudaSuccess) return fail(ce, "the LSE fix");
  return into_out ? cudaSuccess : attention_cudnn_fp8_finish(a, buf, e4m3_out, stream);
}

// The library version's own limits; "" when usable.
std::string version_problem() {
  const size_t v = cudnnGetVersion();
  if (v < 90100 || v == 91000)
    return "cuDNN " + std::to_string(v) + " has no usable FP8 SDPA (9.1 or newer, not 9.10.0)";
  return "";
}

}  // namespace

bool attention_cudnn_fp8_available(std::string* why) {
  try {
    const std::string version = version_problem();
    if (!version.empty()) return reject(why, version);
    int dev = 0;
    const cudaError_t ce = cudaGetDevice(&dev);
    if (ce != cudaSuccess) return reject(why, std::string("cudaGetDevice: ") + cudaGetErrorString(ce));
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    DeviceRes* r = nullptr;
    if (fp8_device(st, dev, &r) != cudaSuccess) return reject(why, t_last_error);
    AttnArgs probe;  // the DiT's shape class: 128 keys, head dim 128, LSE for the merges
    probe.B = probe.H = 1, probe.Sq = probe.Skv = probe.num_valid_kv = 128, probe.D = 128;
    probe.scale = 0.08838834764831845f;  // 1/sqrt(128)
    float lse_tag = 0.0f;
    probe.lse = &lse_tag;  // only its presence enters the key
    GraphKey key{};
    key[0] = dev;
    const GraphEntry& g = graph_of(st, *r, probe, false, &key);
    return g.graph ? true : reject(why, g.why);
  } catch (const std::exception& e) {
    return reject(why, std::string("cuDNN FP8 SDPA probe: ") + e.what());
  } catch (...) {
    return reject(why, "cuDNN FP8 SDPA probe: unknown exception");
  }
}

CudnnFp8Out attention_cudnn_fp8_out_type() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return CudnnFp8Out::kE4m3;
  }
  return bf16_out_offered(major * 10 + minor) ? CudnnFp8Out::kBF16 : CudnnFp8Out::kE4m3;
}

cudaError_t attention_fwd_cudnn_fp8(const AttnArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  std::string why;
  if (!attention_cudnn_fp8_supports(a, &why)) return fail(cudaErrorNotSupported, why);
  const std::string version = version_problem();
  if (!version.empty()) return fail(cudaErrorNotSupported, version);
  if (!workspace || workspace_bytes < attention_cudnn_fp8_workspace_bytes(a))
    return fail(cudaErrorInvalidValue, "the cuDNN FP8 attention's workspace is missing or too small");
  cudaError_t e = cudaSuccess;
  if (valid_kv(a) == 0) {
    if ((e = attention_cudnn_fp8_empty(a, stream)) != cudaSuccess) return fail(e, "the empty-attention kernel");
    t_last_error.clear();
    return e;
  }
  try {
    e = run_graph(a, workspace, workspace_bytes, stream);
  } catch (const std::exception& x) {
    return fail(cudaErrorUnknown, std::string("cuDNN FP8 SDPA: ") + x.what());
  } catch (...) {
    return fail(cudaErrorUnknown, "cuDNN FP8 SDPA: unknown exception");
  }
  if (e == cudaSuccess) t_last_error.clear();
  return e;
}

CudnnFp8Stats attention_cudnn_fp8_stats() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.stats;
}

#endif  // VGEN_WITH_CUDNN

}  // namespace vgen::kern
