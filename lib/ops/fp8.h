// precision fp8 at the Tensor level (docs/fp8.md): a block's switches (passed down by the model),
// the per-output-channel e4m3 weights of a Linear, the CPU emulation (the same
// quantisation, then fp32 math: kernels/gemm/gemm_fp8_ref.h, kernels/attention/attention_fp8_ref.h)
// and the device calls (kernels/quant/quant.cuh, kernels/gemm/gemm_fp8.cuh,
// kernels/attention/attention_fp8.cuh). In a CPU-only build the cuda_* functions throw kUsage.
#pragma once
#include <string>
#include <vector>

#include "config/attention_config.h"
#include "config/precision.h"
#include "config/fp8_config.h"  // Fp8Config: the recipe's settings the models turn into Fp8Switches
#include "core/tensor.h"
#include "ops/device_ops.h"

namespace vgen {

inline DType gemm_format_dtype(GemmFormat f) { return f == GemmFormat::kInt8 ? DType::kI8 : DType::kU8; }

// The block-scaled formats (MXFP8, NVFP4) on the host hold a Linear's weight as what the format
// stores of it, read back in f32 (w8 f32 [N, K], scale ones [N]); their activations are quantised
// and read back the same way at each call (kernels/blockscale/: per 32-value block for MXFP8, per
// 16-value block with one scale per token for NVFP4), then the GEMM is fp32, row by row.

// What one transformer block of a forward computes in fp8 (the model resolves it per block and
// step from its fp8 options and passes it down; the ops take it as an argument).
struct Fp8Switches {
  bool attention = false;  // self-attention through attention_fp8 / attention_fp8_ref
  bool gemm = false;       // the block linears through their e4m3 weights
  bool qk_int8 = false;    // the self-attention's Q·Kᵀ in INT8 (else e4m3; kern::Fp8Qk)
  // Bit i: the model's block linear i stays in the compute dtype although `gemm` is on
  // (fp8_config.bf16_linears; the Wan DiT's order is for_each_fp8_linear's).
  uint8_t bf16_linears = 0;
  // The linears' format (fp8_config.gemm_format): for the weights quantised at their use (host
  // DWDP's staged blocks; the others carry it in their dtype).
  GemmFormat gemm_format = GemmFormat::kE4m3;
  bool any() const { return attention || gemm; }
  bool linear_in_fp8(int i) const { return gemm && !((bf16_linears >> i) & 1u); }
};

// fp8_config.bf16_blocks / bf16_gemm_blocks: whether block i of a model of n blocks is listed
// (indices from 0, negative ones from the end: -1 the last), and the check that every index names a
// block (a recipe error naming `key`[j], e.g. fp8_config.bf16_gemm_blocks[2], otherwise).
bool fp8_bf16_block(const std::vector<int>& blocks, int64_t i, int64_t n);
void fp8_check_bf16_blocks(const std::vector<int>& blocks, int64_t n, const char* key = "fp8_config.bf16_blocks");

// What of block i (of n) runs in fp8 given the two lists (a view: the vectors outlive it): the
// linears unless the block is in either, the self-attention unless it is in bf16_blocks.
struct Fp8BlockLists {
  const std::vector<int>& bf16;       // fp8_config.bf16_blocks: wholly in bf16
  const std::vector<int>& bf16_gemm;  // fp8_config.bf16_gemm_blocks: the linears in bf16
  bool gemm_in_fp8(int64_t i, int64_t n) const { return !fp8_bf16_block(bf16, i, n) && !fp8_bf16_block(bf16_gemm, i, n); }
  bool attention_in_fp8(int64_t i, int64_t n) const { return !fp8_bf16_block(bf16, i, n); }
  // Every index of both lists names a block (a recipe error naming the key and index otherwise).
  void check(int64_t n) const {
    fp8_check_bf16_blocks(bf16, n);
    fp8_check_bf16_blocks(bf16_gemm, n, "fp8_config.bf16_gemm_blocks");
  }
};

// A Linear's weight [N, K] quantised per output channel: w8 [N, K] (device: [N, Kp], see
// cuda_quantize_rows_fp8) u8 e4m3 or i8 INT8, and scale f32 [N] (amax of the row / 448, or / 127;
// a row of zeros has scale 1), w ≈ w8 · scale. On the weight's device: host f32 through
// quantize_rows_fp8_ref / quantize_rows_int8_ref, device bf16/f32 through the kernels.
struct Fp8Weight {
  Tensor w8;
  Tensor scale;
  GemmFormat block = GemmFormat::kMxfp8;  // which block-scaled format an f32 w8 (host) emulates
  bool defined() const { return w8.defined(); }
  GemmFormat format() const {
    return w8.dtype() == DType::kF32 ? block : w8.dtype() == DType::kI8 ? GemmFormat::kInt8 : GemmFormat::kE4m3;
  }
};
Fp8Weight fp8_quantize_weight(const Tensor& w, GemmFormat f = GemmFormat::kE4m3);

// Device: x [..., K] bf16 or f32 → x8 [rows, Kp] (u8: e4m3, i8: INT8, by x8's dtype) and scale
// f32 [rows] (preallocated), one scale per row (a token of an activation, an output channel of a
// weight). Kp = K rounded up to a multiple of 16 (both GEMMs need K % 16 == 0; real DiT widths
// are): columns K..Kp-1 are zeros, which add nothing to a product and change no scale (the tiny
// test models have K = 24).
void cuda_quantize_rows_fp8(const Tensor& x, Tensor& x8, Tensor& scale);
int64_t fp8_padded_k(int64_t K);
// fp8_quantize_weight on the device: w8 [N, Kp] (padded as above), scale [N].
Fp8Weight cuda_quantize_weight(const Tensor& w, GemmFormat f = GemmFormat::kE4m3);
// s [N] f32 times g [N] f32 (fp8_scale_vector): a per-channel gate folded into a weight scale or an
// fp32 bias → new [N] f32.
Tensor cuda_fp8_scale_vector(const Tensor& s, const Tensor& g);

// CPU emulation of an fp8 Linear: x [..., K] host f32 quantised per token in w's format, y =
// (Σ x8·w8)·sx·sw + b in fp32 (e4m3: linear_fp8_prequant_ref; INT8: the exact int32 sum, then the
// same f32 steps; MXFP8 / NVFP4: x quantised and read back, then (Σ x̃·w8)·sw + b row by row)
// → [..., N] f32. b [N] f32 or undefined.
Tensor fp8_linear_host(const Tensor& x, const Fp8Weight& w, const Tensor& b);

// An activation [..., K] quantised per token on the device (quantize_rows_fp8 / _int8): x8 [M, Kp]
// u8 e4m3 or i8 INT8, scale f32 [M], and the activation's shape. One quantisation can serve several
// GEMMs (q, k, v) of its format.
struct Fp8Activation {
  Tensor x8, scale;
  Shape shape;
  GemmFormat format() const { return x8.dtype() == DType::kI8 ? GemmFormat::kInt8 : GemmFormat::kE4m3; }
};
Fp8Activation cuda_quantize_activation(const Tensor& x, GemmFormat f = GemmFormat::kE4m3);

// Device fp8 Linear: x (bf16 or f32 [..., K]) quantised per token in w's format into a scratch
// buffer, then the GEMM of that format with the bias and exact or fp32 accumulation → [..., N] of
// out_dt. e4m3 (linear_fp8): bias bf16 or f32 [N] or undefined, out bf16 or f32. INT8
// (linear_int8): bias bf16 or undefined, out bf16. An activation must be in w's format.
Tensor cuda_linear_fp8(const Tensor& x, const Fp8Weight& w, const Tensor& b, DType out_dt,
                       Activation act = Activation::kNone);
Tensor cuda_linear_fp8(const Fp8Activation& x, const Fp8Weight& w, const Tensor& b, DType out_dt,
                       Activation act = Activation::kNone);
// y += x8·w8ᵀ·sx·scale + b in the GEMM's epilogue (in place; x quantised in w8's format). `scale`
// may differ from w.scale: a gate folded into it (scale·g, with b·g) makes this the gated residual
// update x += g ⊙ (x·Wᵀ + b).
void cuda_linear_fp8_add_(Tensor& y, const Tensor& x, const Tensor& w8, const Tensor& scale, const Tensor& b);

// FP8 attention on the device (workspace from a device tensor): q [B,Sq,H,D], k/v [B,Skv,H,D]
// bf16, out [B,Sq,H,D] bf16 (an f32 out is written through a bf16 copy), lse [B,H,Sq] f32 of the
// true scores or null. Same contract as cuda_attention. The path is the path table's
// (device_fp8_attention_path for `backend`, attention_config.backend): the own sm_90a kernel
// (attention_fwd_fp8; qk_int8: Q·Kᵀ in INT8, else e4m3) or cuDNN's FP8 SDPA
// (attention_fwd_cudnn_fp8; e4m3 only). A device neither runs is a kUsage error.
void cuda_attention_fp8(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                        int64_t num_valid_kv, float scale, bool qk_int8 = false,
                        AttentionBackend backend = AttentionBackend::kAuto);
// cuDNN's FP8 SDPA alone (tests; same contract; kUsage where cuDNN does not serve the call).
void cuda_attention_cudnn_fp8(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                              int64_t num_valid_kv, float scale);
// The fp8 self-attention on the host (the CPU emulation) as the device path `backend` selects it:
// cudnn → attention_cudnn_fp8_ref (e4m3 output, as on the H100), else attention_fp8_ref (the own
// kernel's numerics, qk_int8 its Q·Kᵀ format). Host f32 q/k/v/out [.., H, D], lse [B,H,Sq] or null.
void fp8_attention_host(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                        int64_t num_valid_kv, float scale, bool qk_int8, AttentionBackend backend);

// Whether the current CUDA device has FP8 tensor cores this build drives (attention_fp8_available:
// compute capability 9.0 with the build's sm_90a code); *gpu gets the device's name and compute
// capability, e.g. "NVIDIA A100-SXM4-80GB (compute capability 8.0)". False without the backend.
bool cuda_fp8_available(std::string* gpu);
// Whether the current device runs precision `p` (fp8 or fp4) with the switches f, as the path table
// decides (ops/path_table.h), and the DiT's device forward drives the GEMMs it chose (the
// block-scaled ones, MXFP8 and NVFP4, it does not yet: kernels/blockscale/ has them, unmeasured);
// *gpu as cuda_fp8_available's, with the reason on a GPU of compute capability 9.0, 10.x or 12.x
// and wherever fp8_config.scaling block was asked for.
// `backend` (attention_config.backend) picks the fp8 self-attention's path as the dispatch does.
bool cuda_precision_available(Precision p, const Fp8Config& f, std::string* gpu,
                              AttentionBackend backend = AttentionBackend::kAuto);

}  // namespace vgen
