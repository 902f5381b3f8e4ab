// Device FP8 e4m3 quantisation (kernels/quant/quant.cu, label gpu) against the host, bit for bit:
// quantize_rows_fp8 vs quantize_rows_fp8_ref (and quantize_rows_int8 vs quantize_rows_int8_ref) on
// odd shapes, strides and alignments, fp32 and bf16 rows (the register kernel and the general one),
// zero / NaN / Inf / tiny rows; the bare device
// conversion vs fp8_e4m3_encode over ~1e6 float bit patterns (a stride through all 2^32, every e4m3
// midpoint and its neighbours, specials); fp8_scale_vector vs its reference. Failures print the
// case, the first mismatches (row, column, input bits, device byte, host byte) and their count.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "kernels/quant/fp8_e4m3_ref.h"
#include "kernels/quant/quant.cuh"
#include "kernels/quant/quant_ref.h"

using namespace vgen;
using namespace vgen::testing;

namespace {


// Rows with magnitudes over 2^-12..2^10, special rows, and padding (ldx > K) that must not count.
std::vector<float> make_rows(int64_t M, int64_t K, int64_t ldx, uint64_t seed) {
  std::vector<float> x(size_t(M * ldx));
  for (int64_t m = 0; m < M; ++m) {
    const float mag = std::ldexp(1.0f, int(m % 23) - 12);
    float* row = x.data() + m * ldx;
    for (int64_t k = 0; k < ldx; ++k)
      row[k] = k < K ? hash_uniform(uint64_t(m * ldx + k), seed) * mag : (k % 2 ? 1e30f : kNaN);
    if (K == 0) continue;
    switch (m % 11) {
      case 3: for (int64_t k = 0; k < K; ++k) row[k] = 0.0f; break;  // zero row: scale 1
      case 4: row[m % K] = kNaN; break;  // ignored by the max, stored 0x7F
      case 5: row[m % K] = (m % 2) ? INFINITY : -INFINITY; break;  // max Inf: scale 1, unscaled
      case 6: for (int64_t k = 0; k < K; ++k) row[k] *= 1e-38f; break;  // float subnormals
      case 7:  // max below kFp8MinAmax (448/max would overflow): scale 1, values stored as 0
        for (int64_t k = 0; k < K; ++k) row[k] = k == (m + 1) % K ? 1e-37f : 0.0f;
        break;
      case 8: row[m % K] = 3e38f; break;  // at fp8_quant_mul's limit
      default: break;
    }
  }
  return x;
}

struct Mismatch {
  int64_t count = 0;
  std::string first;
};

// One quantisation case on the device against the host; `offset`: x starts that many elements past
// an aligned address; i8: INT8 rows (else e4m3).
void run_quant_case(int64_t M, int64_t K, int64_t ldx, bool bf16, int64_t offset, uint64_t seed, bool i8 = false) {
  std::vector<float> x = make_rows(M, K, ldx, seed);
  std::vector<uint16_t> xb(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    xb[i] = kern::f32_to_bf16(x[i]);
    if (bf16) x[i] = kern::bf16_to_f32(xb[i]);
  }
  const size_t esize = bf16 ? 2 : 4;
  std::vector<char> buf(size_t(offset) * esize + x.size() * esize);
  std::memcpy(buf.data() + offset * esize, bf16 ? static_cast<const void*>(xb.data()) : x.data(), x.size() * esize);
  Tensor dx = upload(buf.data(), buf.size());
  Tensor dq = Tensor::empty({std::max<int64_t>(M * K, 1)}, DType::kU8, Device::kCUDA);
  Tensor ds = Tensor::empty({std::max<int64_t>(M, 1)}, DType::kF32, Device::kCUDA);
  const void* px = static_cast<const char*>(dx.raw()) + offset * esize;
  const cudaError_t e =
      i8 ? kern::quantize_rows_int8(px, bf16, M, K, ldx, static_cast<int8_t*>(dq.raw()), ds.f32(), compute_stream())
         : kern::quantize_rows_fp8(px, bf16, M, K, ldx, static_cast<uint8_t*>(dq.raw()), ds.f32(), compute_stream());
  const std::string what = std::string(i8 ? "int8 " : "e4m3 ") + "M=" + std::to_string(M) + " K=" + std::to_string(K) +
                           " ldx=" + std::to_string(ldx) + (bf16 ? " bf16" : " fp32") + " offset=" + std::to_string(offset);
  ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e);
  std::vector<uint8_t> got_q = download<uint8_t>(dq, size_t(M * K));
  std::vector<float> got_s = download<float>(ds, size_t(M));
  std::vector<uint8_t> want_q(size_t(M * K));
  std::vector<float> want_s(static_cast<size_t>(M));
  const void* hx = bf16 ? static_cast<const void*>(xb.data()) : x.data();
  if (i8)
    kern::quantize_rows_int8_ref(hx, bf16, M, K, ldx, reinterpret_cast<int8_t*>(want_q.data()), want_s.data());
  else
    kern::quantize_rows_fp8_ref(hx, bf16, M, K, ldx, want_q.data(), want_s.data());
  Mismatch ms, mq;
  for (int64_t m = 0; m < M; ++m) {
    if (bits(got_s[size_t(m)]) != bits(want_s[size_t(m)]) && ms.count++ == 0)
      ms.first = "scale[" + std::to_string(m) + "] = " + std::to_string(got_s[size_t(m)]) + ", host " +
                 std::to_string(want_s[size_t(m)]);
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t g = got_q[size_t(m * K + k)], w = want_q[size_t(m * K + k)];
      if (g != w && mq.count++ < 5) {
        char line[160];
        std::snprintf(line, sizeof(line), "  x8[%" PRId64 ",%" PRId64 "]: x=%.9g (0x%08x) device 0x%02x host 0x%02x\n",
                      m, k, double(x[size_t(m * ldx + k)]), bits(x[size_t(m * ldx + k)]), g, w);
        mq.first += line;
      }
    }
  }
  EXPECT_EQ(ms.count, 0) << what << ": " << ms.count << " scales differ, first " << ms.first;
  EXPECT_EQ(mq.count, 0) << what << ": " << mq.count << " of " << M * K << " bytes differ:\n" << mq.first;
}

}  // namespace

