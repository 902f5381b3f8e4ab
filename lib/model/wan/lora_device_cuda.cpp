// LoRA merge into the device weights (model/wan/lora.h): per tensor, the fp32 product B·A of a
// device GEMM (no TF32), then one rounding of weight + factor·product into the weight's dtype
// (kernels/lora/lora_merge.cuh); several contributions are first added up in fp32. A single update
// with bf16 factors (packed, LoraSet) is one GEMM whose fp32 epilogue adds it to the weight. All is
// queued on the compute stream, so it runs before the model's first kernel.
#include <cuda_runtime.h>

#include "core/cuda_stream.h"
#include "kernels/lora/lora_merge.cuh"
#include "model/wan/lora.h"
#include "ops/device_ops.h"

namespace vgen {
namespace {

void add_scaled(Tensor& dst, const Tensor& src, float factor, const std::string& what) {
  VGEN_ASSERT(dst.numel() == src.numel() && src.dtype() == DType::kF32 && !src.is_cpu(),
              "LoRA merge of '{}': {} += {}", what, dst.str(), src.str());
  VGEN_CHECK(dst.dtype() == DType::kF32 || dst.dtype() == DType::kBF16, ExitCode::kInternal,
             "LoRA merge of '{}': device weight {} is neither f32 nor bf16", what, dst.str());
  const kern::FloatType t = dst.dtype() == DType::kF32 ? kern::FloatType::kF32 : kern::FloatType::kBF16;
  const cudaError_t e = kern::lora_add_scaled(dst.raw(), t, src.f32(), factor, dst.numel(), compute_stream());
  VGEN_CHECK(e == cudaSuccess, ExitCode::kInternal, "LoRA merge of '{}' failed: {}", what, cudaGetErrorString(e));
}

// down [r, in] → its transpose [in, r] on the host (the GEMM's w operand of x·wᵀ).
Tensor transposed(const Tensor& down) {
  const int64_t r = down.dim(0), in = down.dim(1);
  Tensor t = Tensor::empty({in, r}, DType::kF32);  // [in, r]
  const float* s = down.f32();
  float* d = t.f32();
#pragma omp parallel for schedule(static) if (in * r > (int64_t(1) << 16))
  for (int64_t j = 0; j < in; ++j)
    for (int64_t i = 0; i < r; ++i) d[j * r + i] = s[i * in + j];
  return t;
}

}  // namespace

void merge_lora_device(WanTransformerWeights& w, const std::vector<LoraAdapter>& adapters, const Tensor* packed) {
  // Packed factors: one upload (LoraSet); every product below is then a view of it.
  const Tensor dev = packed && packed->defined() ? packed->to(Device::kCUDA) : Tensor();  // [total] bf16 or f32
  auto packed_views = [&](const LoraContribution& c) {
    const int64_t out = c.up->dim(0), r = c.up->dim(1), in = c.down->dim(1);
    return std::pair<Tensor, Tensor>(dev.narrow(c.packed_up, out * r).reshape({out, r}),         // up [out, r]
                                     dev.narrow(c.packed_down_t, in * r).reshape({in, r}));      // downᵀ [in, r]
  };
  for (const LoraSlotUpdate& s : lora_slot_updates(adapters)) {
    const std::string what = s.module + (s.bias ? ".bias" : ".weight");
    Tensor* slot = lora_weight_slot(w, s.module, s.bias);
    VGEN_CHECK(slot && slot->defined() && !slot->is_cpu(), ExitCode::kInternal,
               "LoRA merge: '{}' has no device tensor (DWDP keeps only slices of the blocks)", what);
    const LoraContribution& first = s.parts[0];
    if (s.parts.size() == 1 && first.up && dev.defined() && first.packed_up >= 0 && dev.dtype() == DType::kBF16) {
      // One GEMM, W += factor · up · down, summed in its fp32 epilogue and rounded once.
      auto [up, down_t] = packed_views(first);
      cuda_linear_add_(*slot, up, down_t, Tensor(), first.factor);
      continue;
    }
    // One contribution in fp32 on the device: up [out, r] · down [r, in] → [out, in], or the difference.
    auto product = [&](const LoraContribution& c) {
      if (!c.up) return c.diff->to(Device::kCUDA);
      if (dev.defined() && c.packed_up >= 0) {
        auto [up, down_t] = packed_views(c);
        return cuda_linear(up, down_t, Tensor(), DType::kF32);  // [out, in]
      }
      Tensor up = c.up->to(Device::kCUDA);                    // [out, r]
      Tensor down_t = transposed(*c.down).to(Device::kCUDA);  // [in, r]
      return cuda_linear(up, down_t, Tensor(), DType::kF32);  // [out, in]
    };
    if (s.parts.size() == 1) {
      add_scaled(*slot, product(first), first.factor, what);
    } else {
      Tensor sum = Tensor::zeros({slot->numel()}, DType::kF32, Device::kCUDA);  // the adapters' updates in fp32
      for (const LoraContribution& c : s.parts) add_scaled(sum, product(c), c.factor, what);
      add_scaled(*slot, sum, 1.0f, what);
    }
  }
  sync_compute_stream();  // the host copies of A and B (and the packed upload) are released on return
}

}  // namespace vgen
