// FP8 e4m3 GEMM (kernels/gemm/gemm_fp8.cu, label gpu) against linear_fp8_quantized_ref /
// linear_fp8_ref: DiT block shapes (4096×5120×5120, 333×13824×5120, 1×5120×5120, 130×5120×13824)
// and small odd ones, every epilogue (bias bf16/fp32/none, GELU-tanh, residual in place, bf16/fp32
// output), fused and through the separate epilogue; the chain from fp32/bf16 activations through
// quantize_rows_fp8; strides, misaligned y, N that cuBLASLt may refuse, K = 0, argument errors.
//
// The bound. Both sides multiply the same e4m3 inputs exactly; the reference sums in double
// (exact) and rounds once to fp32. The device differs by (per element, S = Σ_k|x8·w8|·sx·sw, v the
// scaled product, b the bias, r the residual):
//   accumulation: Hopper's FP8 tensor cores add partial sums with ~14 bits before cuBLASLt promotes
//     them to fp32 (fast accumulation off): at most ~2^-11·S per promotion interval of 4 MMAs;
//     allowed 2^-10·S (×1.13 through GELU, whose slope is at most 1.13);
//   GELU: cuBLASLt's tanh approximation, 5e-4·|v + b|;
//   bf16 output: half an ulp of the result (2^-8 relative) + half an ulp of |v| (a fused epilogue
//     may round the product before adding the bias) + with a residual half an ulp of |v|+|b|+|r|
//     (a rounded partial sum); fp32 output: 2^-22 of |result|+|v|+|b|+|r|.
// Besides every element within that bound, the error energy over the checked rows must stay below
// NMSE 5e-5 (bf16 out: about 4× what the output roundings give) or 1e-5 (fp32 out: accumulation
// only), which catches a precision loss the per-element bound is too loose to see. Each case prints
// its path (direct / separate epilogue / unscaled), max |err|/tol and NMSE; a failure names the
// shape, the epilogue, the first elements out of bound and the largest error.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>
#include <utility>

#include "kernels/gemm/gemm_fp8.cuh"
#include "kernels/gemm/gemm_fp8_ref.h"
#include "kernels/quant/quant.cuh"
#include "kernels/quant/quant_ref.h"

using namespace vgen;
using namespace vgen::testing;
using kern::GemmType;

