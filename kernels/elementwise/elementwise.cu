// Elementwise DiT ops on the device (contracts in elementwise.cuh). Grid-stride loops over chunks
// of 8 elements with 16-byte accesses when sizes and pointers allow, scalar code otherwise.
#include "kernels/common/elem_io.cuh"
#include "kernels/elementwise/elementwise.cuh"

namespace vgen::kern {
namespace {

enum BinOp : int { kAdd = 0, kCfg = 1, kSub = 2 };

template <int kOp> __device__ __forceinline__ float bin(float a, float b, float scale) {
  if constexpr (kOp == kAdd) return a + b;
  else if constexpr (kOp == kSub) return a - b;
  else return b + scale * (a - b);  // a = cond, b = uncond
}

template <typename T, int kOp>
__global__ void binary_kernel(const T* a, const T* b, T* out, int64_t n, float scale, bool vec) {
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, step = int64_t(gridDim.x) * blockDim.x;
  int64_t done = 0;
  if (vec) {
    const int64_t chunks = n / 8;
    for (int64_t c = tid; c < chunks; c += step) {
      float va[8], vb[8];
      dev::load8<T>(a + 8 * c, va);
      dev::load8<T>(b + 8 * c, vb);
#pragma unroll
      for (int j = 0; j < 8; ++j) va[j] = bin<kOp>(va[j], vb[j], scale);
      dev::store8<T>(out + 8 * c, va);
    }
    done = chunks * 8;
  }
  for (int64_t i = done + tid; i < n; i += step)
    out[i] = dev::from_f<T>(bin<kOp>(dev::to_f(a[i]), dev::to_f(b[i]), scale));
}

template <typename T, int kOp>
cudaError_t launch_binary(const void* a, const void* b, void* out, int64_t n, float scale, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const bool vec = dev::aligned16(a) && dev::aligned16(b) && dev::aligned16(out);
  binary_kernel<T, kOp><<<dev::grid_for(vec ? (n + 7) / 8 : n, 256), 256, 0, stream>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), n, scale, vec);
  return cudaGetLastError();
}

template <typename TX, typename TY>
__global__ void add_row_kernel(const TX* x, const float* __restrict__ row, TY* out, int64_t rows, int64_t width,
                               bool vec) {
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, step = int64_t(gridDim.x) * blockDim.x;
  const int64_t n = rows * width;
  if (vec) {  // width % 8 == 0: a chunk never straddles rows
    for (int64_t c = tid; c < n / 8; c += step) {
      const int64_t i = 8 * c;
      float v[8], r[8];
      dev::load8<TX>(x + i, v);
      dev::load8<float>(row + i % width, r);
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] += r[j];
      dev::store8<TY>(out + i, v);
    }
  } else {
    for (int64_t i = tid; i < n; i += step) out[i] = dev::from_f<TY>(dev::to_f(x[i]) + row[i % width]);
  }
}

template <typename T>
__global__ void gated_kernel(const T* x, const T* y, const float* __restrict__ gate, int64_t mod_stride,
                             int64_t rows_per_mod, T* out, int64_t rows, int64_t width, bool vec) {
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, step = int64_t(gridDim.x) * blockDim.x;
  const int64_t n = rows * width;
  if (vec) {
    for (int64_t c = tid; c < n / 8; c += step) {
      const int64_t i = 8 * c, r = i / width;
      const float* g = gate + (r / rows_per_mod) * mod_stride + (i - r * width);
      float vx[8], vy[8], vg[8];
      dev::load8<T>(x + i, vx);
      dev::load8<T>(y + i, vy);
      dev::load8<float>(g, vg);
#pragma unroll
      for (int j = 0; j < 8; ++j) vx[j] = fmaf(vy[j], vg[j], vx[j]);  // one rounding, as residual_layer_norm
      dev::store8<T>(out + i, vx);
    }
  } else {
    for (int64_t i = tid; i < n; i += step) {
      const int64_t r = i / width;
      const float g = gate[(r / rows_per_mod) * mod_stride + (i - r * width)];
      out[i] = dev::from_f<T>(fmaf(dev::to_f(y[i]), g, dev::to_f(x[i])));
    }
  }
}

}  // namespace

