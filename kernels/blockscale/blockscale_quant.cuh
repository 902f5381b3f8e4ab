// Quantisation into the block-scaled formats on the device, bit-exact with the references
// (mxfp8_ref.h, nvfp4_ref.h state the numerics): rows of fp32 or bf16 values → packed elements and
// scales in cuBLASLt's 128×4 tiled layout (blockscale_format.h), the operands of linear_blockscale
// (kernels/gemm/gemm_blockscale.cuh). K is padded with zeros to Kp = a multiple of 32 (both
// formats' GEMMs need it; zeros change no scale). Plain CUDA (any compute capability): only the
// GEMM needs Blackwell. One thread per block of 32 (16) values: simple, not tuned (unmeasured).
// Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

inline int64_t blockscale_padded_k(int64_t K) { return (K + 31) / 32 * 32; }

// x [rows, K] (fp32, or bf16 when x_bf16; row stride ldx elements) → q [rows, Kp] e4m3 and
// sf [bs_scales_bytes(rows, Kp/32)] UE8M0, swizzled (padding zero).
cudaError_t mxfp8_quantize(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, uint8_t* q, uint8_t* sf,
                           cudaStream_t stream);

// The NVFP4 tensor scale S (nvfp4_tensor_scale of the finite amax) of all of x → *scale (device).
cudaError_t nvfp4_tensor_scale_device(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, float* scale,
                                      cudaStream_t stream);
// One S per row (the activations' emulation: nvfp4_fake_quant_rows_ref) → scale [rows] (device).
cudaError_t nvfp4_row_scales_device(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, float* scale,
                                    cudaStream_t stream);
// x as above, S at scale[r · scale_stride] (0: one for the tensor, 1: per row) → q [rows, Kp/2]
// packed E2M1 (element 2i in the low nibble), sf [bs_scales_bytes(rows, Kp/16)] e4m3, swizzled.
cudaError_t nvfp4_quantize(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, const float* scale,
                           int64_t scale_stride, uint8_t* q, uint8_t* sf, cudaStream_t stream);

}  // namespace vgen::kern