TEST(QuantGpu, QuantizeRowsMatchesRefBitForBit) {
  VGEN_REQUIRE_GPU();
  uint64_t seed = 1;
  // 5120 / 13824 / 8960 / 1536: the DiT widths (register kernel); 5136 = 5120 + 16 and odd strides
  // or offsets: other register shapes or the general kernel; 20000 > 16384: general kernel.
  for (int64_t M : {1, 7, 1000}) {
    for (int64_t K : {16, 24, 40, 7, 33, 1000, 1040, 1536, 5120, 5136, 8960, 13824, 20000}) {
      if (M == 1000 && (K == 7 || K == 33 || K == 20000 || K == 8960)) continue;  // covered at M = 1, 7
      for (int64_t pad : {0, 8, 3})
        for (bool bf16 : {true, false}) {
          run_quant_case(M, K, K + pad, bf16, 0, seed++);
          if (HasFailure()) return;
        }
      run_quant_case(M, K, K, true, 1, seed++);  // misaligned start: general kernel
      run_quant_case(M, K, K, false, 2, seed++);
      if (HasFailure()) return;
    }
  }
}

// INT8 rows (the GEMM inputs of kernels/gemm/gemm_int8.cuh): the same kernels with the INT8 encoding.
TEST(QuantGpu, QuantizeRowsInt8MatchesRefBitForBit) {
  VGEN_REQUIRE_GPU();
  uint64_t seed = 1000;
  for (int64_t M : {1, 7, 1000})
    for (int64_t K : {16, 7, 33, 1040, 5120, 13824, 20000}) {
      if (M == 1000 && (K == 7 || K == 33 || K == 20000)) continue;
      for (bool bf16 : {true, false}) {
        run_quant_case(M, K, K, bf16, 0, seed++, true);
        run_quant_case(M, K, K + 3, bf16, 0, seed++, true);  // odd stride: general kernel
        if (HasFailure()) return;
      }
      run_quant_case(M, K, K, true, 1, seed++, true);  // misaligned start: general kernel
      if (HasFailure()) return;
    }
}

TEST(QuantGpu, QuantizeEdgeSizes) {
  VGEN_REQUIRE_GPU();
  // K = 0: every scale 1. M = 0: nothing to do.
  Tensor ds = Tensor::empty({5}, DType::kF32, Device::kCUDA);
  Tensor dx = Tensor::empty({1}, DType::kF32, Device::kCUDA);
  ASSERT_EQ(kern::quantize_rows_fp8(dx.raw(), false, 5, 0, 0, nullptr, ds.f32(), compute_stream()), cudaSuccess);
  for (float s : download<float>(ds, 5)) EXPECT_EQ(s, 1.0f);
  EXPECT_EQ(kern::quantize_rows_fp8(nullptr, false, 0, 16, 16, nullptr, nullptr, compute_stream()), cudaSuccess);
  EXPECT_EQ(kern::quantize_rows_fp8(dx.raw(), false, 2, 16, 8, nullptr, ds.f32(), compute_stream()),
            cudaErrorInvalidValue);  // ldx < K
}

namespace {

// ~1e6 floats: a stride of 4099 through every bit pattern, each e4m3 midpoint with its neighbours
// (the ties), and specials.
std::vector<float> sweep_inputs() {
  std::vector<float> v;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4099) {
    float f;
    const uint32_t b = uint32_t(u);
    std::memcpy(&f, &b, 4);
    v.push_back(f);
  }
  for (int c = 0; c < 0x7E; ++c) {
    const float lo = kern::fp8_e4m3_decode(uint8_t(c)), hi = kern::fp8_e4m3_decode(uint8_t(c + 1));
    const float mid = 0.5f * (lo + hi);
    for (float f : {lo, mid, std::nextafter(mid, INFINITY), std::nextafter(mid, 0.0f), hi}) {
      v.push_back(f);
      v.push_back(-f);
    }
  }
  for (float f : {0.0f, -0.0f, INFINITY, -INFINITY, 448.0f, 464.0f, 465.0f, 3.4e38f, 1e-45f, -1e-45f, 1e-38f})
    v.push_back(f);
  return v;
}

