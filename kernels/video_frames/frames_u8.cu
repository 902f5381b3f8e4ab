#include <cuda_bf16.h>

#include "kernels/video_frames/frames_u8.cuh"

namespace vgen::kern {

namespace {

// __fmul_rn / __fadd_rn: one rounding each, never contracted, as the reference.
__device__ __forceinline__ uint8_t value_u8(float v) {
  float x = __fadd_rn(__fmul_rn(v, 0.5f), 0.5f);
  x = x != x ? 0.0f : fminf(fmaxf(x, 0.0f), 1.0f);
  return uint8_t(__fmul_rn(x, 255.0f));
}

__device__ __forceinline__ float load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }

// One thread per pixel: reads its C channel planes (coalesced along the pixels), writes C bytes.
template <typename T>
__global__ void frames_u8_kernel(const T* video, uint8_t* frames, int64_t C, int64_t plane) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < plane; i += int64_t(gridDim.x) * blockDim.x)
    for (int64_t c = 0; c < C; ++c) frames[i * C + c] = value_u8(load(video, c * plane + i));
}

}  // namespace

cudaError_t video_frames_u8(const void* video, FloatType type, uint8_t* frames, int64_t C, int64_t F, int64_t H,
                            int64_t W, cudaStream_t stream) {
  const int64_t plane = F * H * W;
  if (plane == 0 || C == 0) return cudaSuccess;
  if (type == FloatType::kF16) return cudaErrorInvalidValue;
  const int threads = 256;
  const int64_t blocks = (plane + threads - 1) / threads;
  const unsigned grid = unsigned(blocks < 65536 * 8 ? blocks : 65536 * 8);
  if (type == FloatType::kF32)
    frames_u8_kernel<<<grid, threads, 0, stream>>>(static_cast<const float*>(video), frames, C, plane);
  else
    frames_u8_kernel<<<grid, threads, 0, stream>>>(static_cast<const __nv_bfloat16*>(video), frames, C, plane);
  return cudaGetLastError();
}

}  // namespace vgen::kern
