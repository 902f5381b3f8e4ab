// cuDNN SDPA forward (see attention_cudnn.cuh). Host code only; compiled in every CUDA build, with
// the cuDNN path only when VGEN_WITH_CUDNN is defined (cuDNN + cudnn-frontend headers found).
#include "kernels/attention/attention_cudnn.cuh"

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


// Token stride in elements (0 means dense: H*D).
int64_t token_stride(int64_t s, const AttnArgs& a) { return s == 0 ? a.H * a.D : s; }


}  // namespace

const char* attention_cudnn_last_error() { return t_last_error.c_str(); }

bool attention_cudnn_supports(const AttnArgs& a, AttnOut out_type, std::string* why) {
  if (out_type != AttnOut::kBF16) return reject(why, "cuDNN SDPA serves a bf16 output only (fp32 out requested)");
  if (a.B < 1 || a.Sq < 1 || a.Skv < 1 || a.H < 1)
    return reject(why, "empty problem (B=" + std::to_string(a.B) + " Sq=" + std::to_string(a.Sq) +
                           " Skv=" + std::to_string(a.Skv) + " H=" + std::to_string(a.H) + ")");
  if (a.D < 8 || a.D > kAttnMaxHeadDim || a.D % 8 != 0)
    return reject(why, "head dim " + std::to_string(a.D) + " is not a multiple of 8 in [8, 128]");
  if (std::min(a.num_valid_kv, a.Skv) < 1) return reject(why, "no valid key (num_valid_kv <= 0)");
  if (!a.q || !a.k || !a.v || !a.out) return reject(why, "null q/k/v/out pointer");
  const int64_t hd = a.H * a.D;
  for (int64_t s : {a.q_stride, a.k_stride, a.v_stride, a.o_stride}) {
    const int64_t t = token_stride(s, a);
    if (t < hd || t % 8 != 0)
      return reject(why, "token stride " + std::to_string(t) + " is below H*D or not a multiple of 8 elements");
  }
  if (!aligned16(a.q) || !aligned16(a.k) || !aligned16(a.v) || !aligned16(a.out) || (a.lse && !aligned16(a.lse)))
    return reject(why, "a q/k/v/out/lse pointer is not 16-byte aligned");
  return true;
}

#ifndef VGEN_WITH_CUDNN

bool attention_cudnn_built() { return false; }

int64_t attention_cudnn_version() { return 0; }

bool attention_cudnn_available(std::string* why) {
  return reject(why, "this vgen was built without cuDNN (cuDNN or the cudnn-frontend headers were not found at "
                     "configure time; see VGEN_CUDNN_FRONTEND_DIR)");
}

cudaError_t attention_fwd_cudnn(const AttnArgs&, AttnOut, cudaStream_t, CudnnKvMask) {
  return fail(cudaErrorNotSupported, "this vgen was built without cuDNN");
}

CudnnAttnStats attention_cudnn_stats() { return {}; }

#else  // VGEN_WITH_CUDNN

namespace fe = cudnn_frontend;

