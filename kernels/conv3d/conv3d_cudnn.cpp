// cuDNN path of the device 3-D convolution (contract in conv3d.cuh). Host code only; compiled in
// every CUDA build, with the cuDNN path only when VGEN_WITH_CUDNN is defined.
//
// Graph: X (NDHWC, or NHWC with N·Ti images when kt = 1) → conv_fprop (fp32 compute) → + bias
// (pointwise ADD, fp32) → Y in the io type. When cuDNN has no engine for the fused bias, the conv
// alone writes fp32 (into the workspace for bf16, into y for f32) and conv3d_bias_convert adds the
// bias and rounds; failing that (bf16), the conv writes bf16 into y and the bias is added in place
// (one extra bf16 rounding). A residual joins the epilogue as a second pointwise ADD where an engine
// takes it (else conv3d_add_residual adds it after the conv). Engines whose numerical notes say TF32
// / down-converted inputs / reduced-precision reductions / nondeterminism are deselected, so f32
// stays fp32, bf16 accumulates in fp32, and results are reproducible.
#include "kernels/conv3d/conv3d.cuh"

#include <atomic>
#include <string>

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

#ifndef VGEN_WITH_CUDNN

bool conv3d_cudnn_built() { return false; }

cudaError_t conv3d_cudnn_prepare(const Conv3dArgs&, size_t*) {
  conv3d_set_error("this vgen was built without cuDNN (cuDNN or the cudnn-frontend headers were not found)");
  return cudaErrorNotSupported;
}

cudaError_t conv3d_cudnn_forward(const Conv3dArgs&, void*, size_t, cudaStream_t) {
  conv3d_set_error("this vgen was built without cuDNN");
  return cudaErrorNotSupported;
}

Conv3dStats conv3d_cudnn_plan_stats() { return {}; }

#else  // VGEN_WITH_CUDNN

namespace fe = cudnn_frontend;

namespace {

constexpr int64_t kUidX = 1, kUidW = 2, kUidB = 3, kUidY = 4, kUidR = 5;
constexpr int64_t kMaxWorkspace = int64_t(512) << 20;  // engines needing more are deselected

// device, type, N, Cin, Ti, Hi, Wi, Cout, kt, kh, kw, top, bottom, left, right, bias, autotune, stride_t, stride_s,
// residual
using PlanKey = std::array<int64_t, 20>;

// Where the bias is added: in the graph; by conv3d_bias_convert from the conv's fp32 output; by
// conv3d_bias_convert in place on the conv's io-type output.
enum class BiasMode { kFused, kF32Out, kInPlace };

struct PlanEntry {
  std::shared_ptr<fe::graph::Graph> graph;  // null: rejected (why)
  std::string why;
  int64_t cudnn_ws = 0;  // the graph's workspace
  BiasMode bias = BiasMode::kFused;
  bool residual_fused = false;  // the graph adds the residual (else conv3d_add_residual after it)
  bool tuned = false;  // autotune ran
};

struct DeviceRes {
  cudnnHandle_t handle = nullptr;
  std::string init_error;
};

// Never destroyed: cuDNN handles and graphs may outlive static destruction of the CUDA runtime.
struct State {
  std::mutex mu;
  std::vector<DeviceRes> devs;
  std::map<PlanKey, PlanEntry> plans;
  Conv3dStats stats;
};
State& state() {
  static State* s = new State();
  return *s;
}

size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

std::string fe_error(const char* step, fe::error_t e) { return std::string("cuDNN conv ") + step + ": " + e.get_message(); }

cudaError_t device_handle(State& st, int dev, cudnnHandle_t* out, std::string* why) {
  if (size_t(dev) >= st.devs.size()) st.devs.resize(size_t(dev) + 1);
  DeviceRes& r = st.devs[size_t(dev)];
  if (!r.handle && r.init_error.empty()) {
    const cudnnStatus_t s = cudnnCreate(&r.handle);
    if (s != CUDNN_STATUS_SUCCESS) {
      r.handle = nullptr;
      r.init_error = std::string("cudnnCreate on device ") + std::to_string(dev) + ": " + cudnnGetErrorString(s);
    }
  }
  if (!r.handle) {
    *why = r.init_error;
    return cudaErrorNotSupported;
  }
  *out = r.handle;
  return cudaSuccess;
}

// Channels-last strides of dims {N, C, spatial...}.
std::vector<int64_t> cl_strides(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size());
  const int64_t C = d[1];
  int64_t acc = C;
  for (size_t i = d.size() - 1; i >= 2; --i) {
    s[i] = acc;
    acc *= d[i];
  }
  s[1] = 1;
  s[0] = acc;
  return s;
}

