#include <cuda_runtime.h>

#include "core/cuda_stream.h"
#include "kernels/activation/activation.cuh"
#include "kernels/elementwise/elementwise.cuh"
#include "kernels/embed/gather_rows.cuh"
#include "kernels/embed/patch.cuh"
#include "kernels/embed/timestep_embed.cuh"
#include "kernels/init/random_init.cuh"
#include "kernels/norm/norm.cuh"
#include "kernels/reduce/reduce.cuh"
#include "kernels/rope/rope.cuh"
#include "ops/device_op_checks.h"
#include "ops/dit_device_ops.h"
#include "ops/norm.h"

namespace vgen {
namespace {

using device_ops::act_type;  // + the output-dtype overload below
using device_ops::check_dev;
using device_ops::desc;
using device_ops::launched;

kern::FloatType act_type(DType dt, const char* op) {
  VGEN_ASSERT(dt == DType::kF32 || dt == DType::kBF16, "{}: output dtype must be f32 or bf16, got {}", op,
              dtype_name(dt));
  return dt == DType::kF32 ? kern::FloatType::kF32 : kern::FloatType::kBF16;
}

const float* f32_param(const Tensor& t, int64_t n, const char* op, const char* what) {
  if (!t.defined()) return nullptr;
  check_dev(t, op, what);
  VGEN_ASSERT(t.dtype() == DType::kF32 && t.numel() == n, "{}: {} must be f32 with {} elements, got {}", op, what, n,
              t.str());
  return t.f32();
}

int64_t rows_of(const Tensor& x) { return x.dim(-1) ? x.numel() / x.dim(-1) : 0; }

// The AdaLN's shift and scale rows of mod (f32 on the device) for x, checked: one place for the four
// modulated norms (bf16 / fp32 output and e4m3 output, with and without a residual).
struct ShiftScale {
  ModAddress sh, sc;
};
ShiftScale shift_scale(const Tensor& x, const Tensor& mod, int shift_idx, int scale_idx, const char* op) {
  check_dev(mod, op, "mod");
  VGEN_ASSERT(mod.dtype() == DType::kF32, "{}: mod must be f32, got {}", op, mod.str());
  return {mod_address(x, mod, shift_idx, op), mod_address(x, mod, scale_idx, op)};
}

}  // namespace

Tensor cuda_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps) {
  const kern::FloatType t = act_type(x, "layer_norm", "x");
  const int64_t D = x.dim(-1);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::layer_norm(x.raw(), t, f32_param(weight, D, "layer_norm", "weight"),
                            f32_param(bias, D, "layer_norm", "bias"), y.raw(), t, rows_of(x), D, eps,
                            compute_stream()),
           "layer_norm", x);
  return y;
}

Tensor cuda_layer_norm_modulate(const Tensor& x, const Tensor& mod, int shift_idx, int scale_idx, float eps) {
  const kern::FloatType t = act_type(x, "layer_norm_modulate", "x");
  const auto [sh, sc] = shift_scale(x, mod, shift_idx, scale_idx, "layer_norm_modulate");
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::layer_norm_modulate(x.raw(), t, mod.f32() + sh.offset, mod.f32() + sc.offset, sh.stride,
                                     sh.rows_per_mod, y.raw(), t, x.dim(0) * x.dim(1), x.dim(2), eps,
                                     compute_stream()),
           "layer_norm_modulate", x);
  return y;
}

namespace {
// The two separate ops of a residual norm.
void residual_unfused(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx) {
  if (gate_idx < 0)
    cuda_add_inplace(x, y);
  else
    cuda_gated_residual_(x, y, gate_mod, gate_idx);
}

// Checks x/y (and the gate) of a residual norm; the gate row's address, or null without a gate.
const float* residual_gate(const Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx, ModAddress* g,
                           const char* op) {
  const kern::FloatType t = act_type(x, op, "x");
  VGEN_ASSERT(x.ndim() == 3 && act_type(y, op, "y") == t && x.shape() == y.shape(), "{}: x {} vs y {}", op, x.str(),
              y.str());
  if (gate_idx < 0) return nullptr;
  check_dev(gate_mod, op, "gate_mod");
  VGEN_ASSERT(gate_mod.dtype() == DType::kF32, "{}: gate_mod must be f32, got {}", op, gate_mod.str());
  *g = mod_address(x, gate_mod, gate_idx, op);
  return gate_mod.f32() + g->offset;
}
}  // namespace

