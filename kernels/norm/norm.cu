// LayerNorm and AdaLN on the device (contracts in norm.cuh). One block per row, mean and biased
// variance in two exact passes (like the CPU reference's two passes), the output written with one
// rounding. Rows whose width has a register shape (row_regs.cuh; every DiT width) stay in
// registers; other rows go through a shared-memory copy.
#include "kernels/common/elem_io.cuh"
#include "kernels/common/row_regs.cuh"
#include "kernels/norm/norm.cuh"
#include "kernels/quant/e4m3_pack.cuh"
#include "kernels/quant/int8_ref.h"
#include "kernels/rope/rope.cuh"

namespace vgen::kern {
namespace {

using dev::bf16;

struct LnArgs {
  const float* weight = nullptr;  // affine LN (may be null)
  const float* bias = nullptr;
  const float* shift = nullptr;   // AdaLN (modulate = true)
  const float* scale = nullptr;
  int64_t mod_stride = 0, rows_per_mod = 1;
  int64_t rows = 0, width = 0;
  float eps = 0;
  const void* res = nullptr;   // residual update first (register kernel only): x <- x + res·gate
  const float* gate = nullptr;  // null: x + res; rows address it like shift/scale
  uint8_t* x8 = nullptr;        // kFp8 (register kernel only): the output as e4m3 or INT8 [rows, width]
  float* x8_scale = nullptr;    //   and its per-row scales [rows], instead of y
  bool int8 = false;            // kFp8: x8 holds INT8 bytes (quantize_rows_int8) instead of e4m3
};

// The register kernel: with kResidual the row is first updated in place (x + res·gate, or x + res
// without a gate) and rounded into TX, exactly as gated_residual / add would store it. With kFp8
// the output row, rounded into TY as it would be stored, is quantised as quantize_rows_fp8 does
// (its |max|, then e4m3 of each value times 448/max) into a.x8 / a.x8_scale; y is not written.
// With a.int8 the bytes are quantize_rows_int8's instead (the same |max|, then rint of each value
// times 127/max, clamped to ±127). A runtime flag, not a template parameter: the two encoders run
// on the same registers after the row is reduced, so it adds no spill and no kernel instances.
// kFp8 holds the rounded outputs in registers (yv): at most kFp8Threads threads, so the residual
// form at 5120 wide (V = 4) keeps them without spilling (16 bytes spilled at 1024).
constexpr int kFp8Threads = 512;
template <typename TX, typename TY, bool kModulate, bool kResidual, bool kFp8, int V>
__global__ void __launch_bounds__(kFp8 ? kFp8Threads : 1024) ln_regs_kernel(TX* x, TY* y, LnArgs a) {
  __shared__ float scratch[33];
  const int64_t W = a.width;
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    dev::RowRegs<TX, V> row;
    row.load(x + r * W);
    const int64_t m = r / a.rows_per_mod;
    if constexpr (kResidual) {
      dev::RowRegs<TX, V> res;
      res.load(static_cast<const TX*>(a.res) + r * W);
      const float* g = a.gate ? a.gate + m * a.mod_stride : nullptr;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        float v[8], e[8], gv[8];
        row.get(i, v);
        res.get(i, e);
        if (g) {
          dev::load8<float>(g + dev::row_index(i, 0), gv);
#pragma unroll
          for (int j = 0; j < 8; ++j) v[j] = fmaf(e[j], gv[j], v[j]);
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) v[j] += e[j];
        }
        row.set(i, v);  // rounded into TX, as gated_residual / add store it
      }
      row.store(x + r * W);
    }
    const float mean = dev::block_sum(dev::row_sum(row, [](float v) { return v; }), scratch) / float(W);
    const float ss = dev::row_sum(row, [mean](float v) {
      const float d = v - mean;
      return d * d;
    });
    const float rstd = 1.0f / sqrtf(dev::block_sum(ss, scratch) / float(W) + a.eps);
    const float* sh = kModulate ? a.shift + m * a.mod_stride : nullptr;
    const float* sc = kModulate ? a.scale + m * a.mod_stride : nullptr;
    float yv[kFp8 ? V : 1][8];  // kFp8: the rounded outputs, held for the quantisation
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int64_t c = dev::row_index(i, 0);
      float o[8], p[8];
      row.get(i, o);
#pragma unroll
      for (int j = 0; j < 8; ++j) o[j] = (o[j] - mean) * rstd;
      if constexpr (kModulate) {
        dev::load8<float>(sc + c, p);
#pragma unroll
        for (int j = 0; j < 8; ++j) o[j] *= 1.0f + p[j];
        dev::load8<float>(sh + c, p);
#pragma unroll
        for (int j = 0; j < 8; ++j) o[j] += p[j];
      } else {
        if (a.weight) {
          dev::load8<float>(a.weight + c, p);
#pragma unroll
          for (int j = 0; j < 8; ++j) o[j] *= p[j];
        }
        if (a.bias) {
          dev::load8<float>(a.bias + c, p);
#pragma unroll
          for (int j = 0; j < 8; ++j) o[j] += p[j];
        }
      }
      if constexpr (kFp8) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          yv[i][j] = dev::round_as<TY>(o[j]);
          amax = fmaxf(amax, fabsf(yv[i][j]));  // fmaxf ignores NaN, as the row quantisation
        }
      } else {
        dev::store8<TY>(y + r * W + c, o);
      }
    }
    if constexpr (kFp8) {
      amax = dev::block_max(amax, scratch);
      const float top = a.int8 ? kInt8Max : kFp8E4M3Max;
      const float mul = group_quant_mul(top, amax);
      uint8_t* out = a.x8 + r * W;
      if (a.int8) {
#pragma unroll
        for (int i = 0; i < V; ++i) *reinterpret_cast<uint2*>(out + dev::row_index(i, 0)) = int8_pack8(yv[i], mul);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) *reinterpret_cast<uint2*>(out + dev::row_index(i, 0)) = e4m3_pack8(yv[i], mul);
      }
      if (threadIdx.x == 0) a.x8_scale[r] = group_dequant_mul(top, amax);
    }
  }
}