namespace {


double gelu_tanh(double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }

// Quantised operands on host and device. x rows and w rows carry different magnitudes so that the
// per-row scales matter; |y| is O(1).
struct Operands {
  int64_t M = 0, N = 0, K = 0;
  std::vector<uint8_t> x8, w8;
  std::vector<float> sx, sw;
  Tensor dx8, dsx, dw8, dsw;
};

Operands make_operands(int64_t M, int64_t N, int64_t K, uint64_t seed) {
  Operands o;
  o.M = M, o.N = N, o.K = K;
  std::vector<float> x(size_t(M * K)), w(size_t(N * K));
  const float wmag = 1.0f / std::sqrt(float(std::max<int64_t>(K, 1)));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      x[size_t(m * K + k)] = hash_uniform(uint64_t(m * K + k), seed) * std::ldexp(1.0f, int(m % 5) - 2);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      w[size_t(n * K + k)] = hash_uniform(uint64_t(n * K + k), seed + 1) * wmag * std::ldexp(1.0f, int(n % 3) - 1);
  o.x8.resize(x.size()), o.w8.resize(w.size()), o.sx.resize(size_t(M)), o.sw.resize(size_t(N));
  kern::quantize_rows_fp8_ref(x.data(), false, M, K, K, o.x8.data(), o.sx.data());
  kern::quantize_rows_fp8_ref(w.data(), false, N, K, K, o.w8.data(), o.sw.data());
  o.dx8 = upload(o.x8.data(), o.x8.size()), o.dw8 = upload(o.w8.data(), o.w8.size());
  o.dsx = upload_f32(o.sx), o.dsw = upload_f32(o.sw);
  return o;
}

// Rows compared: all of a small M, else the ends, the middle and a spread of others.
std::vector<int64_t> check_rows(int64_t M) {
  std::set<int64_t> r;
  if (M <= 48) {
    for (int64_t i = 0; i < M; ++i) r.insert(i);
  } else {
    for (int64_t i : {int64_t(0), int64_t(1), M / 3, M / 2, M - 2, M - 1}) r.insert(i);
    for (int64_t i = 0; r.size() < 32; ++i) r.insert(int64_t((uint64_t(i) * 2654435761u + 17) % uint64_t(M)));
  }
  return {r.begin(), r.end()};
}

// Reference product rows (v = Σ x8·w8 · sx · sw) and the magnitudes S of the bound.
struct RefRows {
  std::vector<int64_t> rows;
  std::vector<float> v, S;
};

RefRows ref_rows(const Operands& o) {
  RefRows r;
  r.rows = check_rows(o.M);
  const int64_t R = int64_t(r.rows.size()), N = o.N, K = o.K;
  std::vector<uint8_t> xs(size_t(R * K)), xa(xs.size()), wa(o.w8.size());
  std::vector<float> sxs(static_cast<size_t>(R));
  for (int64_t i = 0; i < R; ++i) {
    std::memcpy(xs.data() + i * K, o.x8.data() + r.rows[size_t(i)] * K, size_t(K));
    sxs[size_t(i)] = o.sx[size_t(r.rows[size_t(i)])];
  }
  for (size_t i = 0; i < xs.size(); ++i) xa[i] = xs[i] & 0x7F;  // |e4m3|: clear the sign bit
  for (size_t i = 0; i < wa.size(); ++i) wa[i] = o.w8[i] & 0x7F;
  r.v.resize(size_t(R * N)), r.S.resize(size_t(R * N));
  kern::linear_fp8_quantized_ref(xs.data(), sxs.data(), o.w8.data(), o.sw.data(), nullptr, r.v.data(), R, N, K);
  kern::linear_fp8_quantized_ref(xa.data(), sxs.data(), wa.data(), o.sw.data(), nullptr, r.S.data(), R, N, K);
  return r;
}

enum class Bias { kNone, kBF16, kF32 };
struct Epilogue {
  const char* name;
  Bias bias;
  bool gelu, residual;
  GemmType out;
};
const Epilogue kEpilogues[] = {
    {"plain/bf16", Bias::kNone, false, false, GemmType::kBF16},
    {"bias_bf16/bf16", Bias::kBF16, false, false, GemmType::kBF16},
    {"bias_f32/bf16", Bias::kF32, false, false, GemmType::kBF16},
    {"bias_bf16+gelu/bf16", Bias::kBF16, true, false, GemmType::kBF16},
    {"gelu/bf16", Bias::kNone, true, false, GemmType::kBF16},
    {"bias_f32/f32", Bias::kF32, false, false, GemmType::kF32},
    {"bias_bf16/f32", Bias::kBF16, false, false, GemmType::kF32},
    {"bias_bf16+gelu/f32", Bias::kBF16, true, false, GemmType::kF32},
    {"residual+bias_bf16/bf16", Bias::kBF16, false, true, GemmType::kBF16},
    {"residual+bias_f32/bf16", Bias::kF32, false, true, GemmType::kBF16},
    {"residual+bias_f32/f32", Bias::kF32, false, true, GemmType::kF32},
};

struct CaseResult {
  double max_ratio = 0, nmse = 0;
};

// Compares the rows `ref.rows` of y (row stride ldy, first N columns) with the bound of the header.
CaseResult check(const std::string& what, const Operands& o, const RefRows& ref, const Epilogue& ep,
                 const std::vector<float>& bias, const std::vector<float>& res, const std::vector<float>& y_rows) {
  const bool bf16 = ep.out == GemmType::kBF16;
  const double ulp = std::ldexp(1.0, -8), slope = ep.gelu ? 1.13 : 1.0;
  CaseResult cr;
  double err2 = 0, ref2 = 0, max_err = 0;
  int64_t bad = 0;
  std::string first;
  for (size_t i = 0; i < ref.rows.size(); ++i) {
    const int64_t m = ref.rows[i];
    for (int64_t n = 0; n < o.N; ++n) {
      const size_t q = i * size_t(o.N) + size_t(n);
      const double v = ref.v[q], acc = std::ldexp(double(ref.S[q]), -10);
      const double b = ep.bias == Bias::kNone ? 0.0 : bias[size_t(n)];
      const double r = ep.residual ? res[size_t(m * o.N + n)] : 0.0;
      const double pre = v + b, want = (ep.gelu ? gelu_tanh(pre) : pre) + r;
      double tol = slope * acc + (ep.gelu ? 5e-4 * std::fabs(pre) : 0.0) + 1e-30;
      if (bf16)
        tol += ulp * (std::fabs(want) + tol) + slope * ulp * (std::fabs(v) + acc) +
               (ep.residual ? ulp * (std::fabs(v) + std::fabs(b) + std::fabs(r)) : 0.0);
      else
        tol += std::ldexp(std::fabs(want) + std::fabs(v) + std::fabs(b) + std::fabs(r), -22);
      const double got = y_rows[q], err = std::fabs(got - want);
      err2 += err * err, ref2 += want * want;
      max_err = std::max(max_err, std::isnan(err) ? INFINITY : err);
      cr.max_ratio = std::max(cr.max_ratio, std::isnan(err) ? INFINITY : err / tol);
      if (!(err <= tol) && bad++ < 5) {
        char line[200];
        std::snprintf(line, sizeof(line), "  y[%ld,%ld] = %.8g, expected %.8g ± %.3g (product %.6g, S %.4g)\n",
                      long(m), long(n), got, want, tol, v, double(ref.S[q]));
        first += line;
      }
    }
  }
  cr.nmse = ref2 > 0 ? err2 / ref2 : err2;
  const double nmse_max = bf16 ? 5e-5 : 1e-5;
  EXPECT_EQ(bad, 0) << what << ": " << bad << " elements out of bound (max |err| " << max_err << "), first:\n" << first;
  EXPECT_LE(cr.nmse, nmse_max) << what << ": error energy too high (max |err| " << max_err << ")";
  EXPECT_GT(ref2, 0.0) << what;
  return cr;
}

// Runs one epilogue on `o` and checks it. ldy ≥ N; y_offset: y starts that many elements past an
// aligned address (the separate epilogue must take it).
void run_case(const Operands& o, const RefRows& ref, const Epilogue& ep, bool fused, uint64_t seed,
              int64_t ldy = 0, int64_t y_offset = 0) {
  const int64_t M = o.M, N = o.N;
  ldy = ldy ? ldy : N;
  const bool bf16 = ep.out == GemmType::kBF16;
  const DType out_dt = bf16 ? DType::kBF16 : DType::kF32;
  std::vector<float> bias(static_cast<size_t>(N)), res;
  for (int64_t n = 0; n < N; ++n) bias[size_t(n)] = 0.5f * hash_uniform(uint64_t(n), seed);
  if (ep.bias == Bias::kBF16) bias = rounded_bf16(bias);
  Tensor dbias = ep.bias == Bias::kNone ? Tensor()
                                        : device_tensor(bias, {N}, ep.bias == Bias::kBF16 ? DType::kBF16 : DType::kF32);
  // y: [M, ldy] after y_offset elements; the residual lives in y (in place), NaN elsewhere.
  std::vector<float> ybuf(size_t(y_offset + M * ldy), kNaN);
  if (ep.residual) {
    res.resize(size_t(M * N));
    for (size_t i = 0; i < res.size(); ++i) res[i] = hash_uniform(i, seed + 1);
    if (bf16) res = rounded_bf16(res);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) ybuf[size_t(y_offset + m * ldy + n)] = res[size_t(m * N + n)];
  }
  Tensor dy = device_tensor(ybuf, {int64_t(ybuf.size())}, out_dt);
  void* y = static_cast<char*>(dy.raw()) + y_offset * int64_t(dtype_size(out_dt));