PlanEntry build(const Conv3dArgs& a, BiasMode mode, bool with_residual, bool autotune, cudnnHandle_t handle) {
  const bool has_bias = a.bias != nullptr, fused = mode == BiasMode::kFused;
  const bool f32 = a.type == FloatType::kF32;
  const fe::DataType_t io = f32 ? fe::DataType_t::FLOAT : fe::DataType_t::BFLOAT16;
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);

  std::vector<int64_t> xd, wd, yd, bd, pre, post, one, stride;
  // kt = 1 runs as N·Ti images, which a temporal stride would skip: the 3-D graph takes that case.
  const bool two_d = a.kt == 1 && a.stride_t == 1;
  if (two_d) {
    xd = {a.N * a.Ti, a.Cin, a.Hi, a.Wi};
    wd = {a.Cout, a.Cin, a.kh, a.kw};
    yd = {a.N * a.Ti, a.Cout, a.Ho(), a.Wo()};
    bd = {1, a.Cout, 1, 1};
    pre = {a.pad.top, a.pad.left};
    post = {a.pad.bottom, a.pad.right};
    one = {1, 1};
    stride = {a.stride_s, a.stride_s};
  } else {
    xd = {a.N, a.Cin, a.Ti, a.Hi, a.Wi};
    wd = {a.Cout, a.Cin, a.kt, a.kh, a.kw};
    yd = {a.N, a.Cout, a.To(), a.Ho(), a.Wo()};
    bd = {1, a.Cout, 1, 1, 1};
    pre = {0, a.pad.top, a.pad.left};
    post = {0, a.pad.bottom, a.pad.right};
    one = {1, 1, 1};
    stride = {a.stride_t, a.stride_s, a.stride_s};
  }
  auto X = g->tensor(fe::graph::Tensor_attributes().set_name("X").set_uid(kUidX).set_dim(xd).set_stride(cl_strides(xd)));
  auto W = g->tensor(fe::graph::Tensor_attributes().set_name("W").set_uid(kUidW).set_dim(wd).set_stride(cl_strides(wd)));
  auto conv = g->conv_fprop(X, W,
                            fe::graph::Conv_fprop_attributes()
                                .set_name("conv")
                                .set_pre_padding(pre)
                                .set_post_padding(post)
                                .set_stride(stride)
                                .set_dilation(one)
                                .set_compute_data_type(fe::DataType_t::FLOAT));
  conv->set_dim(yd).set_stride(cl_strides(yd));
  std::shared_ptr<fe::graph::Tensor_attributes> Y = conv;
  if (has_bias && fused) {
    auto B = g->tensor(fe::graph::Tensor_attributes()
                           .set_name("B")
                           .set_uid(kUidB)
                           .set_dim(bd)
                           .set_stride(cl_strides(bd))
                           .set_data_type(fe::DataType_t::FLOAT));
    conv->set_data_type(fe::DataType_t::FLOAT);
    Y = g->pointwise(conv, B,
                     fe::graph::Pointwise_attributes()
                         .set_name("bias")
                         .set_mode(fe::PointwiseMode_t::ADD)
                         .set_compute_data_type(fe::DataType_t::FLOAT));
    Y->set_dim(yd).set_stride(cl_strides(yd));
  }
  if (with_residual) {  // only with the bias fused (or none): the sum is rounded once
    auto R = g->tensor(fe::graph::Tensor_attributes().set_name("R").set_uid(kUidR).set_dim(yd).set_stride(cl_strides(yd)));
    Y->set_data_type(fe::DataType_t::FLOAT);
    Y = g->pointwise(Y, R,
                     fe::graph::Pointwise_attributes()
                         .set_name("residual")
                         .set_mode(fe::PointwiseMode_t::ADD)
                         .set_compute_data_type(fe::DataType_t::FLOAT));
    Y->set_dim(yd).set_stride(cl_strides(yd));
  }
  // kF32Out: the conv's fp32 result is the output (the bias kernel rounds it).
  Y->set_output(true).set_uid(kUidY).set_data_type(has_bias && mode == BiasMode::kF32Out ? fe::DataType_t::FLOAT : io);

  PlanEntry r;
  r.bias = has_bias ? mode : BiasMode::kFused;
  r.residual_fused = with_residual;
  fe::error_t e = g->validate();
  if (e.is_bad()) return {nullptr, fe_error("validate", e)};
  if ((e = g->build_operation_graph(handle)).is_bad()) return {nullptr, fe_error("build_operation_graph", e)};
  if ((e = g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK})).is_bad())
    return {nullptr, fe_error("create_execution_plans", e)};
  // Deterministic engines only: a decode gives the same bits every time (and on every rank).
  std::vector<fe::NumericalNote_t> bad = {fe::NumericalNote_t::DOWN_CONVERT_INPUTS,
                                          fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION,
                                          fe::NumericalNote_t::NONDETERMINISTIC};
  if (f32) bad.push_back(fe::NumericalNote_t::TENSOR_CORE);  // TF32
  g->deselect_numeric_notes(bad);
  g->deselect_workspace_greater_than(kMaxWorkspace);
  if ((e = g->check_support(handle)).is_bad()) return {nullptr, fe_error("check_support", e)};
  if ((e = g->build_plans(handle, autotune ? fe::BuildPlanPolicy_t::ALL : fe::BuildPlanPolicy_t::HEURISTICS_CHOICE))
          .is_bad())
    return {nullptr, fe_error("build_plans", e)};
  int64_t ws = 0;
  if (autotune) {
    ws = g->get_autotune_workspace_size();
  } else if ((e = g->get_workspace_size(ws)).is_bad()) {
    return {nullptr, fe_error("get_workspace_size", e)};
  }
  r.graph = std::move(g);
  r.cudnn_ws = ws;
  return r;
}