template <typename TX, typename TY, bool kModulate, bool kVec>
__global__ void ln_kernel(const TX* __restrict__ x, TY* y, LnArgs a) {
  extern __shared__ float4 sm4[];  // float4: 16-byte aligned for the vector path
  float* sm = reinterpret_cast<float*>(sm4);
  float* row = sm;                 // [width]
  float* scratch = sm + a.width;    // [33]
  const int64_t W = a.width;
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const TX* xr = x + r * W;
    TY* yr = y + r * W;
    float s = 0.0f;
    if constexpr (kVec) {
      for (int64_t i = int64_t(threadIdx.x) * 8; i < W; i += int64_t(blockDim.x) * 8) {
        float v[8];
        dev::load8<TX>(xr + i, v);
        dev::smem_store8(row + i, v);
#pragma unroll
        for (int j = 0; j < 8; ++j) s += v[j];
      }
    } else {
      for (int64_t i = threadIdx.x; i < W; i += blockDim.x) {
        const float v = dev::to_f(xr[i]);
        row[i] = v;
        s += v;
      }
    }
    const float mean = dev::block_sum(s, scratch) / float(W);
    // Same element-to-thread mapping in every pass: each thread re-reads only what it wrote.
    float ss = 0.0f;
    if constexpr (kVec) {
      for (int64_t i = int64_t(threadIdx.x) * 8; i < W; i += int64_t(blockDim.x) * 8) {
        float v[8];
        dev::smem_load8(row + i, v);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float d = v[j] - mean;
          ss += d * d;
        }
      }
    } else {
      for (int64_t i = threadIdx.x; i < W; i += blockDim.x) {
        const float d = row[i] - mean;
        ss += d * d;
      }
    }
    const float rstd = 1.0f / sqrtf(dev::block_sum(ss, scratch) / float(W) + a.eps);
    const int64_t m = r / a.rows_per_mod;
    const float* sh = kModulate ? a.shift + m * a.mod_stride : nullptr;
    const float* sc = kModulate ? a.scale + m * a.mod_stride : nullptr;
    if constexpr (kVec) {
      for (int64_t i = int64_t(threadIdx.x) * 8; i < W; i += int64_t(blockDim.x) * 8) {
        float v[8], p[8];
        dev::smem_load8(row + i, v);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = (v[j] - mean) * rstd;
        if constexpr (kModulate) {
          dev::load8<float>(sc + i, p);
#pragma unroll
          for (int j = 0; j < 8; ++j) v[j] *= 1.0f + p[j];
          dev::load8<float>(sh + i, p);
#pragma unroll
          for (int j = 0; j < 8; ++j) v[j] += p[j];
        } else {
          if (a.weight) {
            dev::load8<float>(a.weight + i, p);
#pragma unroll
            for (int j = 0; j < 8; ++j) v[j] *= p[j];
          }
          if (a.bias) {
            dev::load8<float>(a.bias + i, p);
#pragma unroll
            for (int j = 0; j < 8; ++j) v[j] += p[j];
          }
        }
        dev::store8<TY>(yr + i, v);
      }
    } else {
      for (int64_t i = threadIdx.x; i < W; i += blockDim.x) {
        float n = (row[i] - mean) * rstd;
        if constexpr (kModulate) {
          n = n * (1.0f + sc[i]) + sh[i];
        } else {
          if (a.weight) n *= a.weight[i];
          if (a.bias) n += a.bias[i];
        }
        yr[i] = dev::from_f<TY>(n);
      }
    }
  }
}