  kern::Fp8LinearArgs a;
  a.x8 = static_cast<const uint8_t*>(o.dx8.raw()), a.x_scale = o.dsx.f32();
  a.w8 = static_cast<const uint8_t*>(o.dw8.raw()), a.w_scale = o.dsw.f32();
  a.bias = ep.bias == Bias::kNone ? nullptr : dbias.raw();
  a.bias_type = ep.bias == Bias::kBF16 ? GemmType::kBF16 : GemmType::kF32;
  a.y = y, a.residual = ep.residual ? y : nullptr, a.out_type = ep.out;
  a.M = M, a.N = N, a.K = o.K, a.ldy = ldy;
  a.act = ep.gelu ? kern::GemmAct::kGeluTanh : kern::GemmAct::kNone;
  const std::string what = "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(o.K) +
                           " " + ep.name + (fused ? " fused" : " unfused") + " ldy=" + std::to_string(ldy) +
                           " y_offset=" + std::to_string(y_offset);
  kern::gemm_set_fused_epilogue(fused);
  const kern::Fp8GemmStats s0 = kern::gemm_fp8_stats();
  const cudaError_t e = kern::linear_fp8(a, compute_stream());
  const kern::Fp8GemmStats s1 = kern::gemm_fp8_stats();
  kern::gemm_set_fused_epilogue(true);
  ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e) << " — " << kern::gemm_last_error();
  const bool separate = s1.unfused > s0.unfused, unscaled = s1.unscaled > s0.unscaled;
  if (!fused && (ep.bias != Bias::kNone || ep.gelu || ep.residual)) {
    EXPECT_TRUE(separate) << what;
  }
  if (ep.bias == Bias::kF32 || (ep.gelu && !bf16)) {
    EXPECT_TRUE(separate) << what << " (no cuBLASLt epilogue)";
  }

  sync_stream();
  // Only the checked rows come back; columns N..ldy-1 and the elements before y keep their NaN.
  std::vector<float> y_rows;
  for (int64_t m : ref.rows) {
    const std::vector<float> row = host_f32(dy.narrow(y_offset + m * ldy, ldy));
    y_rows.insert(y_rows.end(), row.begin(), row.begin() + N);
    for (int64_t n = N; n < ldy; ++n)
      EXPECT_TRUE(std::isnan(row[size_t(n)])) << what << ": wrote past N at " << m << "," << n;
  }
  if (y_offset > 0) {
    for (float v : host_f32(dy.narrow(0, y_offset))) EXPECT_TRUE(std::isnan(v)) << what << ": wrote before y";
  }
  const CaseResult cr = check(what, o, ref, ep, bias, res, y_rows);
  std::printf("[fp8 gemm] %-70s path=%-8s max|err|/tol=%.3f nmse=%.2e\n", what.c_str(),
              unscaled ? "unscaled" : separate ? "separate" : "direct", cr.max_ratio, cr.nmse);
}