PlanKey key_of(const Conv3dArgs& a, int dev, bool autotune) {
  return {dev,       int64_t(a.type), a.N,          a.Cin,         a.Ti,          a.Hi,
          a.Wi,      a.Cout,          a.kt,         a.kh,          a.kw,          a.pad.top,
          a.pad.bottom, a.pad.left,   a.pad.right,  a.bias ? 1 : 0, autotune ? 1 : 0, a.stride_t, a.stride_s,
          a.residual ? 1 : 0};
}

size_t total_workspace(const Conv3dArgs& a, const PlanEntry& p) {
  size_t ws = align256(size_t(p.cudnn_ws));
  // bf16 with the fp32-output bias: the fp32 conv result lives after the cuDNN workspace.
  if (p.bias == BiasMode::kF32Out && a.type == FloatType::kBF16)
    ws += align256(size_t(a.N * a.To() * a.Ho() * a.Wo() * a.Cout) * 4);
  return ws;
}

// Caller holds the lock: the plan of `a` (built on first use).
cudaError_t plan(State& st, const Conv3dArgs& a, PlanEntry** out, cudnnHandle_t* handle) {
  int dev = 0;
  cudaError_t ce = cudaGetDevice(&dev);
  if (ce != cudaSuccess) {
    conv3d_set_error((std::string("cudaGetDevice: ") + cudaGetErrorString(ce)).c_str());
    return ce;
  }
  std::string why;
  if ((ce = device_handle(st, dev, handle, &why)) != cudaSuccess) {
    conv3d_set_error(why.c_str());
    return ce;
  }
  const bool autotune = a.autotune;
  const PlanKey key = key_of(a, dev, autotune);
  auto it = st.plans.find(key);
  if (it == st.plans.end()) {
    PlanEntry p = build(a, BiasMode::kFused, a.residual != nullptr, autotune, *handle);
    if (!p.graph && a.residual) {  // no engine with the residual in its epilogue: added after the conv
      std::string why = p.why;
      p = build(a, BiasMode::kFused, false, autotune, *handle);
      if (p.graph) ++st.stats.cudnn_unfused_residual;
      else p.why = why + "; without the residual: " + p.why;
    }
    // f32: the fp32 output is y itself, so kF32Out and kInPlace are the same graph.
    for (BiasMode m : {BiasMode::kF32Out, BiasMode::kInPlace}) {
      if (p.graph || !a.bias || (m == BiasMode::kInPlace && a.type == FloatType::kF32)) break;
      PlanEntry q = build(a, m, false, autotune, *handle);
      if (q.graph) {
        p = std::move(q);
        ++st.stats.cudnn_unfused_bias;
        if (a.residual) ++st.stats.cudnn_unfused_residual;
      } else {
        p.why += std::string("; with the bias added ") + (m == BiasMode::kF32Out ? "from an fp32 output: " : "in place: ") +
                 q.why;
      }
    }
    if (p.graph)
      ++st.stats.cudnn_plans;
    else
      ++st.stats.cudnn_rejected;
    it = st.plans.emplace(key, std::move(p)).first;
  }
  if (!it->second.graph) {
    conv3d_set_error(it->second.why.c_str());
    return cudaErrorNotSupported;
  }
  *out = &it->second;
  return cudaSuccess;
}

}  // namespace

