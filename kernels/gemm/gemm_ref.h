// CPU reference GEMM (fp32, OpenBLAS): the CUDA launcher in gemm.cuh has the same contract.
#pragma once
#include <cstdint>

namespace vgen::kern {

// y[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N]); PyTorch Linear layout. bias may be null.
void linear_ref(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K);

// linear_ref one row at a time (a GEMV each): a row's result does not depend on the rows computed
// with it. OpenBLAS's Haswell and Zen sgemm kernels round a row differently by its position in the
// call and by the call's row count (Sandybridge and SkylakeX do not), so only this form makes a mesh
// that splits the rows match one rank bit for bit on every host.
void linear_rows_ref(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K);

// c[M,N] = alpha · a[M,K] · b (b is [K,N] if !trans_b, else [N,K]) + beta · c.
void matmul_ref(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K, bool trans_b,
                float alpha = 1.0f, float beta = 0.0f);

}  // namespace vgen::kern