void run_shape(int64_t M, int64_t N, int64_t K, uint64_t seed) {
  const Operands o = make_operands(M, N, K, seed);
  const RefRows ref = ref_rows(o);
  for (const Epilogue& ep : kEpilogues)
    for (bool fused : {true, false}) {
      run_case(o, ref, ep, fused, seed += 7);
      if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace

TEST(GemmFp8Gpu, DitBlockShapesEveryEpilogue) {
  VGEN_REQUIRE_GPU();
  uint64_t seed = 100;
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{4096, 5120, 5120},
                         {333, 13824, 5120},
                         {1, 5120, 5120},
                         {130, 5120, 13824}}) {
    run_shape(M, N, K, seed += 1000);
    if (HasFailure()) return;
  }
}

TEST(GemmFp8Gpu, SmallOddShapesEveryEpilogue) {
  VGEN_REQUIRE_GPU();
  uint64_t seed = 5000;
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 16, 16},
                         {7, 24, 48},
                         {33, 40, 16},
                         {1000, 136, 1040},
                         {75, 1536, 5120},
                         {257, 8, 32}}) {
    run_shape(M, N, K, seed += 1000);
    if (HasFailure()) return;
  }
}

TEST(GemmFp8Gpu, StridesAndMisalignedOutput) {
  VGEN_REQUIRE_GPU();
  // x8 and w8 rows strided (ldx = K + 16, ldw = K + 32), y with ldy = N + 8, and y one element past
  // an aligned address (the separate epilogue writes it).
  const int64_t M = 45, N = 264, K = 512, ldx = K + 16, ldw = K + 32;
  const Operands o = make_operands(M, N, K, 77);
  const RefRows ref = ref_rows(o);
  for (const Epilogue& ep : {kEpilogues[1], kEpilogues[8], kEpilogues[10]}) {
    run_case(o, ref, ep, true, 91, N + 8);
    run_case(o, ref, ep, true, 92, 0, 1);
  }
  // Strided operands: copy the dense rows into wider buffers.
  std::vector<uint8_t> xs(size_t(M * ldx), 0x7F), ws(size_t(N * ldw), 0x7F);  // NaN padding must not be read
  for (int64_t m = 0; m < M; ++m) std::memcpy(xs.data() + m * ldx, o.x8.data() + m * K, size_t(K));
  for (int64_t n = 0; n < N; ++n) std::memcpy(ws.data() + n * ldw, o.w8.data() + n * K, size_t(K));
  Tensor dxs = upload(xs.data(), xs.size()), dws = upload(ws.data(), ws.size());
  Tensor dy = Tensor::empty({M, N}, DType::kF32, Device::kCUDA);
  kern::Fp8LinearArgs a;
  a.x8 = static_cast<const uint8_t*>(dxs.raw()), a.x_scale = o.dsx.f32();
  a.w8 = static_cast<const uint8_t*>(dws.raw()), a.w_scale = o.dsw.f32();
  a.y = dy.raw(), a.out_type = GemmType::kF32;
  a.M = M, a.N = N, a.K = K, a.ldx = ldx, a.ldw = ldw;
  ASSERT_EQ(kern::linear_fp8(a, compute_stream()), cudaSuccess) << kern::gemm_last_error();
  sync_stream();
  const std::vector<float> y = host_f32(dy);
  std::vector<float> y_rows;
  for (int64_t m : ref.rows) y_rows.insert(y_rows.end(), y.begin() + m * N, y.begin() + (m + 1) * N);
  const Epilogue plain_f32{"plain/f32", Bias::kNone, false, false, GemmType::kF32};
  check("strided ldx/ldw", o, ref, plain_f32, {}, {}, y_rows);
}

