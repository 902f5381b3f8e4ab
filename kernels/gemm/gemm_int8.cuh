// INT8 W8A8 GEMM for linear layers on Hopper (sm_90a), a kernel of this project (no cuBLASLt: it
// has no INT8 form with both per-row scales and a bf16 output,
// results/gemm/1xh200/2026-12-02_1xh200_int8_gemm_probes.json).
// Contract (row-major, PyTorch Linear layout; CPU reference gemm_int8_ref.h, the same f32 steps):
//   acc[m,n] = Σ_k x8[m,k]·w8[n,k]                  int32, exact (|acc| ≤ K·2^14 < 2^31)
//   v = (float(acc) · x_scale[m]) · w_scale[n]      two f32 roundings, in this order
//   v = v + bias[n]                                 bf16 bias read as f32; no add when bias is null
//   v = gelu_tanh(v)                                act kGeluTanh (gemm.cuh): 0.5·v·(1 + tanh(c·(v + 0.044715·v³))),
//                                                   c = 0.7978845608028654, each step an f32 op
//   v = v + residual[m,n]                           bf16 residual read as f32; not with act
//   y[m,n] = bf16(v)                                round to nearest even
// Every f32 step is one IEEE operation rounded to nearest (no FMA contraction), so y equals the
// reference bit for bit but for GELU, where device and host tanhf may differ by an f32 ulp.
// Kernel (measured as the "plain" variant of docs/notes/probes/int8_gemm_wgmma_probe.cu,
// results/gemm/1xh200/2026-12-02_1xh200_int8_gemm_wgmma_probe.json): persistent (one CTA per SM),
// CTA tile 128 × 256, K slabs of 128 bytes in 4 TMA stages, one producer warp, two consumer warpgroups of
// m64n256k32 s8 wgmma, the epilogue from registers while the producer prefetches the next tile.
// Any M, N and K % 16 == 0: TMA zero-fills rows past M or N and the K tail of the last slab.
// Column modes of the epilogue: N % 256 == 0 with w_scale 8-byte and bias 4-byte aligned (every
// tile full in N, the DiT widths): no column guards, the probe's epilogue; else stores, scale and
// bias loads are guarded (one access per column pair where N is even and those alignments hold;
// else column by column). Same values in every mode. Requirements, else cudaErrorInvalidValue
// and nothing launched: M, N, K > 0, M and N at most 2^31 − 512, K < 2^17 and a multiple of 16
// (the TMA row pitch); x8, w8 16-byte aligned; y and residual 4-byte aligned; x8, x_scale, w8,
// w_scale, y non-null; not act and residual together. cudaErrorNotSupported on a device that is
// not sm_90 or a build without sm_90a code (the caller falls back). Tensor maps are encoded per
// call (host, microseconds). Thread-safe; never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm/gemm.cuh"

namespace vgen::kern {

struct Int8LinearArgs {
  const int8_t* x8 = nullptr;  // [M, K] dense
  const float* x_scale = nullptr;  // [M]
  const int8_t* w8 = nullptr;  // [N, K] dense
  const float* w_scale = nullptr;  // [N]
  const void* bias = nullptr;  // [N] bf16, or null
  void* y = nullptr;  // [M, N] bf16 dense; must not alias x8 or w8
  // [M, N] bf16 dense added to the result; may be y (in place), must not otherwise overlap it.
  const void* residual = nullptr;
  int64_t M = 0, N = 0, K = 0;
  GemmAct act = GemmAct::kNone;
};

// Whether the current device runs linear_int8 (sm_90 with this build's sm_90a code).
bool linear_int8_available();

// Queues the GEMM on `stream` (current device).
cudaError_t linear_int8(const Int8LinearArgs& args, cudaStream_t stream);

}  // namespace vgen::kern