Tensor cuda_residual_layer_norm(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                const Tensor& weight, const Tensor& bias, float eps) {
  ModAddress g;
  const float* gate = residual_gate(x, y, gate_mod, gate_idx, &g, "residual_layer_norm");
  const int64_t D = x.dim(2);
  Tensor out = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  const cudaError_t e = kern::residual_layer_norm(
      x.raw(), y.raw(), gate, g.stride, gate ? g.rows_per_mod : 1, f32_param(weight, D, "residual_layer_norm", "weight"),
      f32_param(bias, D, "residual_layer_norm", "bias"), out.raw(), act_type(x, "residual_layer_norm", "x"),
      x.dim(0) * x.dim(1), D, eps, compute_stream());
  if (e != cudaErrorNotSupported) {
    launched(e, "residual_layer_norm", x);
    return out;
  }
  residual_unfused(x, y, gate_mod, gate_idx);
  return cuda_layer_norm(x, weight, bias, eps);
}

Tensor cuda_residual_layer_norm_modulate(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                         const Tensor& mod, int shift_idx, int scale_idx, float eps) {
  ModAddress g;
  const float* gate = residual_gate(x, y, gate_mod, gate_idx, &g, "residual_layer_norm_modulate");
  const auto [sh, sc] = shift_scale(x, mod, shift_idx, scale_idx, "residual_layer_norm_modulate");
  // One kernel reads the gate and the shift/scale rows with one stride and rows-per-row.
  const bool same_rows = !gate || (g.stride == sh.stride && g.rows_per_mod == sh.rows_per_mod);
  if (same_rows) {
    Tensor out = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
    const cudaError_t e = kern::residual_layer_norm_modulate(
        x.raw(), y.raw(), gate, mod.f32() + sh.offset, mod.f32() + sc.offset, sh.stride, sh.rows_per_mod, out.raw(),
        act_type(x, "residual_layer_norm_modulate", "x"), x.dim(0) * x.dim(1), x.dim(2), eps, compute_stream());
    if (e != cudaErrorNotSupported) {
      launched(e, "residual_layer_norm_modulate", x);
      return out;
    }
  }
  residual_unfused(x, y, gate_mod, gate_idx);
  return cuda_layer_norm_modulate(x, mod, shift_idx, scale_idx, eps);
}

namespace {
const void* rms_weight(const Tensor& w, int64_t n, const char* op, kern::FloatType* wt) {
  *wt = kern::FloatType::kF32;
  if (!w.defined()) return nullptr;
  *wt = act_type(w, op, "weight");
  VGEN_ASSERT(w.numel() == n, "{}: weight {} for rows of {}", op, w.str(), n);
  return w.raw();
}
}  // namespace

namespace {
// The quantised buffers of an activation shaped like x ([M, width] u8 e4m3 or i8 INT8, and [M]);
// false when the width needs padding (fp8_padded_k), which the fused norms do not write.
bool fp8_buffers(const Tensor& x, GemmFormat format, Fp8Activation& out) {
  const int64_t K = x.dim(-1);
  if (fp8_padded_k(K) != K) return false;
  out.x8 = Tensor::empty({rows_of(x), K}, gemm_format_dtype(format), Device::kCUDA);  // [M, K]
  out.scale = Tensor::empty({rows_of(x)}, DType::kF32, Device::kCUDA);  // [M]
  out.shape = x.shape();
  return true;
}

// The bytes of either format go through the kernels' uint8_t pointer (their int8 flag says which).
uint8_t* x8_ptr(Fp8Activation& a) { return static_cast<uint8_t*>(a.x8.raw()); }

// A fused norm's launch status: true when it ran, false (out cleared) when it does not apply.
bool fp8_ran(cudaError_t e, const char* op, const Tensor& x, Fp8Activation& out) {
  if (e == cudaErrorNotSupported) {
    out = Fp8Activation();
    return false;
  }
  launched(e, op, x);
  return true;
}
}  // namespace

