// Reductions on the device (contracts in reduce.cuh): kBlocks blocks stride over chunks of 8
// elements (16-byte loads when aligned), each thread sums in double, a block tree writes one
// partial pair, and a single block adds the partials in a fixed tree.
#include "kernels/common/elem_io.cuh"
#include "kernels/reduce/reduce.cuh"

namespace vgen::kern {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = int(kAbsDiffWorkspace / 2);

// Tree sum of one value per thread over the block (fixed order); the result in thread 0.
__device__ __forceinline__ void block_sum2(double (*sh)[2], double d, double r) {
  sh[threadIdx.x][0] = d;
  sh[threadIdx.x][1] = r;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (int(threadIdx.x) < s) {
      sh[threadIdx.x][0] += sh[threadIdx.x + s][0];
      sh[threadIdx.x][1] += sh[threadIdx.x + s][1];
    }
    __syncthreads();
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) abs_diff_partials(const T* a, const T* b, int64_t n, bool vec,
                                                              double* partial) {
  __shared__ double sh[kThreads][2];
  const int64_t tid = int64_t(blockIdx.x) * kThreads + threadIdx.x, step = int64_t(kBlocks) * kThreads;
  double d = 0.0, r = 0.0;
  int64_t done = 0;
  if (vec) {
    for (int64_t c = tid; c < n / 8; c += step) {
      float va[8], vb[8];
      dev::load8<T>(a + 8 * c, va);
      dev::load8<T>(b + 8 * c, vb);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        d += fabs(double(va[j]) - double(vb[j]));
        r += fabs(double(vb[j]));
      }
    }
    done = n / 8 * 8;
  }
  for (int64_t i = done + tid; i < n; i += step) {
    const double x = dev::to_f(a[i]), y = dev::to_f(b[i]);
    d += fabs(x - y);
    r += fabs(y);
  }
  block_sum2(sh, d, r);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = sh[0][0];
    partial[2 * blockIdx.x + 1] = sh[0][1];
  }
}

__global__ void __launch_bounds__(kThreads) abs_diff_final(const double* partial, float* out) {
  __shared__ double sh[kThreads][2];
  double d = 0.0, r = 0.0;
  for (int i = threadIdx.x; i < kBlocks; i += kThreads) d += partial[2 * i], r += partial[2 * i + 1];
  block_sum2(sh, d, r);
  if (threadIdx.x == 0) out[0] = float(sh[0][0]), out[1] = float(sh[0][1]);
}

}  // namespace

cudaError_t abs_diff_sums(const void* a, const void* b, FloatType type, int64_t n, double* workspace, float* out,
                          cudaStream_t stream) {
  if (n < 0 || !workspace || !out || (n > 0 && (!a || !b))) return cudaErrorInvalidValue;
  const bool vec = dev::aligned16(a) && dev::aligned16(b);
  VGEN_DISPATCH_FB(type, T, {
    abs_diff_partials<T><<<kBlocks, kThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b), n, vec,
                                                           workspace);
  });
  abs_diff_final<<<1, kThreads, 0, stream>>>(workspace, out);
  return cudaGetLastError();
}

}  // namespace vgen::kern