// fp8_e4m3_encode_device of x, back on the host (a fatal failure when the launch fails).
void encode_on_device(const std::vector<float>& x, std::vector<uint8_t>* got) {
  Tensor dx = upload_f32(x);
  Tensor dq = Tensor::empty({int64_t(x.size())}, DType::kU8, Device::kCUDA);
  ASSERT_EQ(kern::fp8_e4m3_encode_device(dx.f32(), int64_t(x.size()), static_cast<uint8_t*>(dq.raw()),
                                         compute_stream()),
            cudaSuccess);
  *got = download<uint8_t>(dq, x.size());
}

}  // namespace

TEST(QuantGpu, DeviceEncodeMatchesHostEncode) {
  VGEN_REQUIRE_GPU();
  const std::vector<float> x = sweep_inputs();
  std::vector<uint8_t> got;
  ASSERT_NO_FATAL_FAILURE(encode_on_device(x, &got));
  int64_t bad = 0, nan_inputs = 0, nan_not_nan = 0;
  std::string first;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {  // compared in DeviceEncodeOfNaN
      ++nan_inputs;
      if ((got[i] & 0x7F) != 0x7F) ++nan_not_nan;
      continue;
    }
    const uint8_t want = kern::fp8_e4m3_encode(x[i]);
    if (got[i] != want && bad++ < 10) {
      char line[128];
      std::snprintf(line, sizeof(line), "  x=%.9g (0x%08x): device 0x%02x host 0x%02x\n", double(x[i]), bits(x[i]),
                    got[i], want);
      first += line;
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << x.size() - size_t(nan_inputs) << " non-NaN inputs differ:\n" << first;
  EXPECT_EQ(nan_not_nan, 0) << nan_not_nan << " of " << nan_inputs << " NaN inputs did not give a NaN code";
  std::printf("[quant gpu] device encode: %zu inputs (%" PRId64 " NaN), %" PRId64 " mismatches\n", x.size(),
              nan_inputs, bad);
}

// The sign of a NaN's code is the one place the host encoder (sign | 0x7F) may differ from the
// hardware conversion; quantize_rows_fp8 never relies on it (its NaN products are canonicalised to
// 0x7F on both sides), so a failure here only says how fp8_e4m3_encode should describe NaN.
TEST(QuantGpu, DeviceEncodeOfNaN) {
  VGEN_REQUIRE_GPU();
  std::vector<float> x;
  for (uint32_t b : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0xffffffffu}) {
    float f;
    std::memcpy(&f, &b, 4);
    x.push_back(f);
  }
  std::vector<uint8_t> got;
  ASSERT_NO_FATAL_FAILURE(encode_on_device(x, &got));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(got[i] & 0x7F, 0x7F) << "NaN 0x" << std::hex << bits(x[i]) << " gave 0x" << int(got[i]);
    EXPECT_EQ(int(got[i]), int(kern::fp8_e4m3_encode(x[i])))
        << "NaN sign: input 0x" << std::hex << bits(x[i]) << " device 0x" << int(got[i]) << " host 0x"
        << int(kern::fp8_e4m3_encode(x[i]));
  }
}

TEST(QuantGpu, ScaleVectorMatchesRef) {
  VGEN_REQUIRE_GPU();
  const int64_t N = 1003;
  std::vector<float> s(static_cast<size_t>(N)), g(s.size()), want(s.size());
  for (int64_t i = 0; i < N; ++i) {
    s[size_t(i)] = std::ldexp(hash_uniform(uint64_t(i), 1), -7);
    g[size_t(i)] = 3.0f * hash_uniform(uint64_t(i), 2);
  }
  Tensor ds = upload_f32(s), dg = upload_f32(g);
  Tensor dout = Tensor::empty({N}, DType::kF32, Device::kCUDA);
  for (bool gate : {true, false}) {
    ASSERT_EQ(kern::fp8_scale_vector(ds.f32(), gate ? dg.f32() : nullptr, dout.f32(), N, compute_stream()),
              cudaSuccess);
    kern::fp8_scale_vector_ref(s.data(), gate ? g.data() : nullptr, want.data(), N);
    const std::vector<float> got = download<float>(dout, size_t(N));
    for (int64_t i = 0; i < N; ++i)
      ASSERT_EQ(bits(got[size_t(i)]), bits(want[size_t(i)])) << "gate=" << gate << " at " << i;
  }
  // In place: out == s.
  ASSERT_EQ(kern::fp8_scale_vector(ds.f32(), dg.f32(), ds.f32(), N, compute_stream()), cudaSuccess);
  kern::fp8_scale_vector_ref(s.data(), g.data(), want.data(), N);
  const std::vector<float> got = download<float>(ds, size_t(N));
  for (int64_t i = 0; i < N; ++i) ASSERT_EQ(bits(got[size_t(i)]), bits(want[size_t(i)])) << "in place at " << i;
}

#else
VGEN_GPU_TESTS_NEED_CUDA(QuantGpu)
#endif