TEST(GemmFp8Gpu, ChainFromActivationsMatchesLinearFp8Ref) {
  VGEN_REQUIRE_GPU();
  // fp32 / bf16 activations and fp32 weights quantised on the device, then linear_fp8, against
  // linear_fp8_ref on the host from the same fp32 values (the e4m3 bytes agree bit for bit).
  const int64_t M = 133, N = 1536, K = 5120;
  std::vector<float> x(size_t(M * K)), w(size_t(N * K)), b(static_cast<size_t>(N));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 2.0f * hash_uniform(i, 1);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.02f * hash_uniform(i, 2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * hash_uniform(i, 3);
  for (bool x_bf16 : {false, true}) {
    const std::vector<float> xi = x_bf16 ? rounded_bf16(x) : x;
    Tensor dx = device_tensor(xi, {M, K}, x_bf16 ? DType::kBF16 : DType::kF32);
    Tensor dw = device_tensor(w, {N, K}, DType::kF32);
    Tensor dx8 = Tensor::empty({M, K}, DType::kU8, Device::kCUDA);
    Tensor dw8 = Tensor::empty({N, K}, DType::kU8, Device::kCUDA);
    Tensor dsx = Tensor::empty({M}, DType::kF32, Device::kCUDA), dsw = Tensor::empty({N}, DType::kF32, Device::kCUDA);
    ASSERT_EQ(kern::quantize_rows_fp8(dx.raw(), x_bf16, M, K, K, static_cast<uint8_t*>(dx8.raw()), dsx.f32(),
                                      compute_stream()),
              cudaSuccess);
    ASSERT_EQ(kern::quantize_rows_fp8(dw.raw(), false, N, K, K, static_cast<uint8_t*>(dw8.raw()), dsw.f32(),
                                      compute_stream()),
              cudaSuccess);
    Tensor db = device_tensor(b, {N}, DType::kF32);
    Tensor dy = Tensor::empty({M, N}, DType::kF32, Device::kCUDA);
    kern::Fp8LinearArgs a;
    a.x8 = static_cast<const uint8_t*>(dx8.raw()), a.x_scale = dsx.f32();
    a.w8 = static_cast<const uint8_t*>(dw8.raw()), a.w_scale = dsw.f32();
    a.bias = db.raw(), a.bias_type = GemmType::kF32, a.y = dy.raw(), a.out_type = GemmType::kF32;
    a.M = M, a.N = N, a.K = K;
    ASSERT_EQ(kern::linear_fp8(a, compute_stream()), cudaSuccess) << kern::gemm_last_error();
    sync_stream();
    const std::vector<float> y = host_f32(dy);
    std::vector<float> want(size_t(M * N));
    kern::linear_fp8_ref(xi.data(), w.data(), b.data(), want.data(), M, N, K);
    // Bound: the accumulation term of the header with S ≤ Σ|x||w|·(1 + 2^-4)² (the quantised
    // magnitudes), plus fp32 rounding.
    int64_t bad = 0;
    double err2 = 0, ref2 = 0;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double S = 0;
        for (int64_t k = 0; k < K; k += 1) S += std::fabs(double(xi[size_t(m * K + k)]) * w[size_t(n * K + k)]);
        const double want_v = want[size_t(m * N + n)], got = y[size_t(m * N + n)];
        const double tol = std::ldexp(S * 1.13, -10) + std::ldexp(std::fabs(want_v) + 1.0, -22);
        err2 += (got - want_v) * (got - want_v), ref2 += want_v * want_v;
        if (!(std::fabs(got - want_v) <= tol) && bad++ < 5)
          ADD_FAILURE() << "x " << (x_bf16 ? "bf16" : "fp32") << " y[" << m << "," << n << "] = " << got
                        << ", expected " << want_v << " ± " << tol;
      }
    EXPECT_EQ(bad, 0);
    EXPECT_LE(err2 / ref2, 1e-5) << "x " << (x_bf16 ? "bf16" : "fp32");
    std::printf("[fp8 gemm] chain x %s M=%ld N=%ld K=%ld nmse=%.2e\n", x_bf16 ? "bf16" : "fp32", long(M), long(N),
                long(K), err2 / ref2);
  }
}