bool cuda_layer_norm_fp8(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, Fp8Activation& out,
                         GemmFormat format) {
  const kern::FloatType t = act_type(x, "layer_norm_fp8", "x");
  const int64_t D = x.dim(-1);
  if (!fp8_buffers(x, format, out)) return false;
  return fp8_ran(kern::layer_norm_fp8(x.raw(), t, f32_param(weight, D, "layer_norm_fp8", "weight"),
                                      f32_param(bias, D, "layer_norm_fp8", "bias"), t, x8_ptr(out), out.scale.f32(),
                                      rows_of(x), D, eps, compute_stream(), format == GemmFormat::kInt8),
                 "layer_norm_fp8", x, out);
}

bool cuda_layer_norm_modulate_fp8(const Tensor& x, const Tensor& mod, int shift_idx, int scale_idx, float eps,
                                  Fp8Activation& out, GemmFormat format) {
  const kern::FloatType t = act_type(x, "layer_norm_modulate_fp8", "x");
  const auto [sh, sc] = shift_scale(x, mod, shift_idx, scale_idx, "layer_norm_modulate_fp8");
  if (!fp8_buffers(x, format, out)) return false;
  return fp8_ran(kern::layer_norm_modulate_fp8(x.raw(), t, mod.f32() + sh.offset, mod.f32() + sc.offset, sh.stride,
                                               sh.rows_per_mod, t, x8_ptr(out), out.scale.f32(), x.dim(0) * x.dim(1),
                                               x.dim(2), eps, compute_stream(), format == GemmFormat::kInt8),
                 "layer_norm_modulate_fp8", x, out);
}

bool cuda_residual_layer_norm_modulate_fp8(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                           const Tensor& mod, int shift_idx, int scale_idx, float eps,
                                           Fp8Activation& out, GemmFormat format) {
  const char* op = "residual_layer_norm_modulate_fp8";
  ModAddress g;
  const float* gate = residual_gate(x, y, gate_mod, gate_idx, &g, op);
  const auto [sh, sc] = shift_scale(x, mod, shift_idx, scale_idx, op);
  if ((gate && (g.stride != sh.stride || g.rows_per_mod != sh.rows_per_mod)) || !fp8_buffers(x, format, out))
    return false;
  return fp8_ran(kern::residual_layer_norm_modulate_fp8(x.raw(), y.raw(), gate, mod.f32() + sh.offset,
                                                        mod.f32() + sc.offset, sh.stride, sh.rows_per_mod,
                                                        act_type(x, op, "x"), x8_ptr(out), out.scale.f32(),
                                                        x.dim(0) * x.dim(1), x.dim(2), eps, compute_stream(),
                                                        format == GemmFormat::kInt8),
                 op, x, out);
}

Tensor cuda_rms_norm(const Tensor& x, const Tensor& weight, float eps) {
  const kern::FloatType t = act_type(x, "rms_norm", "x");
  const int64_t D = x.dim(-1);
  kern::FloatType wt;
  const void* w = rms_weight(weight, D, "rms_norm", &wt);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::rms_norm(x.raw(), w, wt, y.raw(), t, rows_of(x), D, eps, compute_stream()), "rms_norm", x);
  return y;
}

