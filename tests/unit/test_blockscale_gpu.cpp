// The block-scaled formats on the device (label gpu): the quantisation kernels
// (kernels/blockscale/blockscale_quant.cuh: plain CUDA, any GPU) against the references bit for bit
// — the elements, the swizzled scales (and their zero padding), the NVFP4 tensor and row scales —
// on odd K (padded to 32), row strides, fp32 and bf16 rows, and blocks of zeros, NaN, Inf and tiny
// values; then the cuBLASLt block-scaled GEMM (kernels/gemm/gemm_blockscale.cuh) against the host
// emulation on a GPU with block-scaled tensor cores (compute capability 10.x / 12.x; skipped on
// others, where it must refuse with cudaErrorNotSupported).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include "kernels/blockscale/blockscale_format.h"
#include "kernels/blockscale/blockscale_quant.cuh"
#include "kernels/blockscale/mxfp8_ref.h"
#include "kernels/blockscale/nvfp4_ref.h"
#include "kernels/gemm/gemm_blockscale.cuh"

using namespace vgen;
using namespace vgen::testing;

namespace {

// rows × ldx values (columns ≥ K are poison that must not count), with special blocks.
std::vector<float> make_rows(int64_t rows, int64_t K, int64_t ldx, uint64_t seed, bool bf16) {
  std::vector<float> x(size_t(rows * ldx));
  for (int64_t r = 0; r < rows; ++r) {
    const float mag = std::ldexp(1.0f, int(r % 19) - 9);
    for (int64_t k = 0; k < ldx; ++k) x[size_t(r * ldx + k)] = k < K ? hash_uniform(uint64_t(r * ldx + k), seed) * mag : 1e30f;
    float* row = x.data() + r * ldx;
    switch (r % 7) {
      case 1: for (int64_t k = 0; k < std::min<int64_t>(K, 16); ++k) row[k] = 0.0f; break;
      case 2: row[r % K] = kNaN; break;
      case 3: row[K - 1] = (r % 2) ? INFINITY : -INFINITY; break;
      case 4: for (int64_t k = 0; k < K; ++k) row[k] *= 1e-38f; break;
      default: break;
    }
  }
  return bf16 ? rounded_bf16(x) : x;
}

// x [rows, K] (stride ldx) copied dense into [rows, Kp] with zero padding: the references' input.
std::vector<float> padded(const std::vector<float>& x, int64_t rows, int64_t K, int64_t ldx, int64_t Kp) {
  std::vector<float> p(size_t(rows * Kp), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k) p[size_t(r * Kp + k)] = x[size_t(r * ldx + k)];
  return p;
}

Tensor upload_rows(const std::vector<float>& x, bool bf16) {
  return bf16 ? device_tensor(x, {int64_t(x.size())}, DType::kBF16) : upload_f32(x);
}

void expect_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) bad += 1, first = first < 0 ? int64_t(i) : first;
  EXPECT_EQ(bad, 0) << what << ": first at " << first << " (device " << int(got[size_t(first)]) << ", host "
                    << int(want[size_t(first)]) << ")";
}

struct Shape2 {
  int64_t rows, K, ldx;
};
const Shape2 kShapes[] = {{5, 24, 24}, {130, 40, 41}, {7, 64, 64}, {129, 100, 128}, {3, 1, 1}};

}  // namespace

TEST(BlockScaleGpu, Mxfp8QuantisationIsTheReference) {
  VGEN_REQUIRE_GPU();
  for (bool bf16 : {false, true})
    for (const Shape2& s : kShapes) {
      const std::string what = "mxfp8 rows " + std::to_string(s.rows) + " K " + std::to_string(s.K) + (bf16 ? " bf16" : "");
      const int64_t Kp = kern::blockscale_padded_k(s.K), kb = Kp / 32;
      const std::vector<float> x = make_rows(s.rows, s.K, s.ldx, 3, bf16);
      const Tensor dx = upload_rows(x, bf16);
      Tensor dq = Tensor::empty({s.rows * Kp}, DType::kU8, Device::kCUDA);
      Tensor dsf = Tensor::empty({kern::bs_scales_bytes(s.rows, kb)}, DType::kU8, Device::kCUDA);
      ASSERT_EQ(kern::mxfp8_quantize(dx.raw(), bf16, s.rows, s.K, s.ldx, dq.data<uint8_t>(), dsf.data<uint8_t>(),
                                     compute_stream()),
                cudaSuccess);
      const std::vector<float> xp = padded(x, s.rows, s.K, s.ldx, Kp);
      std::vector<uint8_t> q(size_t(s.rows * Kp)), sc(size_t(s.rows * kb)), sw(size_t(kern::bs_scales_bytes(s.rows, kb)));
      kern::mxfp8_quantize_ref(xp.data(), s.rows, Kp, Kp, q.data(), sc.data());
      kern::swizzle_scales_ref(sc.data(), s.rows, kb, sw.data());
      expect_bytes(download<uint8_t>(dq, q.size()), q, what + " elements");
      expect_bytes(download<uint8_t>(dsf, sw.size()), sw, what + " scales");
    }
}

