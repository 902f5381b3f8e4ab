// CPU reference GEMM (fp32, OpenBLAS): the CUDA launcher in gemm.cuh has the same contract.
#pragma once
#include <cstdint>

namespace vgen::kern {

// y[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N]); PyTorch Linear layout. bias may be null.
void linear_ref(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K);

// c[M,N] = alpha · a[M,K] · b (b is [K,N] if !trans_b, else [N,K]) + beta · c.
void matmul_ref(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K, bool trans_b,
                float alpha = 1.0f, float beta = 0.0f);

}  // namespace vgen::kern
