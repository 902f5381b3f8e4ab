// LoRA merge into the device weights (model/wan/dit/lora.h), from the factors packed on the host and
// uploaded in one piece (LoraSet): a single update with bf16 factors is one GEMM whose fp32 epilogue
// adds factor·B·A to the weight (one rounding); otherwise, per tensor, the fp32 product B·A of a
// device GEMM (no TF32) and one rounding of weight + factor·product into the weight's dtype
// (kernels/lora/lora_merge.cuh), several contributions first added up in fp32. All is queued on the
// compute stream, so it runs before the model's first kernel.
#include <cuda_runtime.h>

#include "core/cuda_stream.h"
#include "kernels/lora/lora_merge.cuh"
#include "model/wan/dit/lora.h"
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

}  // namespace

void merge_lora_device(WanTransformerWeights& w, const std::vector<LoraAdapter>& adapters, const Tensor& packed) {
  // The packed factors: one upload (LoraSet); every product below is then a view of it.
  const Tensor dev = packed.defined() ? packed.to(Device::kCUDA) : Tensor();  // [total] bf16 or f32
  auto packed_views = [&](const LoraContribution& c) {
    VGEN_CHECK(dev.defined() && c.packed_up >= 0 && c.packed_down_t >= 0, ExitCode::kInternal,
               "LoRA merge: a low-rank update's factors are not packed (pack_lora_factors)");
    const int64_t out = c.up->dim(0), r = c.up->dim(1), in = c.down->dim(1);
    return std::pair<Tensor, Tensor>(dev.narrow(c.packed_up, out * r).reshape({out, r}),     // up [out, r]
                                     dev.narrow(c.packed_down_t, in * r).reshape({in, r}));  // downᵀ [in, r]
  };
  for (const LoraSlotUpdate& s : lora_slot_updates(adapters)) {
    const std::string what = s.module + (s.bias ? ".bias" : ".weight");
    Tensor* slot = lora_weight_slot(w, s.module, s.bias);
    VGEN_CHECK(slot && slot->defined() && !slot->is_cpu(), ExitCode::kInternal,
               "LoRA merge: '{}' has no device tensor (DWDP keeps only slices of the blocks)", what);
    const LoraContribution& first = s.parts[0];
    if (s.parts.size() == 1 && first.up && dev.defined() && dev.dtype() == DType::kBF16) {
      // One GEMM, W += factor · up · down, summed in its fp32 epilogue and rounded once.
      auto [up, down_t] = packed_views(first);
      cuda_linear_add_(*slot, up, down_t, Tensor(), first.factor);
      continue;
    }
    // One contribution in fp32 on the device: up [out, r] · down [r, in] → [out, in], or the difference.
    auto product = [&](const LoraContribution& c) {
      if (!c.up) return c.diff->to(Device::kCUDA);
      auto [up, down_t] = packed_views(c);
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
  sync_compute_stream();  // the packed upload is released on return
}

}  // namespace vgen
