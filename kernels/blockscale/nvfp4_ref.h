// NVFP4 on the host (NVIDIA's two-level scaling for Blackwell's FP4 tensor cores): E2M1 elements
// (blockscale_format.h), one E4M3 scale per 16 consecutive elements of a row (along K) and one fp32
// scale per tensor.
//   tensor: S = 448·6 / amax_t (amax_t over the tensor's finite values; S = 1 when amax_t is 0, below
//           kFp8MinAmax or not finite), so every block scale fits E4M3;
//   block:  s = e4m3(amax_b / 6 · S) (round to nearest even, saturating), stored;
//   element: c = e2m1(v · (S / e4m3⁻¹(s))) (round to nearest even, saturating to ±6; 0 when s reads 0);
//   read back: v ≈ e2m1⁻¹(c) · e4m3⁻¹(s) / S. The GEMM takes 1/S_a · 1/S_b as its alpha.
// Special values: a block holding a NaN or an Inf gets the NaN scale (e4m3 0x7F) and zero elements,
// so it reads back NaN (E2M1 has neither); such values do not count in amax_t, so one bad value
// does not change the rest of the tensor. A block of zeros has scale 0 and zero elements. The
// last block of a row may be short (K % 16). Elements are packed two a byte, element 2i in the low
// nibble (cuBLASLt's CUDA_R_4F_E2M1); scales plain [rows, ceil(K/16)] here (swizzle_scales_ref).
#pragma once
#include <cstdint>

namespace vgen::kern {

inline int64_t nvfp4_kblocks(int64_t K) { return (K + 15) / 16; }
inline int64_t nvfp4_row_bytes(int64_t K) { return (K + 1) / 2; }

// The largest finite magnitude of x [n] (0 when none).
float finite_amax_ref(const float* x, int64_t n);
// The tensor scale S of a tensor whose largest finite magnitude is amax_t.
float nvfp4_tensor_scale(float amax_t);

// x [rows, K] f32 (row stride ldx), tensor scale S → q [rows, nvfp4_row_bytes(K)] packed E2M1,
// scales [rows, nvfp4_kblocks(K)] E4M3.
void nvfp4_quantize_ref(const float* x, int64_t rows, int64_t K, int64_t ldx, float tensor_scale, uint8_t* q,
                        uint8_t* scales);
void nvfp4_dequantize_ref(const uint8_t* q, const uint8_t* scales, float tensor_scale, int64_t rows, int64_t K,
                          float* x);
// Quantise (with the tensor scale of x itself) and read back in place: x [rows, K] dense becomes
// what NVFP4 stores of it (the CPU emulation of a weight).
void nvfp4_fake_quant_ref(float* x, int64_t rows, int64_t K);
// The same with each row its own tensor scale (the CPU emulation of an activation, one row a
// token: a token's values then never depend on which tokens share its rank or call, so every mesh
// computes what one rank does; the device applies the rows' 1/S after the GEMM).
void nvfp4_fake_quant_rows_ref(float* x, int64_t rows, int64_t K);

}  // namespace vgen::kern
