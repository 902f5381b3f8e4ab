// The VAE's conv weights from the checkpoint layout [Cout, Cin, taps] (taps = kt·kh·kw) to the
// channels-last layout of the device convs [Cout_store, taps, Cin], rows Cout..Cout_store-1 zero
// (conv_out's few channels padded for cuDNN's tensor-core engines). Raw device pointers, launches
// on `stream`; CPU reference in conv_weight_ref.cpp. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

struct ConvWeightDims {
  int64_t cout = 0, cout_store = 0, cin = 0, taps = 1;
};

// dst[co, t, ci] = src[co, ci, t] (co < cout), 0 otherwise; src f32, dst f32 / bf16 / f16.
cudaError_t conv_weight_taps_last(const float* src, void* dst, FloatType dst_type, const ConvWeightDims& d,
                                  cudaStream_t stream);

}  // namespace vgen::kern
