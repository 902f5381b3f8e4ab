// RoPE and fused RMSNorm + RoPE on the device (contracts in rope.cuh).
#include "kernels/common/elem_io.cuh"
#include "kernels/common/row_regs.cuh"
#include "kernels/rope/rope.cuh"

namespace vgen::kern {
namespace {

using dev::bf16;

// Rotation of pair (x1, x2) = elements (2j, 2j+1) of a head at table row `t`.
__device__ __forceinline__ void rotate(float x1, float x2, const float* c, const float* s, int64_t d, float& y1,
                                       float& y2) {
  const float cj = c[d], sj = s[d + 1];
  y1 = x1 * cj - x2 * sj;
  y2 = x1 * sj + x2 * cj;
}

// One thread per pair, grid-stride.
template <typename T>
__global__ void rope_kernel(const T* x, const float* __restrict__ cos, const float* __restrict__ sin, T* y,
                            int64_t pairs_total, int64_t seq, int64_t heads, int64_t head_dim) {
  const int64_t half = head_dim / 2;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs_total;
       p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = p % half;
    const int64_t row = p / half;           // (b, s, h) flattened
    const int64_t s = (row / heads) % seq;  // token
    const int64_t i = row * head_dim + 2 * j;
    float y1, y2;
    rotate(dev::to_f(x[i]), dev::to_f(x[i + 1]), cos + s * head_dim, sin + s * head_dim, 2 * j, y1, y2);
    y[i] = dev::from_f<T>(y1);
    y[i + 1] = dev::from_f<T>(y2);
  }
}

// One block per row (token): the row goes to shared memory, Σx² is reduced, then each thread
// normalises and rotates whole pairs (rope) or single elements (no tables).
template <typename T, typename TW, bool kRope>
__global__ void rms_rope_kernel(const T* x, const TW* __restrict__ weight, const float* __restrict__ cos,
                                const float* __restrict__ sin, T* y, int64_t rows, int64_t seq, int64_t width,
                                int64_t head_dim, float eps) {
  extern __shared__ float4 sm4[];
  float* row = reinterpret_cast<float*>(sm4);  // [width]
  float* scratch = row + width;                // [33]
  const bool vec = (width % 8 == 0) && dev::aligned16(x);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * width;
    T* yr = y + r * width;
    float ss = 0.0f;
    if (vec) {
      for (int64_t i = int64_t(threadIdx.x) * 8; i < width; i += int64_t(blockDim.x) * 8) {
        float v[8];
        dev::load8<T>(xr + i, v);
        dev::smem_store8(row + i, v);
#pragma unroll
        for (int j = 0; j < 8; ++j) ss += v[j] * v[j];
      }
    } else {
      for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
        const float v = dev::to_f(xr[i]);
        row[i] = v;
        ss += v * v;
      }
    }
    // block_sum ends with a barrier, so every thread sees the whole row afterwards.
    const float rs = 1.0f / sqrtf(dev::block_sum(ss, scratch) / float(width) + eps);
    auto norm = [&](int64_t i) {
      float n = dev::round_as<T>(row[i] * rs);
      if (weight) n = dev::round_as<T>(n * dev::to_f(weight[i]));
      return n;
    };
    if constexpr (kRope) {
      const int64_t s = r % seq;
      const float* c = cos + s * head_dim;
      const float* sn = sin + s * head_dim;
      for (int64_t p = threadIdx.x; p < width / 2; p += blockDim.x) {
        const int64_t i = 2 * p;
        const float2 v = *reinterpret_cast<const float2*>(row + i);  // i even: 8-byte aligned
        float n1 = dev::round_as<T>(v.x * rs), n2 = dev::round_as<T>(v.y * rs);
        if (weight) {
          n1 = dev::round_as<T>(n1 * dev::to_f(weight[i]));
          n2 = dev::round_as<T>(n2 * dev::to_f(weight[i + 1]));
        }
        float y1, y2;
        rotate(n1, n2, c, sn, i % head_dim, y1, y2);
        if constexpr (sizeof(T) == 2) {
          *reinterpret_cast<__nv_bfloat162*>(yr + i) = __floats2bfloat162_rn(y1, y2);
        } else {
          *reinterpret_cast<float2*>(yr + i) = make_float2(y1, y2);
        }
      }
    } else {
      for (int64_t i = threadIdx.x; i < width; i += blockDim.x) yr[i] = dev::from_f<T>(norm(i));
    }
    // The output pass reads elements other threads loaded: the next row may overwrite the shared
    // copy only after every thread is done with this one.
    __syncthreads();
  }
}

