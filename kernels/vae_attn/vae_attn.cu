// Per-frame single-head attention of the Wan VAE (contract in vae_attn.cuh): two cuBLAS GEMMs
// around an fp32 row softmax, in query blocks.
#include <cfloat>
#include <string>

#include "kernels/common/blas_handle.cuh"
#include "kernels/common/elem_io.cuh"
#include "kernels/vae_attn/vae_attn.cuh"

namespace vgen::kern {
namespace {

using dev::bf16;

thread_local std::string t_error;

cudaError_t fail(cudaError_t e, std::string msg) {
  t_error = std::move(msg);
  return e;
}

size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

int64_t rows_per_block(const VaeAttnArgs& a) {
  return a.block_rows > 0 && a.block_rows < a.Sq ? a.block_rows : a.Sq;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Max over the block; `scratch` holds 33 floats.
__device__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float m = lane < nwarps ? scratch[lane] : -FLT_MAX;
    m = warp_max(m);
    if (lane == 0) scratch[32] = m;
  }
  __syncthreads();
  return scratch[32];
}

template <typename TP>
__global__ void softmax_kernel(const float* s, TP* p, int64_t rows, int64_t n) {
  __shared__ float scratch[33];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* sr = s + r * n;
    TP* pr = p + r * n;
    float m = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, sr[j]);
    m = block_max(m, scratch);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += expf(sr[j] - m);
    sum = dev::block_sum(sum, scratch);
    const float inv = 1.0f / sum;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) pr[j] = dev::from_f<TP>(expf(sr[j] - m) * inv);
  }
}

}  // namespace

const char* vae_attention_last_error() { return t_error.c_str(); }

cudaError_t vae_softmax_rows(const float* s, void* p, FloatType p_type, int64_t rows, int64_t n, cudaStream_t stream) {
  if (rows < 0 || n < 0) return cudaErrorInvalidValue;
  if (rows == 0 || n == 0) return cudaSuccess;
  const unsigned grid = unsigned(rows < 65535 * 16 ? rows : 65535 * 16);
  VGEN_DISPATCH_FB(p_type, T, {
    softmax_kernel<T><<<grid, 256, 0, stream>>>(s, static_cast<T*>(p), rows, n);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

size_t vae_attention_workspace(const VaeAttnArgs& a) {
  const size_t cells = size_t(rows_per_block(a)) * size_t(a.Skv);
  size_t b = align256(cells * 4);
  if (a.type == FloatType::kBF16) b += align256(cells * 2);
  return b;
}

cudaError_t vae_attention(const VaeAttnArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (a.type != FloatType::kF32 && a.type != FloatType::kBF16) return fail(cudaErrorInvalidValue, "vae_attention: type");
  if (a.Sq < 0 || a.Skv < 1 || a.D < 1) return fail(cudaErrorInvalidValue, "vae_attention: empty keys or head dim");
  if (a.Sq == 0) return cudaSuccess;
  if (!a.q || !a.k || !a.v || !a.out) return fail(cudaErrorInvalidValue, "vae_attention: null pointer");
  const int64_t ldq = a.ldq ? a.ldq : a.D, ldk = a.ldk ? a.ldk : a.D, ldv = a.ldv ? a.ldv : a.D;
  const int64_t ldo = a.ldo ? a.ldo : a.D;
  if (ldq < a.D || ldk < a.D || ldv < a.D || ldo < a.D) return fail(cudaErrorInvalidValue, "vae_attention: stride < D");
  const size_t need = vae_attention_workspace(a);
  if (!workspace || workspace_bytes < need)
    return fail(cudaErrorInvalidValue, "vae_attention: workspace of " + std::to_string(workspace_bytes) +
                                           " bytes, needs " + std::to_string(need));
  cublasHandle_t h = blas_handle(stream);
  if (!h) return fail(cudaErrorNotSupported, std::string("vae_attention: ") + blas_last_error());
  const bool f32 = a.type == FloatType::kF32;
  const cudaDataType_t t = f32 ? CUDA_R_32F : CUDA_R_16BF;
  const size_t es = f32 ? 4 : 2;
  const int64_t R = rows_per_block(a);
  float* S = static_cast<float*>(workspace);
  void* P = f32 ? workspace : static_cast<char*>(workspace) + align256(size_t(R) * size_t(a.Skv) * 4);
  const float zero = 0.0f, one = 1.0f;
  for (int64_t r0 = 0; r0 < a.Sq; r0 += R) {
    const int64_t rows = r0 + R <= a.Sq ? R : a.Sq - r0;
    const void* q = static_cast<const char*>(a.q) + size_t(r0 * ldq) * es;
    void* o = static_cast<char*>(a.out) + size_t(r0 * ldo) * es;
    // Sᵀ (column-major [Skv × rows]) = K · Qᵀ, scaled.
    cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(a.Skv), int(rows), int(a.D), &a.scale, a.k, t,
                                    int(ldk), q, t, int(ldq), &zero, S, CUDA_R_32F, int(a.Skv), CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      return fail(cudaErrorUnknown, std::string("vae_attention: scores GEMM: ") + blas_status_name(s));
    const cudaError_t e = vae_softmax_rows(S, P, a.type, rows, a.Skv, stream);
    if (e != cudaSuccess) return fail(e, "vae_attention: softmax launch");
    // Oᵀ (column-major [D × rows]) = Vᵀ · Pᵀ.
    s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(a.D), int(rows), int(a.Skv), &one, a.v, t, int(ldv), P, t,
                     int(a.Skv), &zero, o, t, int(ldo), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      return fail(cudaErrorUnknown, std::string("vae_attention: PV GEMM: ") + blas_status_name(s));
  }
  return cudaSuccess;
}

}  // namespace vgen::kern