// The register kernel when the row has a register shape and every pointer allows 16-byte access;
// cudaErrorNotSupported otherwise (nothing launched).
template <typename TX, typename TY, bool kModulate, bool kResidual, bool kFp8 = false>
cudaError_t launch_ln_regs(void* x, void* y, const LnArgs& a, cudaStream_t stream) {
  int threads = 0, vecs = 0;
  const bool ok = dev::row_regs_shape(a.width, &threads, &vecs) && dev::aligned16(x) && dev::aligned16(y) &&
                  (!kFp8 || (a.x8 && a.x8_scale && a.width % 16 == 0 && dev::aligned16(a.x8) &&
                             threads <= kFp8Threads)) &&
                  dev::aligned16(a.weight) && dev::aligned16(a.bias) && dev::aligned16(a.shift) &&
                  dev::aligned16(a.scale) && dev::aligned16(a.res) && dev::aligned16(a.gate) &&
                  ((!kModulate && !a.gate) || a.mod_stride % 4 == 0);
  if (!ok) return cudaErrorNotSupported;
  VGEN_DISPATCH_ROW_V(vecs, V, {
    ln_regs_kernel<TX, TY, kModulate, kResidual, kFp8, V>
        <<<dev::row_grid(a.rows), threads, 0, stream>>>(static_cast<TX*>(x), static_cast<TY*>(y), a);
    return cudaGetLastError();
  });
}

template <typename TX, typename TY, bool kModulate>
cudaError_t launch_ln(const void* x, void* y, const LnArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  const cudaError_t r = launch_ln_regs<TX, TY, kModulate, false>(const_cast<void*>(x), y, a, stream);
  if (r != cudaErrorNotSupported) return r;
  const size_t smem = size_t(a.width + 33) * sizeof(float);
  // 16-byte paths need every row (and every modulation row) to start 16-byte aligned.
  const bool vec = a.width % 8 == 0 && dev::aligned16(x) && dev::aligned16(y) && dev::aligned16(a.weight) &&
                   dev::aligned16(a.bias) && dev::aligned16(a.shift) && dev::aligned16(a.scale) &&
                   (!kModulate || a.mod_stride % 4 == 0);
  auto kernel = vec ? ln_kernel<TX, TY, kModulate, true> : ln_kernel<TX, TY, kModulate, false>;
  return dev::launch_smem_rows(kernel, a.rows, a.width, smem, stream, static_cast<const TX*>(x), static_cast<TY*>(y),
                               a);
}

template <bool kModulate>
cudaError_t dispatch_ln(const void* x, FloatType xt, void* y, FloatType yt, const LnArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.width <= 0 || a.rows_per_mod <= 0) return a.rows == 0 ? cudaSuccess : cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(xt, TX, { VGEN_DISPATCH_FB(yt, TY, { return launch_ln<TX, TY, kModulate>(x, y, a, stream); }); });
}

template <bool kModulate>
cudaError_t dispatch_residual_ln(void* x, void* y, FloatType type, const LnArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.width <= 0 || a.rows_per_mod <= 0 || !a.res) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, T, { return launch_ln_regs<T, T, kModulate, true>(x, y, a, stream); });
}

// The register kernels with the quantised output (kFp8; e4m3 or INT8 by a.int8); cudaErrorNotSupported
// where they do not apply.
template <bool kModulate, bool kResidual>
cudaError_t dispatch_ln_fp8(void* x, FloatType xt, FloatType yt, const LnArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.width <= 0 || a.rows_per_mod <= 0 || (kResidual && (!a.res || xt != yt)))
    return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(xt, TX, {
    VGEN_DISPATCH_FB(yt, TY, { return launch_ln_regs<TX, TY, kModulate, kResidual, true>(x, nullptr, a, stream); });
  });
}

}  // namespace

cudaError_t residual_layer_norm(void* x, const void* res, const float* gate, int64_t gate_stride,
                                int64_t rows_per_mod, const float* weight, const float* bias, void* y, FloatType type,
                                int64_t rows, int64_t width, float eps, cudaStream_t stream) {
  LnArgs a;
  a.res = res, a.gate = gate, a.mod_stride = gate_stride, a.rows_per_mod = rows_per_mod;
  a.weight = weight, a.bias = bias, a.rows = rows, a.width = width, a.eps = eps;
  return dispatch_residual_ln<false>(x, y, type, a, stream);
}