TEST(BlockScaleGpu, Nvfp4QuantisationIsTheReference) {
  VGEN_REQUIRE_GPU();
  for (bool bf16 : {false, true})
    for (const Shape2& s : kShapes)
      for (bool per_row : {false, true}) {
        const std::string what = "nvfp4 rows " + std::to_string(s.rows) + " K " + std::to_string(s.K) +
                                 (bf16 ? " bf16" : "") + (per_row ? " per row" : " per tensor");
        const int64_t Kp = kern::blockscale_padded_k(s.K), kb = Kp / 16;
        const std::vector<float> x = make_rows(s.rows, s.K, s.ldx, 5, bf16);
        const std::vector<float> xp = padded(x, s.rows, s.K, s.ldx, Kp);
        const Tensor dx = upload_rows(x, bf16);
        Tensor dS = Tensor::empty({per_row ? s.rows : 1}, DType::kF32, Device::kCUDA);
        ASSERT_EQ(per_row ? kern::nvfp4_row_scales_device(dx.raw(), bf16, s.rows, s.K, s.ldx, dS.f32(), compute_stream())
                          : kern::nvfp4_tensor_scale_device(dx.raw(), bf16, s.rows, s.K, s.ldx, dS.f32(), compute_stream()),
                  cudaSuccess);
        std::vector<float> S(per_row ? size_t(s.rows) : 1u);
        for (size_t r = 0; r < S.size(); ++r)
          S[r] = kern::nvfp4_tensor_scale(kern::finite_amax_ref(xp.data() + (per_row ? r * Kp : 0),
                                                                per_row ? Kp : s.rows * Kp));
        const std::vector<float> gotS = download<float>(dS, S.size());
        for (size_t r = 0; r < S.size(); ++r) ASSERT_EQ(bits(gotS[r]), bits(S[r])) << what << " S[" << r << "]";
        Tensor dq = Tensor::empty({s.rows * Kp / 2}, DType::kU8, Device::kCUDA);
        Tensor dsf = Tensor::empty({kern::bs_scales_bytes(s.rows, kb)}, DType::kU8, Device::kCUDA);
        ASSERT_EQ(kern::nvfp4_quantize(dx.raw(), bf16, s.rows, s.K, s.ldx, dS.f32(), per_row ? 1 : 0,
                                       dq.data<uint8_t>(), dsf.data<uint8_t>(), compute_stream()),
                  cudaSuccess);
        std::vector<uint8_t> q(size_t(s.rows * Kp / 2)), sc(size_t(s.rows * kb)), sw(size_t(kern::bs_scales_bytes(s.rows, kb)));
        for (int64_t r = 0; r < s.rows; ++r)
          kern::nvfp4_quantize_ref(xp.data() + r * Kp, 1, Kp, Kp, S[per_row ? size_t(r) : 0], q.data() + r * Kp / 2,
                                   sc.data() + r * kb);
        kern::swizzle_scales_ref(sc.data(), s.rows, kb, sw.data());
        expect_bytes(download<uint8_t>(dq, q.size()), q, what + " elements");
        expect_bytes(download<uint8_t>(dsf, sw.size()), sw, what + " scales");
      }
}