namespace {

// Tensor uids of the graph.
constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidSeqQ = 6, kUidSeqKv = 7;

// device, B, Sq, Skv (as described to cuDNN), Skv (allocated: batch stride), H, D, 4 token strides,
// LSE, padding mask, scale bits.
using GraphKey = std::array<int64_t, 14>;

// [B, H, S, D] strides of a token-major [B, S, H, D] operand with token stride t (S allocated).
std::vector<int64_t> bhsd_strides(int64_t S, int64_t D, int64_t t) { return {S * t, D, t, 1}; }

struct GraphEntry {
  std::shared_ptr<fe::graph::Graph> graph;  // null: cuDNN rejected this key (why says so)
  std::string why;
  int64_t workspace = 0;
};

// Per-batch sequence lengths for the padding mask: [B] q lengths then [B] kv lengths (int32).
struct SeqLens {
  int32_t* dev = nullptr;
  cudaEvent_t ready = nullptr;  // the upload, recorded on the stream that made it
};

struct Workspace {
  void* ptr = nullptr;
  int64_t bytes = 0;
};

struct DeviceRes {
  cudnnHandle_t handle = nullptr;
  std::string init_error;  // non-empty: cudnnCreate failed on this device
  std::map<cudaStream_t, Workspace> workspaces;
};

// Never destroyed: handles and graphs may outlive static destruction of the CUDA runtime.
struct State {
  std::mutex mu;
  std::vector<DeviceRes> devs;
  std::map<GraphKey, GraphEntry> graphs;
  std::map<std::array<int64_t, 4>, SeqLens> seq_lens;  // (device, B, Sq, num_valid_kv)
  CudnnAttnStats stats;
};
State& state() {
  static State* s = new State();
  return *s;
}

std::string fe_error(const char* step, fe::error_t e) { return cudnn_sdpa::fe_error("cuDNN SDPA", step, e); }

// Caller holds the lock. Handle of `dev` (created on first use, with `dev` current).
cudaError_t device_res(State& st, int dev, DeviceRes** out) {
  if (size_t(dev) >= st.devs.size()) st.devs.resize(size_t(dev) + 1);
  DeviceRes& r = st.devs[size_t(dev)];
  if (!cudnn_sdpa::ensure_handle(r.handle, r.init_error, dev)) return fail(cudaErrorNotSupported, r.init_error);
  *out = &r;
  return cudaSuccess;
}

// The SDPA graph for `key` (not yet validated): q/k/v/o [B,H,S,D] views of the BSHD buffers
// (strides [S·t, D, t, 1] for token stride t), Stats [B,H,Sq,1] fp32 packed like lse [B,H,Sq].
// sm_version > 0 targets that architecture instead of the current device's (deviceless checks).
std::shared_ptr<fe::graph::Graph> make_graph(const GraphKey& key, float scale, int sm_version = 0) {
  const int64_t B = key[1], Sq = key[2], Skv = key[3], Skv_alloc = key[4], H = key[5], D = key[6];
  const int64_t qs = key[7], ks = key[8], vs = key[9], os = key[10];
  const bool has_lse = key[11] != 0, padding = key[12] != 0;

  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  if (sm_version > 0) g->set_sm_version(sm_version);
  auto Q = g->tensor(fe::graph::Tensor_attributes().set_name("Q").set_uid(kUidQ).set_dim({B, H, Sq, D}).set_stride(
      bhsd_strides(Sq, D, qs)));
  auto K = g->tensor(fe::graph::Tensor_attributes().set_name("K").set_uid(kUidK).set_dim({B, H, Skv, D}).set_stride(
      bhsd_strides(Skv_alloc, D, ks)));
  auto V = g->tensor(fe::graph::Tensor_attributes().set_name("V").set_uid(kUidV).set_dim({B, H, Skv, D}).set_stride(
      bhsd_strides(Skv_alloc, D, vs)));

  auto attrs = fe::graph::SDPA_attributes().set_name("vgen_sdpa").set_generate_stats(has_lse).set_attn_scale(scale);
  if (padding) {
    auto seq_q = g->tensor(fe::graph::Tensor_attributes()
                               .set_name("seq_len_q")
                               .set_uid(kUidSeqQ)
                               .set_dim({B, 1, 1, 1})
                               .set_stride({1, 1, 1, 1})
                               .set_data_type(fe::DataType_t::INT32));
    auto seq_kv = g->tensor(fe::graph::Tensor_attributes()
                                .set_name("seq_len_kv")
                                .set_uid(kUidSeqKv)
                                .set_dim({B, 1, 1, 1})
                                .set_stride({1, 1, 1, 1})
                                .set_data_type(fe::DataType_t::INT32));
    attrs.set_padding_mask(true).set_seq_len_q(seq_q).set_seq_len_kv(seq_kv);
  }
  auto [O, Stats] = g->sdpa(Q, K, V, attrs);
  O->set_output(true).set_uid(kUidO).set_dim({B, H, Sq, D}).set_stride(bhsd_strides(Sq, D, os));
  if (has_lse) {
    if (!Stats) return nullptr;
    Stats->set_output(true)
        .set_uid(kUidStats)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim({B, H, Sq, 1})
        .set_stride({H * Sq, Sq, 1, 1});
  }
  return g;
}

// make_graph, validated and with an execution plan chosen by cuDNN's heuristics for `handle`'s device.
GraphEntry build_graph(const GraphKey& key, float scale, cudnnHandle_t handle) {
  std::shared_ptr<fe::graph::Graph> g = make_graph(key, scale);
  if (!g) return {nullptr, "cuDNN SDPA: the graph has no Stats output", 0};
  GraphEntry r;
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
  r.graph = std::move(g);
  r.workspace = ws;
  return r;
}

// Caller holds the lock. Device buffer of the per-batch lengths (Sq each, num_valid each), made
// once per value: its host source lives in a static pool, so the async upload stays valid.
cudaError_t seq_lens(State& st, int dev, int64_t B, int64_t Sq, int64_t nvalid, cudaStream_t stream, int32_t** out) {
  const std::array<int64_t, 4> key{dev, B, Sq, nvalid};
  auto it = st.seq_lens.find(key);
  if (it == st.seq_lens.end()) {
    static auto* host_pool = new std::vector<std::unique_ptr<std::vector<int32_t>>>();
    auto host = std::make_unique<std::vector<int32_t>>(size_t(2 * B));
    std::fill(host->begin(), host->begin() + B, int32_t(Sq));
    std::fill(host->begin() + B, host->end(), int32_t(nvalid));
    SeqLens s;
    cudaError_t e = cudaMalloc(&s.dev, size_t(2 * B) * sizeof(int32_t));
    if (e != cudaSuccess) return fail(e, "cudaMalloc of the cuDNN sequence lengths");
    e = cudaMemcpyAsync(s.dev, host->data(), size_t(2 * B) * sizeof(int32_t), cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s.ready, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventRecord(s.ready, stream);
    if (e != cudaSuccess) {
      cudaFree(s.dev);
      return fail(e, "upload of the cuDNN sequence lengths");
    }
    host_pool->push_back(std::move(host));
    it = st.seq_lens.emplace(key, s).first;
  }
  // Made on another stream: order this use after the upload.
  const cudaError_t e = cudaStreamWaitEvent(stream, it->second.ready, 0);
  if (e != cudaSuccess) return fail(e, "cudaStreamWaitEvent on the cuDNN sequence lengths");
  *out = it->second.dev;
  return cudaSuccess;
}

// Caller holds the lock. Workspace of (device, stream) of at least `bytes`.
cudaError_t workspace(State& st, DeviceRes& r, cudaStream_t stream, int64_t bytes, void** out) {
  *out = nullptr;
  if (bytes <= 0) return cudaSuccess;
  Workspace& w = r.workspaces[stream];
  if (w.bytes < bytes) {
    // cudaFree waits for the device, so queued work that uses the old block has finished.
    if (w.ptr) cudaFree(w.ptr);
    st.stats.workspace_bytes -= uint64_t(w.bytes);
    w = Workspace{};
    const cudaError_t e = cudaMalloc(&w.ptr, size_t(bytes));
    if (e != cudaSuccess) return fail(e, "cudaMalloc of " + std::to_string(bytes) + " bytes of cuDNN workspace");
    w.bytes = bytes;
    st.stats.workspace_bytes += uint64_t(bytes);
  }
  *out = w.ptr;
  return cudaSuccess;
}

// Graph key of a call on `dev`. kSlice describes K/V with Skv = num_valid_kv; kPaddingMask keeps
// Skv and masks with the SEQ_LEN tensors (no mask at all when every key is valid).
GraphKey make_key(const AttnArgs& a, int dev, CudnnKvMask mask) {
  const int64_t nvalid = std::min(a.num_valid_kv, a.Skv);
  const bool padding = mask == CudnnKvMask::kPaddingMask && nvalid < a.Skv;
  const int64_t skv_graph = mask == CudnnKvMask::kSlice ? nvalid : a.Skv;
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &a.scale, sizeof(scale_bits));
  return GraphKey{dev,
                  a.B,
                  a.Sq,
                  skv_graph,
                  a.Skv,
                  a.H,
                  a.D,
                  token_stride(a.q_stride, a),
                  token_stride(a.k_stride, a),
                  token_stride(a.v_stride, a),
                  token_stride(a.o_stride, a),
                  a.lse ? 1 : 0,
                  padding ? 1 : 0,
                  int64_t(scale_bits)};
}

cudaError_t run(const AttnArgs& a, cudaStream_t stream, CudnnKvMask mask) {
  int dev = 0;
  cudaError_t ce = cudaGetDevice(&dev);
  if (ce != cudaSuccess) return fail(ce, "cudaGetDevice");
  const GraphKey key = make_key(a, dev, mask);
  const int64_t nvalid = std::min(a.num_valid_kv, a.Skv);
  const bool padding = key[12] != 0;

  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  DeviceRes* r = nullptr;
  if ((ce = device_res(st, dev, &r)) != cudaSuccess) return ce;
  const cudnnStatus_t ss = cudnnSetStream(r->handle, stream);
  if (ss != CUDNN_STATUS_SUCCESS) return fail(cudaErrorUnknown, std::string("cudnnSetStream: ") + cudnnGetErrorString(ss));

  auto it = st.graphs.find(key);
  if (it == st.graphs.end()) {
    GraphEntry e = build_graph(key, a.scale, r->handle);
    if (e.graph) {
      ++st.stats.graphs_built;
    } else {
      ++st.stats.graphs_rejected;
    }
    it = st.graphs.emplace(key, std::move(e)).first;
  }
  const GraphEntry& g = it->second;
  if (!g.graph) return fail(cudaErrorNotSupported, g.why);

  void* ws = nullptr;
  if ((ce = workspace(st, *r, stream, g.workspace, &ws)) != cudaSuccess) return ce;
  std::unordered_map<int64_t, void*> pack{{kUidQ, const_cast<void*>(a.q)},
                                          {kUidK, const_cast<void*>(a.k)},
                                          {kUidV, const_cast<void*>(a.v)},
                                          {kUidO, a.out}};
  if (a.lse) pack.emplace(kUidStats, a.lse);
  if (padding) {
    int32_t* lens = nullptr;
    if ((ce = seq_lens(st, dev, a.B, a.Sq, nvalid, stream, &lens)) != cudaSuccess) return ce;
    pack.emplace(kUidSeqQ, lens);
    pack.emplace(kUidSeqKv, lens + a.B);
  }
  const fe::error_t e = g.graph->execute(r->handle, pack, ws);
  if (e.is_bad()) return fail(cudaErrorUnknown, fe_error("execute", e));
  ++st.stats.calls;
  t_last_error.clear();
  return cudaSuccess;
}

}  // namespace