cudaError_t residual_layer_norm_modulate(void* x, const void* res, const float* gate, const float* shift,
                                         const float* scale, int64_t mod_stride, int64_t rows_per_mod, void* y,
                                         FloatType type, int64_t rows, int64_t width, float eps,
                                         cudaStream_t stream) {
  if (!shift || !scale) return cudaErrorInvalidValue;
  LnArgs a;
  a.res = res, a.gate = gate, a.shift = shift, a.scale = scale, a.mod_stride = mod_stride;
  a.rows_per_mod = rows_per_mod, a.rows = rows, a.width = width, a.eps = eps;
  return dispatch_residual_ln<true>(x, y, type, a, stream);
}

cudaError_t layer_norm(const void* x, FloatType x_type, const float* weight, const float* bias, void* y,
                       FloatType y_type, int64_t rows, int64_t width, float eps, cudaStream_t stream) {
  LnArgs a;
  a.weight = weight, a.bias = bias, a.rows = rows, a.width = width, a.eps = eps;
  return dispatch_ln<false>(x, x_type, y, y_type, a, stream);
}

cudaError_t layer_norm_modulate(const void* x, FloatType x_type, const float* shift, const float* scale,
                                int64_t mod_stride, int64_t rows_per_mod, void* y, FloatType y_type, int64_t rows,
                                int64_t width, float eps, cudaStream_t stream) {
  if (!shift || !scale) return cudaErrorInvalidValue;
  LnArgs a;
  a.shift = shift, a.scale = scale, a.mod_stride = mod_stride, a.rows_per_mod = rows_per_mod;
  a.rows = rows, a.width = width, a.eps = eps;
  return dispatch_ln<true>(x, x_type, y, y_type, a, stream);
}

cudaError_t rms_norm(const void* x, const void* weight, FloatType w_type, void* y, FloatType type, int64_t rows,
                     int64_t width, float eps, cudaStream_t stream) {
  // One "head" spanning the row and no tables: the fused kernel reduces to RMSNorm.
  return rms_norm_rope(x, weight, w_type, nullptr, nullptr, y, type, 1, rows, 1, width, eps, stream);
}

cudaError_t layer_norm_fp8(const void* x, FloatType x_type, const float* weight, const float* bias, FloatType y_type,
                           uint8_t* x8, float* x8_scale, int64_t rows, int64_t width, float eps, cudaStream_t stream,
                           bool int8) {
  LnArgs a;
  a.weight = weight, a.bias = bias, a.rows = rows, a.width = width, a.eps = eps, a.x8 = x8, a.x8_scale = x8_scale;
  a.int8 = int8;
  return dispatch_ln_fp8<false, false>(const_cast<void*>(x), x_type, y_type, a, stream);
}

cudaError_t layer_norm_modulate_fp8(const void* x, FloatType x_type, const float* shift, const float* scale,
                                    int64_t mod_stride, int64_t rows_per_mod, FloatType y_type, uint8_t* x8,
                                    float* x8_scale, int64_t rows, int64_t width, float eps, cudaStream_t stream,
                                    bool int8) {
  if (!shift || !scale) return cudaErrorInvalidValue;
  LnArgs a;
  a.shift = shift, a.scale = scale, a.mod_stride = mod_stride, a.rows_per_mod = rows_per_mod;
  a.rows = rows, a.width = width, a.eps = eps, a.x8 = x8, a.x8_scale = x8_scale, a.int8 = int8;
  return dispatch_ln_fp8<true, false>(const_cast<void*>(x), x_type, y_type, a, stream);
}

cudaError_t residual_layer_norm_modulate_fp8(void* x, const void* res, const float* gate, const float* shift,
                                             const float* scale, int64_t mod_stride, int64_t rows_per_mod,
                                             FloatType type, uint8_t* x8, float* x8_scale, int64_t rows,
                                             int64_t width, float eps, cudaStream_t stream, bool int8) {
  if (!shift || !scale) return cudaErrorInvalidValue;
  LnArgs a;
  a.res = res, a.gate = gate, a.shift = shift, a.scale = scale, a.mod_stride = mod_stride;
  a.rows_per_mod = rows_per_mod, a.rows = rows, a.width = width, a.eps = eps, a.x8 = x8, a.x8_scale = x8_scale;
  a.int8 = int8;
  return dispatch_ln_fp8<true, true>(x, type, type, a, stream);
}

}  // namespace vgen::kern
