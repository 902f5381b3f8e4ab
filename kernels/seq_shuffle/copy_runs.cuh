// Device copy of a 3-D grid of contiguous byte runs: the pack/unpack permutations of the
// sequence-parallel attentions (lib/parallel/seq_shuffle.cpp) on device tensors of any dtype.
// Run (i, j, l) of `run_bytes` bytes starts at src + i·ss[0] + j·ss[1] + l·ss[2] (strides in
// bytes) and goes to dst + i·ds[0] + j·ds[1] + l·ds[2]. Runs must not overlap between src and dst.
// Uses 16-, 8-, 4-byte or 1-byte units, the widest that every pointer, stride and the run length
// allow. Queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

cudaError_t copy_runs(const void* src, void* dst, const int64_t (&dims)[3], const int64_t (&src_strides)[3],
                      const int64_t (&dst_strides)[3], int64_t run_bytes, cudaStream_t stream);

}  // namespace vgen::kern