// The register version of rms_rope_kernel (row_regs.cuh) for rows with a register shape; with
// kRope, head_dim % 8 == 0 so each vector of 8 lies in one head and reads 8 table entries.
// kSameD: threads·8 is a multiple of head_dim, so every vector of a thread sits at the same place
// in its head (5120 = 160 threads × 4 vectors × 8, head_dim 128: column (v·160 + t)·8 ≡ 8·(t % 16))
// and the thread reads its 8 cos and 8 sin entries once per row instead of once per vector: 3.06 ->
// 3.60 TB/s at 720p (results/dit/1xh200/2026-12-01_h200_issue7_runs51-55.json, c392ad7).
template <typename T, typename TW, bool kRope, int V, bool kSameD = false>
__global__ void __launch_bounds__(1024)
    rms_regs_kernel(const T* x, const TW* __restrict__ weight, const float* __restrict__ cos,
                    const float* __restrict__ sin, T* y, int64_t rows, int64_t seq, int64_t width, int64_t head_dim,
                    float eps) {
  __shared__ float scratch[33];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    dev::RowRegs<T, V> row;
    row.load(x + r * width);
    const float ss = dev::row_sum(row, [](float v) { return v * v; });
    const float rs = 1.0f / sqrtf(dev::block_sum(ss, scratch) / float(width) + eps);
    float cs0[8], sn0[8];
    if constexpr (kRope && kSameD) {
      const int64_t t = (r % seq) * head_dim + dev::row_index(0, 0) % head_dim;
      dev::load8<float>(cos + t, cs0);
      dev::load8<float>(sin + t, sn0);
    }
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int64_t c = dev::row_index(i, 0);
      float n[8], w[8];
      row.get(i, n);
#pragma unroll
      for (int j = 0; j < 8; ++j) n[j] = dev::round_as<T>(n[j] * rs);
      if (weight) {
        dev::load8<TW>(weight + c, w);
#pragma unroll
        for (int j = 0; j < 8; ++j) n[j] = dev::round_as<T>(n[j] * w[j]);
      }
      if constexpr (kRope) {
        float cs[8], sn[8], o[8];
        if constexpr (kSameD) {
#pragma unroll
          for (int j = 0; j < 8; ++j) cs[j] = cs0[j], sn[j] = sn0[j];
        } else {
          const int64_t t = (r % seq) * head_dim + c % head_dim;
          dev::load8<float>(cos + t, cs);
          dev::load8<float>(sin + t, sn);
        }
#pragma unroll
        for (int p = 0; p < 8; p += 2) rotate(n[p], n[p + 1], cs, sn, p, o[p], o[p + 1]);
        dev::store8<T>(y + r * width + c, o);
      } else {
        dev::store8<T>(y + r * width + c, n);
      }
    }
  }
}

template <typename T, typename TW>
cudaError_t launch_rms(const void* x, const void* w, const float* cos, const float* sin, void* y, int64_t rows,
                       int64_t seq, int64_t width, int64_t head_dim, float eps, cudaStream_t stream) {
  const bool rope = cos != nullptr;
  int threads = 0, vecs = 0;
  if (dev::row_regs_shape(width, &threads, &vecs) && dev::aligned16(x) && dev::aligned16(y) && dev::aligned16(w) &&
      (!rope || (head_dim % 8 == 0 && dev::aligned16(cos) && dev::aligned16(sin)))) {
    const bool same_d = rope && (int64_t(threads) * 8) % head_dim == 0;
    VGEN_DISPATCH_ROW_V(vecs, V, {
      auto kernel = same_d ? rms_regs_kernel<T, TW, true, V, true>
                           : rope ? rms_regs_kernel<T, TW, true, V> : rms_regs_kernel<T, TW, false, V>;
      kernel<<<dev::row_grid(rows), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<const TW*>(w), cos, sin,
                                           static_cast<T*>(y), rows, seq, width, head_dim, eps);
      return cudaGetLastError();
    });
  }
  const size_t smem = size_t(width + 33) * sizeof(float);
  auto kernel = rope ? rms_rope_kernel<T, TW, true> : rms_rope_kernel<T, TW, false>;
  return dev::launch_smem_rows(kernel, rows, width, smem, stream, static_cast<const T*>(x), static_cast<const TW*>(w),
                               cos, sin, static_cast<T*>(y), rows, seq, width, head_dim, eps);
}

}  // namespace

cudaError_t rope(const void* x, const float* cos, const float* sin, void* y, FloatType type, int64_t batch,
                 int64_t seq, int64_t heads, int64_t head_dim, cudaStream_t stream) {
  if (batch < 0 || seq < 0 || heads < 0 || head_dim < 0 || head_dim % 2 || !cos || !sin) return cudaErrorInvalidValue;
  const int64_t pairs = batch * seq * heads * (head_dim / 2);
  if (pairs == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, T, {
    rope_kernel<T><<<dev::grid_for(pairs, 256), 256, 0, stream>>>(static_cast<const T*>(x), cos, sin,
                                                                    static_cast<T*>(y), pairs, seq, heads, head_dim);
    return cudaGetLastError();
  });
}

cudaError_t rms_norm_rope(const void* x, const void* weight, FloatType w_type, const float* cos, const float* sin,
                          void* y, FloatType type, int64_t batch, int64_t seq, int64_t heads, int64_t head_dim,
                          float eps, cudaStream_t stream) {
  if (batch < 0 || seq < 0 || heads < 0 || head_dim <= 0 || (cos == nullptr) != (sin == nullptr) ||
      (cos && head_dim % 2))
    return cudaErrorInvalidValue;
  const int64_t rows = batch * seq, width = heads * head_dim;
  if (rows == 0 || width == 0) return cudaSuccess;
  // The rotation stores pairs (bf16x2 / float2): y must be aligned to a pair.
  const size_t pair_bytes = type == FloatType::kF32 ? 8 : 4;
  if (cos && reinterpret_cast<uintptr_t>(y) % pair_bytes) return cudaErrorMisalignedAddress;
  if (width + 33 > (int64_t(227) * 1024) / 4) return cudaErrorInvalidValue;  // one row must fit in shared memory
  VGEN_DISPATCH_FB(type, T, {
    VGEN_DISPATCH_FB(w_type, TW, {
      return launch_rms<T, TW>(x, weight, cos, sin, y, rows, seq, width, head_dim, eps, stream);
    });
  });
}

}  // namespace vgen::kern