cudaError_t add(const void* a, const void* b, void* out, FloatType type, int64_t n, cudaStream_t stream) {
  VGEN_DISPATCH_FB(type, T, { return launch_binary<T, kAdd>(a, b, out, n, 0.0f, stream); });
}

cudaError_t sub(const void* a, const void* b, void* out, FloatType type, int64_t n, cudaStream_t stream) {
  VGEN_DISPATCH_FB(type, T, { return launch_binary<T, kSub>(a, b, out, n, 0.0f, stream); });
}

cudaError_t cfg_combine(const void* cond, const void* uncond, void* out, FloatType type, int64_t n, float scale,
                        cudaStream_t stream) {
  VGEN_DISPATCH_FB(type, T, { return launch_binary<T, kCfg>(cond, uncond, out, n, scale, stream); });
}

cudaError_t add_row(const void* x, FloatType x_type, const float* row, void* out, FloatType out_type, int64_t rows,
                    int64_t width, cudaStream_t stream) {
  if (rows < 0 || width < 0) return cudaErrorInvalidValue;
  if (rows == 0 || width == 0) return cudaSuccess;
  const bool vec = width % 8 == 0 && dev::aligned16(x) && dev::aligned16(row) && dev::aligned16(out);
  const int64_t work = vec ? rows * width / 8 : rows * width;
  VGEN_DISPATCH_FB(x_type, TX, {
    VGEN_DISPATCH_FB(out_type, TY, {
      add_row_kernel<TX, TY><<<dev::grid_for(work, 256), 256, 0, stream>>>(
          static_cast<const TX*>(x), row, static_cast<TY*>(out), rows, width, vec);
      return cudaGetLastError();
    });
  });
}

cudaError_t gated_residual(const void* x, const void* y, const float* gate, int64_t mod_stride, int64_t rows_per_mod,
                           void* out, FloatType type, int64_t rows, int64_t width, cudaStream_t stream) {
  if (rows < 0 || width < 0 || rows_per_mod <= 0) return rows == 0 ? cudaSuccess : cudaErrorInvalidValue;
  if (rows == 0 || width == 0) return cudaSuccess;
  const bool vec = width % 8 == 0 && mod_stride % 4 == 0 && dev::aligned16(x) && dev::aligned16(y) &&
                   dev::aligned16(gate) && dev::aligned16(out);
  const int64_t work = vec ? rows * width / 8 : rows * width;
  VGEN_DISPATCH_FB(type, T, {
    gated_kernel<T><<<dev::grid_for(work, 256), 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(y),
                                                                    gate, mod_stride, rows_per_mod,
                                                                    static_cast<T*>(out), rows, width, vec);
    return cudaGetLastError();
  });
}

namespace {

// One block per row (grid-stride over rows): the row's scale is read once.
template <typename T>
__global__ void scale_rows_kernel(const T* x, const float* __restrict__ scale, T* out, int64_t rows, int64_t width,
                                  bool vec) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float s = scale[r];
    const T* xr = x + r * width;
    T* orow = out + r * width;
    int64_t done = 0;
    if (vec) {  // width % 8 == 0 and 16-byte aligned rows
      for (int64_t c = threadIdx.x; c < width / 8; c += blockDim.x) {
        float v[8];
        dev::load8<T>(xr + 8 * c, v);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] *= s;
        dev::store8<T>(orow + 8 * c, v);
      }
      done = width;
    }
    for (int64_t i = done + threadIdx.x; i < width; i += blockDim.x) orow[i] = dev::from_f<T>(dev::to_f(xr[i]) * s);
  }
}

}  // namespace

cudaError_t scale_rows(const void* x, const float* scale, void* out, FloatType type, int64_t rows, int64_t width,
                       cudaStream_t stream) {
  if (rows < 0 || width < 0) return cudaErrorInvalidValue;
  if (rows == 0 || width == 0) return cudaSuccess;
  const bool vec = width % 8 == 0 && dev::aligned16(x) && dev::aligned16(out);
  const unsigned grid = unsigned(rows < 65535 ? rows : 65535);
  VGEN_DISPATCH_FB(type, T, {
    scale_rows_kernel<T><<<grid, 256, 0, stream>>>(static_cast<const T*>(x), scale, static_cast<T*>(out), rows, width,
                                                   vec);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
