// Device 3-D convolution (contract in conv3d.cuh): backend dispatch and the per-tap GEMM fallback.
//
// Fallback layout trick (the CPU reference's, channels-last): x is copied into a zero-padded
// P [N·Ti, Hp, Wp, Cin] (plus kw zero rows of slack), and for each output frame the output is
// computed over the padded width, Acc[ho·Wp + wo, :] for wo < Wp, so that each tap (dt, dh, dw) is
// one GEMM whose input rows are a contiguous run of P shifted by (dt·Hp + dh)·Wp + dw rows:
//   Acc[M = Ho·Wp, Cout] += P_shift[M, Cin] · W_tap[Cout, Cin]ᵀ     (fp32 accumulation)
// batched over the output frames. The last kw−1 columns of each row are discarded by the final
// crop, which also adds the bias and rounds into y. A spatial stride s reads every s-th row of P
// (GEMM column m = ho·Wp + wo at row offset s·m: the padded-width trick still holds, with (s − 1)·Wp
// more rows of slack); a temporal stride steps the batch by stride_t input frames.
#include <atomic>
#include <type_traits>
#include <string>

#include "kernels/common/blas_handle.cuh"
#include "kernels/common/elem_io.cuh"
#include "kernels/conv3d/conv3d.cuh"

namespace vgen::kern {
namespace {

using dev::bf16;

thread_local std::string t_error;
std::atomic<uint64_t> g_cudnn_calls{0}, g_gemm_calls{0};

constexpr int kThreads = 256;

size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

struct GemmLayout {
  int64_t Hp, Wp, taps;
  size_t p_elems, acc_elems, p_bytes, acc_bytes;
};

GemmLayout gemm_layout(const Conv3dArgs& a) {
  GemmLayout g;
  g.Hp = a.Hi + a.pad.top + a.pad.bottom;
  g.Wp = a.Wi + a.pad.left + a.pad.right;
  g.taps = a.kt * a.kh * a.kw;
  g.p_elems = size_t((a.N * a.Ti * g.Hp * g.Wp + (a.stride_s - 1) * g.Wp + a.kw) * a.Cin);
  g.acc_elems = size_t(a.N * a.To() * a.Ho() * g.Wp * a.Cout);
  g.p_bytes = align256(g.p_elems * (a.type == FloatType::kF32 ? 4 : 2));
  g.acc_bytes = align256(g.acc_elems * 4);
  return g;
}

template <typename T>
__global__ void pad_kernel(const T* x, T* p, int64_t frames, int64_t Hi, int64_t Wi, int64_t Hp, int64_t Wp,
                           int64_t top, int64_t left, int64_t C, int64_t total) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const int64_t body = frames * Hp * Wp * C;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    T v = dev::from_f<T>(0.0f);
    if (i < body) {
      const int64_t c = i % C, r = i / C, wp = r % Wp, r2 = r / Wp, hp = r2 % Hp, f = r2 / Hp;
      const int64_t h = hp - top, w = wp - left;
      if (h >= 0 && h < Hi && w >= 0 && w < Wi) v = x[((f * Hi + h) * Wi + w) * C + c];
    }
    p[i] = v;
  }
}

template <typename T>
__global__ void crop_kernel(const float* acc, const float* bias, T* y, int64_t frames, int64_t Ho, int64_t Wo,
                            int64_t Wp, int64_t Cout) {
  const int64_t total = frames * Ho * Wo * Cout, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t c = i % Cout, r = i / Cout, wo = r % Wo, fh = r / Wo;  // fh = f·Ho + ho
    float v = acc[(fh * Wp + wo) * Cout + c];
    if (bias) v += bias[c];
    y[i] = dev::from_f<T>(v);
  }
}

template <typename TS, typename T>
__global__ void bias_convert_kernel(const TS* src, const float* bias, T* y, int64_t rows, int64_t Cout) {
  const int64_t total = rows * Cout, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step)
    y[i] = dev::from_f<T>(dev::to_f(src[i]) + (bias ? bias[i % Cout] : 0.0f));
}

template <typename T>
__global__ void residual_add_kernel(T* y, const T* residual, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    y[i] = dev::from_f<T>(dev::to_f(y[i]) + dev::to_f(residual[i]));
}

