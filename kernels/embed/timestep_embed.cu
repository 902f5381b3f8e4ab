// Sinusoidal timestep embedding on the device (contract in timestep_embed.cuh). The same fp32
// operation order as the CPU reference: exponent = (−ln(P)·k) / (half − shift), exp, t·freq.
#include <cmath>

#include "kernels/embed/timestep_embed.cuh"

namespace vgen::kern {
namespace {

__global__ void timestep_kernel(const float* t, float* out, int64_t n, int64_t dim, bool flip, float neg_log_p,
                                float denom) {
  const int64_t half = dim / 2;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n * half; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / half, k = e % half;
    const float freq = expf((neg_log_p * float(k)) / denom);
    const float a = t[i] * freq;
    const float s = sinf(a), c = cosf(a);
    float* o = out + i * dim;
    o[k] = flip ? c : s;
    o[half + k] = flip ? s : c;
    if (k == 0 && dim % 2) o[dim - 1] = 0.0f;
  }
}

}  // namespace

cudaError_t timestep_embedding(const float* t, float* out, int64_t n, int64_t dim, bool flip_sin_to_cos,
                               float freq_shift, float max_period, cudaStream_t stream) {
  if (n < 0 || dim < 0) return cudaErrorInvalidValue;
  if (n == 0 || dim == 0) return cudaSuccess;
  if (dim == 1) return cudaMemsetAsync(out, 0, size_t(n) * sizeof(float), stream);  // only the zero column
  const int64_t work = n * (dim / 2);
  const float neg_log_p = float(-std::log(double(max_period)));
  const float denom = float(dim / 2) - freq_shift;
  int64_t blocks = (work + 255) / 256;
  if (blocks > 65535) blocks = 65535;
  timestep_kernel<<<unsigned(blocks), 256, 0, stream>>>(t, out, n, dim, flip_sin_to_cos, neg_log_p, denom);
  return cudaGetLastError();
}

}  // namespace vgen::kern