// The GEMM against the emulation: y = x̃·w̃ᵀ · alpha · row + bias with x̃, w̃ what the formats store.
void gemm_case(kern::BlockFormat f) {
  const int64_t M = 70, N = 96, K = 160;
  const std::vector<float> x = random_vec(size_t(M * K), 11), w = random_vec(size_t(N * K), 12, -0.2f, 0.2f),
                           b = random_vec(size_t(N), 13);
  const bool fp4 = f == kern::BlockFormat::kNvfp4;
  const int64_t kb = K / (fp4 ? 16 : 32), bytes_row = fp4 ? K / 2 : K;
  const Tensor dx = upload_f32(x), dw = upload_f32(w), db = upload_f32(b);
  Tensor xq = Tensor::empty({M * bytes_row}, DType::kU8, Device::kCUDA), wq = Tensor::empty({N * bytes_row}, DType::kU8, Device::kCUDA);
  Tensor xsf = Tensor::empty({kern::bs_scales_bytes(M, kb)}, DType::kU8, Device::kCUDA);
  Tensor wsf = Tensor::empty({kern::bs_scales_bytes(N, kb)}, DType::kU8, Device::kCUDA);
  Tensor xS = Tensor::empty({M}, DType::kF32, Device::kCUDA), wS = Tensor::empty({1}, DType::kF32, Device::kCUDA);
  kern::BlockScaledLinearArgs a;
  a.format = f;
  if (fp4) {
    ASSERT_EQ(kern::nvfp4_row_scales_device(dx.raw(), false, M, K, K, xS.f32(), compute_stream()), cudaSuccess);
    ASSERT_EQ(kern::nvfp4_tensor_scale_device(dw.raw(), false, N, K, K, wS.f32(), compute_stream()), cudaSuccess);
    ASSERT_EQ(kern::nvfp4_quantize(dx.raw(), false, M, K, K, xS.f32(), 1, xq.data<uint8_t>(), xsf.data<uint8_t>(), compute_stream()), cudaSuccess);
    ASSERT_EQ(kern::nvfp4_quantize(dw.raw(), false, N, K, K, wS.f32(), 0, wq.data<uint8_t>(), wsf.data<uint8_t>(), compute_stream()), cudaSuccess);
  } else {
    ASSERT_EQ(kern::mxfp8_quantize(dx.raw(), false, M, K, K, xq.data<uint8_t>(), xsf.data<uint8_t>(), compute_stream()), cudaSuccess);
    ASSERT_EQ(kern::mxfp8_quantize(dw.raw(), false, N, K, K, wq.data<uint8_t>(), wsf.data<uint8_t>(), compute_stream()), cudaSuccess);
  }
  std::vector<float> xr = x, wr = w, rows(size_t(M), 1.0f);
  float alpha = 1.0f;
  Tensor inv_rows;
  if (fp4) {
    const std::vector<float> S = download<float>(xS, size_t(M));
    for (int64_t m = 0; m < M; ++m) rows[size_t(m)] = 1.0f / S[size_t(m)];
    alpha = 1.0f / download<float>(wS, 1)[0];
    inv_rows = upload_f32(rows);
    a.row_scale = inv_rows.f32();
    kern::nvfp4_fake_quant_rows_ref(xr.data(), M, K);
    kern::nvfp4_fake_quant_ref(wr.data(), N, K);
  } else {
    kern::mxfp8_fake_quant_ref(xr.data(), M, K);
    kern::mxfp8_fake_quant_ref(wr.data(), N, K);
  }
  Tensor y = Tensor::empty({M, N}, DType::kF32, Device::kCUDA);
  a.x = xq.data<uint8_t>(), a.x_sf = xsf.data<uint8_t>(), a.w = wq.data<uint8_t>(), a.w_sf = wsf.data<uint8_t>();
  a.alpha = alpha, a.bias = db.f32(), a.y = y.raw(), a.out_type = kern::GemmType::kF32, a.M = M, a.N = N, a.Kp = K;
  const cudaError_t e = kern::linear_blockscale(a, compute_stream());
  if (!kern::blockscale_gemm_supported()) {
    EXPECT_EQ(e, cudaErrorNotSupported);
    GTEST_SKIP() << "no block-scaled tensor cores (compute capability 10.x / 12.x): the GEMM refused, as it must";
  }
  ASSERT_EQ(e, cudaSuccess) << kern::gemm_last_error();
  const std::vector<float> got = download<float>(y, size_t(M * N));
  std::vector<float> want(size_t(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(xr[size_t(m * K + k)]) * wr[size_t(n * K + k)];
      want[size_t(m * N + n)] = float(s) + b[size_t(n)];
    }
  expect_close(got, want, [&](size_t i) { return 1e-4 + 1e-4 * std::fabs(want[i]); }, fp4 ? "nvfp4 gemm" : "mxfp8 gemm");
}

TEST(BlockScaleGpu, Mxfp8GemmIsTheEmulation) {
  VGEN_REQUIRE_GPU();
  gemm_case(kern::BlockFormat::kMxfp8);
}

TEST(BlockScaleGpu, Nvfp4GemmIsTheEmulation) {
  VGEN_REQUIRE_GPU();
  gemm_case(kern::BlockFormat::kNvfp4);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(BlockScaleGpu)
#endif