Tensor cuda_rms_norm_rope(const Tensor& x, const Tensor& weight, const Tensor& cos, const Tensor& sin, float eps) {
  const kern::FloatType t = act_type(x, "rms_norm_rope", "x");
  VGEN_ASSERT(x.ndim() == 4 && x.dim(3) % 2 == 0, "rms_norm_rope: x must be [B, S, H, Dh] with even Dh, got {}",
              x.str());
  const int64_t B = x.dim(0), S = x.dim(1), H = x.dim(2), Dh = x.dim(3);
  const Shape table{S, Dh};
  VGEN_ASSERT(cos.shape() == table && sin.shape() == table, "rms_norm_rope: tables {} / {} for x {}", desc(cos),
              desc(sin), x.str());
  const float* c = f32_param(cos, S * Dh, "rms_norm_rope", "cos");
  const float* s = f32_param(sin, S * Dh, "rms_norm_rope", "sin");
  kern::FloatType wt;
  const void* w = rms_weight(weight, H * Dh, "rms_norm_rope", &wt);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::rms_norm_rope(x.raw(), w, wt, c, s, y.raw(), t, B, S, H, Dh, eps, compute_stream()), "rms_norm_rope",
           x);
  return y;
}

void cuda_rope_(Tensor& x, const Tensor& cos, const Tensor& sin) {
  const kern::FloatType t = act_type(x, "rope", "x");
  VGEN_ASSERT(x.ndim() == 4 && x.dim(3) % 2 == 0, "rope: x must be [B, S, H, Dh] with even Dh, got {}", x.str());
  const Shape table{x.dim(1), x.dim(3)};
  VGEN_ASSERT(cos.shape() == table && sin.shape() == table, "rope: tables {} / {} for x {}", desc(cos), desc(sin),
              x.str());
  const int64_t n = x.dim(1) * x.dim(3);
  launched(kern::rope(x.raw(), f32_param(cos, n, "rope", "cos"), f32_param(sin, n, "rope", "sin"), x.raw(), t,
                      x.dim(0), x.dim(1), x.dim(2), x.dim(3), compute_stream()),
           "rope", x);
}

void cuda_add_inplace(Tensor& x, const Tensor& y) {
  const kern::FloatType t = act_type(x, "add_inplace", "x");
  VGEN_ASSERT(act_type(y, "add_inplace", "y") == t && x.numel() == y.numel(), "add_inplace: {} vs {}", x.str(),
              y.str());
  launched(kern::add(x.raw(), y.raw(), x.raw(), t, x.numel(), compute_stream()), "add_inplace", x);
}

Tensor cuda_sub(const Tensor& a, const Tensor& b) {
  const kern::FloatType t = act_type(a, "sub", "a");
  VGEN_ASSERT(act_type(b, "sub", "b") == t && a.numel() == b.numel(), "sub: {} vs {}", a.str(), b.str());
  Tensor out = Tensor::empty(a.shape(), a.dtype(), Device::kCUDA);
  launched(kern::sub(a.raw(), b.raw(), out.raw(), t, a.numel(), compute_stream()), "sub", a);
  return out;
}

Tensor cuda_abs_diff_sums(const Tensor& a, const Tensor& b) {
  const kern::FloatType t = act_type(a, "abs_diff_sums", "a");
  VGEN_ASSERT(act_type(b, "abs_diff_sums", "b") == t && a.numel() == b.numel(), "abs_diff_sums: {} vs {}", a.str(),
              b.str());
  // Doubles in f32 storage (the device allocator's blocks are 256-byte aligned).
  Tensor ws = Tensor::empty({2 * kern::kAbsDiffWorkspace}, DType::kF32, Device::kCUDA);
  Tensor out = Tensor::empty({2}, DType::kF32, Device::kCUDA);
  launched(kern::abs_diff_sums(a.raw(), b.raw(), t, a.numel(), reinterpret_cast<double*>(ws.raw()), out.f32(),
                               compute_stream()),
           "abs_diff_sums", a);
  return out;
}

Tensor cuda_add_row(const Tensor& x, const Tensor& row) {
  const kern::FloatType t = act_type(x, "add_row", "x");
  const int64_t D = row.defined() ? row.numel() : 0;
  VGEN_ASSERT(D > 0 && x.dim(-1) == D, "add_row: x {} and row {}", x.str(), desc(row));
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::add_row(x.raw(), t, f32_param(row, D, "add_row", "row"), y.raw(), t, x.numel() / D, D,
                         compute_stream()),
           "add_row", x);
  return y;
}