cudaError_t fail(cudaError_t e, std::string msg) {
  t_error = std::move(msg);
  return e;
}

bool valid(const Conv3dArgs& a, std::string* why) {
  if (a.type != FloatType::kF32 && a.type != FloatType::kBF16) return (*why = "type must be f32 or bf16", false);
  if (a.N < 1 || a.Cin < 1 || a.Cout < 1 || a.kt < 1 || a.kh < 1 || a.kw < 1 || a.Ti < 1 || a.Hi < 1 || a.Wi < 1)
    return (*why = "empty or negative extent", false);
  if (a.pad.top < 0 || a.pad.bottom < 0 || a.pad.left < 0 || a.pad.right < 0) return (*why = "negative padding", false);
  if (a.stride_t < 1 || a.stride_s < 1) return (*why = "stride below 1", false);
  if (a.Ti < a.kt || a.Hi + a.pad.top + a.pad.bottom < a.kh || a.Wi + a.pad.left + a.pad.right < a.kw)
    return (*why = "input smaller than the kernel", false);
  return true;
}

template <typename T>
cudaError_t gemm_forward(const Conv3dArgs& a, void* workspace, size_t ws_bytes, cudaStream_t stream) {
  const GemmLayout g = gemm_layout(a);
  if (!workspace || ws_bytes < g.p_bytes + g.acc_bytes)
    return fail(cudaErrorInvalidValue, "conv3d GEMM fallback: workspace of " + std::to_string(ws_bytes) +
                                           " bytes, needs " + std::to_string(g.p_bytes + g.acc_bytes));
  T* P = static_cast<T*>(workspace);
  float* acc = reinterpret_cast<float*>(static_cast<char*>(workspace) + g.p_bytes);
  const int64_t frames = a.N * a.Ti;
  pad_kernel<T><<<dev::grid_for(int64_t(g.p_elems), kThreads), kThreads, 0, stream>>>(
      static_cast<const T*>(a.x), P, frames, a.Hi, a.Wi, g.Hp, g.Wp, a.pad.top, a.pad.left, a.Cin, int64_t(g.p_elems));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return fail(e, "conv3d pad kernel launch");

  cublasHandle_t h = blas_handle(stream);
  if (!h) return fail(cudaErrorNotSupported, std::string("conv3d GEMM fallback: ") + blas_last_error());
  const cudaDataType_t in_t = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
  const int64_t To = a.To(), Ho = a.Ho(), M = Ho * g.Wp;
  const T* W = static_cast<const T*>(a.w);
  for (int64_t n = 0; n < a.N; ++n) {
    float* accn = acc + n * To * M * a.Cout;
    for (int64_t dt = 0; dt < a.kt; ++dt)
      for (int64_t dh = 0; dh < a.kh; ++dh)
        for (int64_t dw = 0; dw < a.kw; ++dw) {
          const int64_t tap = (dt * a.kh + dh) * a.kw + dw;
          const float alpha = 1.0f, beta = tap == 0 ? 0.0f : 1.0f;
          const T* B = P + ((n * a.Ti + dt) * g.Hp * g.Wp + dh * g.Wp + dw) * a.Cin;
          const cublasStatus_t s = cublasGemmStridedBatchedEx(
              h, CUBLAS_OP_T, CUBLAS_OP_N, int(a.Cout), int(M), int(a.Cin), &alpha, W + tap * a.Cin, in_t,
              int(g.taps * a.Cin), 0, B, in_t, int(a.stride_s * a.Cin), (long long)(a.stride_t * g.Hp * g.Wp * a.Cin),
              &beta, accn, CUDA_R_32F, int(a.Cout), (long long)(M * a.Cout), int(To), CUBLAS_COMPUTE_32F,
              CUBLAS_GEMM_DEFAULT);
          if (s != CUBLAS_STATUS_SUCCESS)
            return fail(cudaErrorUnknown, std::string("conv3d GEMM fallback: cublasGemmStridedBatchedEx: ") +
                                              blas_status_name(s));
        }
  }
  const int64_t out = a.N * To * Ho * a.Wo() * a.Cout;
  crop_kernel<T><<<dev::grid_for(out, kThreads), kThreads, 0, stream>>>(acc, a.bias, static_cast<T*>(a.y), a.N * To, Ho,
                                                                         a.Wo(), g.Wp, a.Cout);
  e = cudaGetLastError();
  if (e != cudaSuccess) return fail(e, "conv3d crop kernel launch");
  return cudaSuccess;
}

}  // namespace