TEST(GemmFp8Gpu, NotMultipleOf8NIsCorrectOrRefused) {
  VGEN_REQUIRE_GPU();
  // cuBLASLt documents 16-byte aligned dimensions for FP8: N = 100 (bf16 rows of 200 bytes) and
  // N = 20 with fp32 out may be refused (cudaErrorNotSupported), never wrong.
  for (auto [N, out] :
       {std::pair<int64_t, GemmType>{100, GemmType::kBF16}, {20, GemmType::kF32}, {100, GemmType::kF32}}) {
    const Operands o = make_operands(37, N, 64, uint64_t(N));
    const RefRows ref = ref_rows(o);
    const Epilogue ep{"bias_bf16 odd N", Bias::kBF16, false, false, out};
    Tensor dy = Tensor::empty({o.M, N}, out == GemmType::kBF16 ? DType::kBF16 : DType::kF32, Device::kCUDA);
    std::vector<float> bias(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) bias[size_t(n)] = kern::round_bf16(0.5f * hash_uniform(uint64_t(n), 9));
    Tensor db = device_tensor(bias, {N}, DType::kBF16);
    kern::Fp8LinearArgs a;
    a.x8 = static_cast<const uint8_t*>(o.dx8.raw()), a.x_scale = o.dsx.f32();
    a.w8 = static_cast<const uint8_t*>(o.dw8.raw()), a.w_scale = o.dsw.f32();
    a.bias = db.raw(), a.y = dy.raw(), a.out_type = out;
    a.M = o.M, a.N = N, a.K = o.K;
    const cudaError_t e = kern::linear_fp8(a, compute_stream());
    std::printf("[fp8 gemm] N=%ld out=%s: %s %s\n", long(N), out == GemmType::kBF16 ? "bf16" : "f32",
                cudaGetErrorString(e), kern::gemm_last_error());
    if (e == cudaErrorNotSupported) continue;
    ASSERT_EQ(e, cudaSuccess) << kern::gemm_last_error();
    sync_stream();
    const std::vector<float> y = host_f32(dy);
    check("N=" + std::to_string(N), o, ref, ep, bias, {}, y);
  }
}