void cuda_gated_residual_(Tensor& x, const Tensor& y, const Tensor& mod, int gate_idx) {
  const kern::FloatType t = act_type(x, "gated_residual_", "x");
  VGEN_ASSERT(act_type(y, "gated_residual_", "y") == t && x.shape() == y.shape(), "gated_residual_: x {} vs y {}",
              x.str(), y.str());
  check_dev(mod, "gated_residual_", "mod");
  VGEN_ASSERT(mod.dtype() == DType::kF32, "gated_residual_: mod must be f32, got {}", mod.str());
  const ModAddress g = mod_address(x, mod, gate_idx, "gated_residual_");
  launched(kern::gated_residual(x.raw(), y.raw(), mod.f32() + g.offset, g.stride, g.rows_per_mod, x.raw(), t,
                                x.dim(0) * x.dim(1), x.dim(2), compute_stream()),
           "gated_residual_", x);
}

Tensor cuda_scale_rows(const Tensor& x, const Tensor& scale) {
  const kern::FloatType t = act_type(x, "scale_rows", "x");
  VGEN_ASSERT(x.ndim() >= 1, "scale_rows: x {} has no rows", x.str());
  const int64_t rows = x.dim(0), width = rows ? x.numel() / rows : 0;
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::scale_rows(x.raw(), f32_param(scale, rows, "scale_rows", "scale"), y.raw(), t, rows, width,
                            compute_stream()),
           "scale_rows", x);
  return y;
}

Tensor cuda_cfg_combine(const Tensor& cond, const Tensor& uncond, float scale) {
  const kern::FloatType t = act_type(cond, "cfg_combine", "cond");
  VGEN_ASSERT(act_type(uncond, "cfg_combine", "uncond") == t && cond.shape() == uncond.shape(),
              "cfg_combine: cond {} vs uncond {}", cond.str(), uncond.str());
  Tensor out = Tensor::empty(cond.shape(), cond.dtype(), Device::kCUDA);
  launched(kern::cfg_combine(cond.raw(), uncond.raw(), out.raw(), t, cond.numel(), scale, compute_stream()),
           "cfg_combine", cond);
  return out;
}

Tensor cuda_gelu_tanh(const Tensor& x) {
  const kern::FloatType t = act_type(x, "gelu_tanh", "x");
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::gelu_tanh(x.raw(), t, y.raw(), t, x.numel(), compute_stream()), "gelu_tanh", x);
  return y;
}

Tensor cuda_silu(const Tensor& x) {
  const kern::FloatType t = act_type(x, "silu", "x");
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
  launched(kern::silu(x.raw(), t, y.raw(), t, x.numel(), compute_stream()), "silu", x);
  return y;
}

void cuda_gelu_tanh_(Tensor& x) {
  const kern::FloatType t = act_type(x, "gelu_tanh_", "x");
  launched(kern::gelu_tanh(x.raw(), t, x.raw(), t, x.numel(), compute_stream()), "gelu_tanh_", x);
}

void cuda_gelu_erf_(Tensor& x) {
  const kern::FloatType t = act_type(x, "gelu_erf_", "x");
  launched(kern::gelu_erf(x.raw(), t, x.raw(), t, x.numel(), compute_stream()), "gelu_erf_", x);
}

void cuda_silu_(Tensor& x) {
  const kern::FloatType t = act_type(x, "silu_", "x");
  launched(kern::silu(x.raw(), t, x.raw(), t, x.numel(), compute_stream()), "silu_", x);
}

void cuda_quick_gelu_(Tensor& x) {
  const kern::FloatType t = act_type(x, "quick_gelu_", "x");
  launched(kern::quick_gelu(x.raw(), t, x.raw(), t, x.numel(), compute_stream()), "quick_gelu_", x);
}

Tensor cuda_timestep_embedding(const Tensor& t, int64_t dim, bool flip_sin_to_cos, float freq_shift,
                               float max_period) {
  check_dev(t, "timestep_embedding", "t");
  VGEN_ASSERT(t.ndim() == 1 && t.dtype() == DType::kF32 && dim > 0,
              "timestep_embedding: t must be [N] f32 on the device, got {}", t.str());
  Tensor out = Tensor::empty({t.dim(0), dim}, DType::kF32, Device::kCUDA);
  launched(kern::timestep_embedding(t.f32(), out.f32(), t.dim(0), dim, flip_sin_to_cos, freq_shift, max_period,
                                    compute_stream()),
           "timestep_embedding", t);
  return out;
}