const char* conv_backend_name(ConvBackend b) {
  switch (b) {
    case ConvBackend::kAuto: return "auto";
    case ConvBackend::kCudnn: return "cudnn";
    case ConvBackend::kGemm: return "gemm";
  }
  return "?";
}

void conv3d_set_error(const char* msg) { t_error = msg ? msg : ""; }
const char* conv3d_last_error() { return t_error.c_str(); }

cudaError_t conv3d_bias_convert(const void* src, FloatType src_type, const float* bias, void* y, FloatType type,
                                int64_t rows, int64_t Cout, cudaStream_t stream) {
  if (rows * Cout == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(src_type, TS, {
    VGEN_DISPATCH_FB(type, T, {
      bias_convert_kernel<TS, T><<<dev::grid_for(rows * Cout, kThreads), kThreads, 0, stream>>>(
          static_cast<const TS*>(src), bias, static_cast<T*>(y), rows, Cout);
      return cudaGetLastError();
    });
  });
  return cudaErrorInvalidValue;
}

cudaError_t conv3d_add_residual(void* y, const void* residual, FloatType type, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(type, T, {
    residual_add_kernel<T><<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<T*>(y),
                                                                                static_cast<const T*>(residual), n);
    return cudaGetLastError();
  });
  return cudaErrorInvalidValue;
}

cudaError_t conv3d_prepare(const Conv3dArgs& a, ConvBackend requested, ConvBackend* chosen, size_t* workspace_bytes) {
  std::string why;
  if (!valid(a, &why)) return fail(cudaErrorInvalidValue, "conv3d: " + why);
  if (requested != ConvBackend::kGemm) {
    size_t ws = 0;
    const cudaError_t e = conv3d_cudnn_prepare(a, &ws);
    if (e == cudaSuccess) {
      *chosen = ConvBackend::kCudnn;
      *workspace_bytes = ws;
      return cudaSuccess;
    }
    if (requested == ConvBackend::kCudnn || e != cudaErrorNotSupported) return e;
    // kAuto: the fallback serves it; the rejection stays readable in conv3d_last_error().
  }
  const GemmLayout g = gemm_layout(a);
  *chosen = ConvBackend::kGemm;
  *workspace_bytes = g.p_bytes + g.acc_bytes;
  return cudaSuccess;
}

cudaError_t conv3d_forward(const Conv3dArgs& a, ConvBackend chosen, void* workspace, size_t workspace_bytes,
                           cudaStream_t stream) {
  std::string why;
  if (!valid(a, &why)) return fail(cudaErrorInvalidValue, "conv3d: " + why);
  if (!a.x || !a.w || !a.y) return fail(cudaErrorInvalidValue, "conv3d: null x/w/y pointer");
  if (chosen == ConvBackend::kCudnn) {
    ++g_cudnn_calls;
    return conv3d_cudnn_forward(a, workspace, workspace_bytes, stream);
  }
  if (chosen != ConvBackend::kGemm) return fail(cudaErrorInvalidValue, "conv3d_forward: backend must be resolved");
  ++g_gemm_calls;
  cudaError_t e = a.type == FloatType::kF32 ? gemm_forward<float>(a, workspace, workspace_bytes, stream)
                                            : gemm_forward<bf16>(a, workspace, workspace_bytes, stream);
  if (e == cudaSuccess && a.residual)
    e = conv3d_add_residual(a.y, a.residual, a.type, a.N * a.To() * a.Ho() * a.Wo() * a.Cout, stream);
  return e;
}

Conv3dStats conv3d_stats() {
  Conv3dStats s = conv3d_cudnn_plan_stats();
  s.cudnn_calls = g_cudnn_calls.load();
  s.gemm_calls = g_gemm_calls.load();
  return s;
}

}  // namespace vgen::kern