TEST(GemmFp8Gpu, EdgeSizesAndArgumentErrors) {
  VGEN_REQUIRE_GPU();
  // K = 0: y = gelu(bias); M = 0: nothing to do.
  std::vector<float> b = rounded_bf16(random_vec(16, 3));
  Tensor db = device_tensor(b, {16}, DType::kBF16);
  Tensor dy = Tensor::empty({3, 16}, DType::kF32, Device::kCUDA);
  kern::Fp8LinearArgs a;
  a.bias = db.raw(), a.y = dy.raw(), a.out_type = GemmType::kF32, a.act = kern::GemmAct::kGeluTanh;
  a.M = 3, a.N = 16, a.K = 0;
  ASSERT_EQ(kern::linear_fp8(a, compute_stream()), cudaSuccess) << kern::gemm_last_error();
  sync_stream();
  const std::vector<float> y = host_f32(dy);
  for (int64_t i = 0; i < 48; ++i) EXPECT_NEAR(y[size_t(i)], gelu_tanh(b[size_t(i % 16)]), 1e-6) << i;
  a.M = 0;
  EXPECT_EQ(kern::linear_fp8(a, compute_stream()), cudaSuccess);

  const Operands o = make_operands(8, 16, 32, 4);
  Tensor dy2 = Tensor::empty({8, 16}, DType::kBF16, Device::kCUDA);
  auto args = [&] {
    kern::Fp8LinearArgs r;
    r.x8 = static_cast<const uint8_t*>(o.dx8.raw()), r.x_scale = o.dsx.f32();
    r.w8 = static_cast<const uint8_t*>(o.dw8.raw()), r.w_scale = o.dsw.f32();
    r.y = dy2.raw(), r.M = 8, r.N = 16, r.K = 32;
    return r;
  };
  auto expect_invalid = [&](kern::Fp8LinearArgs r, const char* why, const char* needle) {
    EXPECT_EQ(kern::linear_fp8(r, compute_stream()), cudaErrorInvalidValue) << why;
    EXPECT_NE(std::string(kern::gemm_last_error()).find(needle), std::string::npos)
        << why << ": " << kern::gemm_last_error();
  };
  kern::Fp8LinearArgs r = args();
  ASSERT_EQ(kern::linear_fp8(r, compute_stream()), cudaSuccess) << kern::gemm_last_error();
  EXPECT_STREQ(kern::gemm_last_error(), "");
  r = args(), r.K = 24, r.ldx = 32, r.ldw = 32;
  expect_invalid(r, "K not a multiple of 16", "multiples of 16");
  r = args(), r.ldx = 40;
  expect_invalid(r, "ldx not a multiple of 16", "multiples of 16");
  r = args(), r.x8 = r.x8 + 1, r.ldx = 48;
  expect_invalid(r, "x8 not 16-byte aligned", "aligned");
  r = args(), r.x_scale = nullptr;
  expect_invalid(r, "no x_scale", "scale");
  r = args(), r.residual = r.y, r.act = kern::GemmAct::kGeluTanh;
  expect_invalid(r, "residual with GELU", "residual");
  r = args(), r.ldy = 8;
  expect_invalid(r, "ldy < N", "leading dimension");
}

TEST(GemmFp8Gpu, PlanCacheReuse) {
  VGEN_REQUIRE_GPU();
  const Operands o = make_operands(77, 48, 64, 12);
  Tensor dy = Tensor::empty({77, 48}, DType::kBF16, Device::kCUDA);
  kern::Fp8LinearArgs a;
  a.x8 = static_cast<const uint8_t*>(o.dx8.raw()), a.x_scale = o.dsx.f32();
  a.w8 = static_cast<const uint8_t*>(o.dw8.raw()), a.w_scale = o.dsw.f32();
  a.y = dy.raw(), a.M = 77, a.N = 48, a.K = 64;
  ASSERT_EQ(kern::linear_fp8(a, compute_stream()), cudaSuccess) << kern::gemm_last_error();
  const kern::Fp8GemmStats s0 = kern::gemm_fp8_stats();
  ASSERT_EQ(kern::linear_fp8(a, compute_stream()), cudaSuccess);
  const kern::Fp8GemmStats s1 = kern::gemm_fp8_stats();
  EXPECT_EQ(s1.misses, s0.misses);
  EXPECT_GE(s1.hits, s0.hits + 1);
  a.M = 76;  // another shape: another plan (two if it takes the separate epilogue)
  ASSERT_EQ(kern::linear_fp8(a, compute_stream()), cudaSuccess);
  EXPECT_GT(kern::gemm_fp8_stats().misses, s1.misses);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(GemmFp8Gpu)
#endif