bool conv3d_cudnn_built() { return true; }

cudaError_t conv3d_cudnn_prepare(const Conv3dArgs& a, size_t* workspace_bytes) {
  try {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    PlanEntry* p = nullptr;
    cudnnHandle_t h = nullptr;
    const cudaError_t e = plan(st, a, &p, &h);
    if (e != cudaSuccess) return e;
    *workspace_bytes = total_workspace(a, *p);
    return cudaSuccess;
  } catch (const std::exception& ex) {
    conv3d_set_error((std::string("cuDNN conv: ") + ex.what()).c_str());
    return cudaErrorNotSupported;
  }
}

cudaError_t conv3d_cudnn_forward(const Conv3dArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  try {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    PlanEntry* p = nullptr;
    cudnnHandle_t h = nullptr;
    cudaError_t ce = plan(st, a, &p, &h);
    if (ce != cudaSuccess) return ce;
    const size_t need = total_workspace(a, *p);
    if (workspace_bytes < need || (need > 0 && !workspace)) {
      conv3d_set_error(("cuDNN conv: workspace of " + std::to_string(workspace_bytes) + " bytes, needs " +
                        std::to_string(need))
                           .c_str());
      return cudaErrorInvalidValue;
    }
    const cudnnStatus_t ss = cudnnSetStream(h, stream);
    if (ss != CUDNN_STATUS_SUCCESS) {
      conv3d_set_error((std::string("cudnnSetStream: ") + cudnnGetErrorString(ss)).c_str());
      return cudaErrorUnknown;
    }
    const bool f32 = a.type == FloatType::kF32;
    void* y_conv = a.y;
    if (p->bias == BiasMode::kF32Out && !f32) y_conv = static_cast<char*>(workspace) + align256(size_t(p->cudnn_ws));
    std::unordered_map<int64_t, void*> pack{
        {kUidX, const_cast<void*>(a.x)}, {kUidW, const_cast<void*>(a.w)}, {kUidY, y_conv}};
    if (a.bias && p->bias == BiasMode::kFused) pack.emplace(kUidB, const_cast<float*>(a.bias));
    if (p->residual_fused) pack.emplace(kUidR, const_cast<void*>(a.residual));
    if (a.autotune && !p->tuned) {
      p->tuned = true;
      const fe::error_t te = p->graph->autotune(h, pack, workspace);
      if (te.is_bad()) {
        conv3d_set_error(fe_error("autotune", te).c_str());
        return cudaErrorUnknown;
      }
    }
    const fe::error_t e = p->graph->execute(h, pack, workspace);
    if (e.is_bad()) {
      conv3d_set_error(fe_error("execute", e).c_str());
      return cudaErrorUnknown;
    }
    if (a.bias && p->bias != BiasMode::kFused) {
      const int64_t rows = a.N * a.To() * a.Ho() * a.Wo();
      const FloatType src_type = p->bias == BiasMode::kF32Out ? FloatType::kF32 : a.type;
      ce = conv3d_bias_convert(y_conv, src_type, a.bias, a.y, a.type, rows, a.Cout, stream);
      if (ce != cudaSuccess) {
        conv3d_set_error("cuDNN conv: bias kernel launch");
        return ce;
      }
    }
    if (a.residual && !p->residual_fused) {
      ce = conv3d_add_residual(a.y, a.residual, a.type, a.N * a.To() * a.Ho() * a.Wo() * a.Cout, stream);
      if (ce != cudaSuccess) {
        conv3d_set_error("cuDNN conv: residual kernel launch");
        return ce;
      }
    }
    return cudaSuccess;
  } catch (const std::exception& ex) {
    conv3d_set_error((std::string("cuDNN conv: ") + ex.what()).c_str());
    return cudaErrorUnknown;
  }
}

Conv3dStats conv3d_cudnn_plan_stats() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.stats;
}

#endif  // VGEN_WITH_CUDNN

}  // namespace vgen::kern