Tensor cuda_gather_rows(const Tensor& table, const Tensor& index) {
  check_dev(table, "gather_rows", "table");
  check_dev(index, "gather_rows", "index");
  VGEN_ASSERT(table.ndim() == 2 && table.dtype() == DType::kF32 && index.ndim() == 1 && index.dtype() == DType::kI64,
              "gather_rows: table must be [U, N] f32 and index [R] i64, got {} and {}", table.str(), index.str());
  Tensor out = Tensor::empty({index.dim(0), table.dim(1)}, DType::kF32, Device::kCUDA);
  launched(kern::gather_rows(table.f32(), index.data<int64_t>(), out.f32(), index.dim(0), table.dim(1),
                             compute_stream()),
           "gather_rows", table);
  return out;
}

Tensor cuda_patchify(const Tensor& x, const std::array<int, 3>& patch, int64_t begin, int64_t count,
                     DType out_dtype) {
  const kern::FloatType t = act_type(x, "patchify", "x");
  VGEN_ASSERT(x.ndim() == 5 && x.dim(2) % patch[0] == 0 && x.dim(3) % patch[1] == 0 && x.dim(4) % patch[2] == 0,
              "patchify: x {} is not [B, C, T, H, W] divisible by the patch [{}, {}, {}]", x.str(), patch[0],
              patch[1], patch[2]);
  VGEN_ASSERT(begin >= 0 && count >= 0, "patchify: token range [{}, +{})", begin, count);
  const int64_t P = x.dim(1) * patch[0] * patch[1] * patch[2];
  Tensor out = Tensor::empty({x.dim(0), count, P}, out_dtype, Device::kCUDA);
  launched(kern::patchify(x.raw(), t, out.raw(), act_type(out_dtype, "patchify"), x.dim(0), x.dim(1), x.dim(2),
                          x.dim(3), x.dim(4), patch[0], patch[1], patch[2], begin, count, compute_stream()),
           "patchify", x);
  return out;
}

Tensor cuda_unpatchify(const Tensor& tokens, const std::array<int, 3>& patch, int64_t C, int64_t T, int64_t H,
                       int64_t W, DType out_dtype) {
  const kern::FloatType t = act_type(tokens, "unpatchify", "tokens");
  const int64_t S = (T / patch[0]) * (H / patch[1]) * (W / patch[2]);
  VGEN_ASSERT(T % patch[0] == 0 && H % patch[1] == 0 && W % patch[2] == 0 && tokens.ndim() == 3 &&
                  tokens.dim(1) == S && tokens.dim(2) == C * patch[0] * patch[1] * patch[2],
              "unpatchify: tokens {} for C={} T={} H={} W={} and patch [{}, {}, {}]", tokens.str(), C, T, H, W,
              patch[0], patch[1], patch[2]);
  Tensor out = Tensor::empty({tokens.dim(0), C, T, H, W}, out_dtype, Device::kCUDA);
  launched(kern::unpatchify(tokens.raw(), t, out.raw(), act_type(out_dtype, "unpatchify"), tokens.dim(0), C, T, H, W,
                            patch[0], patch[1], patch[2], compute_stream()),
           "unpatchify", tokens);
  return out;
}

void cuda_fill_normal(Tensor& t, uint64_t seed, float mean, float std) {
  const kern::FloatType ft = act_type(t, "fill_normal", "t");
  launched(kern::fill_normal(t.raw(), ft, t.numel(), seed, mean, std, compute_stream()), "fill_normal", t);
}

void cuda_fill_constant(Tensor& t, float value) {
  const kern::FloatType ft = act_type(t, "fill_constant", "t");
  launched(kern::fill_constant(t.raw(), ft, t.numel(), value, compute_stream()), "fill_constant", t);
}

}  // namespace vgen