bool attention_cudnn_built() { return true; }

int64_t attention_cudnn_version() { return int64_t(cudnnGetVersion()); }

bool attention_cudnn_available(std::string* why) {
  try {
    const size_t v = cudnnGetVersion();
    if (v < 90000) return reject(why, "cuDNN " + std::to_string(v) + " is loaded; the SDPA backend needs cuDNN 9");
    int dev = 0;
    const cudaError_t ce = cudaGetDevice(&dev);
    if (ce != cudaSuccess) return reject(why, std::string("cudaGetDevice: ") + cudaGetErrorString(ce));
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    DeviceRes* r = nullptr;
    if (device_res(st, dev, &r) != cudaSuccess) return reject(why, t_last_error);
    return true;
  } catch (const std::exception& e) {
    return reject(why, std::string("cuDNN initialisation: ") + e.what());
  } catch (...) {
    return reject(why, "cuDNN initialisation: unknown exception");
  }
}

cudaError_t attention_fwd_cudnn(const AttnArgs& args, AttnOut out_type, cudaStream_t stream, CudnnKvMask mask) {
  std::string why;
  if (!attention_cudnn_supports(args, out_type, &why)) return fail(cudaErrorNotSupported, why);
  try {
    return run(args, stream, mask);
  } catch (const std::exception& e) {
    return fail(cudaErrorUnknown, std::string("cuDNN SDPA: ") + e.what());
  } catch (...) {
    return fail(cudaErrorUnknown, "cuDNN SDPA: unknown exception");
  }
}

CudnnAttnStats attention_cudnn_stats() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.stats;
}

#endif  // VGEN_WITH_CUDNN

}  // namespace vgen::kern
