// INT8 W8A8 GEMM (kernels/gemm/gemm_int8.cu, label gpu) against linear_int8_ref, every output in
// full: 333×512×384, 1000×768×640 and 1×256×16 (N % 256 == 0, M not a multiple of 128: the
// unguarded full-tile epilogue), 77×200×144 and 77×201×144 (N not a multiple of 256, odd N: the
// column-at-a-time path; K tail of 16 bytes), 5×7×48 (N below one B half), 6000×1000×528 (188
// tiles on ≤ 132 SMs: CTAs loop over tiles, 5 slabs a tile so the stage ring's parity wraps
// mid-tile) and 4500×1280×272 (180 full tiles on ≤ 132 SMs: the full-tile epilogue while CTAs loop
// over tiles); the epilogues none, bias, GELU-tanh + bias, bias + residual (separate buffer), bias +
// residual in place (y == residual) and residual in place without bias; scales and bias at odd
// element offsets (no paired loads, the guarded path at N % 256 == 0); argument errors (refused,
// nothing written).
//
// The bound. Both sides form the same exact int32 sums and the same f32 steps, each one IEEE
// operation rounded to nearest in the contract's order (the kernel's _rn intrinsics, the
// reference's out-of-line products and sums), then one round-to-nearest-even to bf16. So every
// output without GELU must be bit-identical. With GELU, device tanhf and host std::tanh may differ
// by an f32 ulp, which moves the bf16 result by at most one bf16 ulp (and only near a rounding
// tie): allowed there. y starts as NaN (except in place) and 2048 elements after it are a guard:
// an unwritten output or a write past [M, N] fails.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/gemm/gemm_int8.cuh"
#include "kernels/gemm/gemm_int8_ref.h"
#include "gemm_int8_case.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

constexpr uint16_t kPoison = 0xFFFF;  // a bf16 NaN
constexpr int64_t kGuard = 2048;  // elements after y that must stay kPoison

// On a GPU without the kernel (not sm_90) what holds is the refusal, nothing launched; false then.
bool int8_runs_here() {
  if (kern::linear_int8_available()) return true;
  Tensor buf = Tensor::empty({4096}, DType::kU8, Device::kCUDA);
  kern::Int8LinearArgs a;
  a.x8 = a.w8 = static_cast<const int8_t*>(buf.raw());
  a.x_scale = a.w_scale = static_cast<const float*>(buf.raw());
  a.y = buf.raw(), a.M = a.N = 1, a.K = 16;
  EXPECT_EQ(kern::linear_int8(a, compute_stream()), cudaErrorNotSupported)
      << "a GPU without the INT8 kernel must refuse it";
  return false;
}

// The host problem (gemm_int8_case.h) and its device copies.
struct Problem : Int8GemmCase {
  Tensor dx8, dw8, dsx, dsw, dbias;
};

Problem make_problem(int64_t M, int64_t N, int64_t K, uint32_t seed, int64_t vec_offset) {
  Problem p;
  static_cast<Int8GemmCase&>(p) = make_int8_gemm_case(M, N, K, seed);
  p.dx8 = upload(p.x8.data(), p.x8.size()), p.dw8 = upload(p.w8.data(), p.w8.size());
  p.dsx = upload(p.sx.data(), p.sx.size() * 4);
  // w_scale and bias vec_offset elements into their buffers (an odd offset: no paired loads).
  std::vector<float> sw(size_t(vec_offset), 0.0f);
  sw.insert(sw.end(), p.sw.begin(), p.sw.end());
  std::vector<uint16_t> bias(size_t(vec_offset), 0);
  bias.insert(bias.end(), p.bias.begin(), p.bias.end());
  p.dsw = upload(sw.data(), sw.size() * 4), p.dbias = upload(bias.data(), bias.size() * 2);
  return p;
}

struct Epilogue {
  const char* name;
  bool bias, gelu;
  enum Residual { kNone, kSeparate, kInPlace } residual;
};
const Epilogue kEpilogues[] = {
    {"none", false, false, Epilogue::kNone},
    {"bias", true, false, Epilogue::kNone},
    {"gelu_tanh+bias", true, true, Epilogue::kNone},
    {"bias+residual", true, false, Epilogue::kSeparate},
    {"bias+residual_in_place", true, false, Epilogue::kInPlace},
    {"residual_in_place", false, false, Epilogue::kInPlace},
};

int ordered(uint16_t v) { return (v & 0x8000) ? -int(v & 0x7FFF) : int(v); }  // bf16 bits on a line

void run_case(const Problem& p, const Epilogue& ep, int64_t vec_offset) {
  const int64_t M = p.M, N = p.N, MN = M * N;
  const uint16_t* res = ep.residual == Epilogue::kNone ? nullptr : p.res.data();
  std::vector<uint16_t> ref(static_cast<size_t>(MN));
  kern::linear_int8_ref(p.x8.data(), p.sx.data(), p.w8.data(), p.sw.data(), ep.bias ? p.bias.data() : nullptr, res,
                        ref.data(), M, N, p.K, ep.gelu);

  std::vector<uint16_t> y0(size_t(MN + kGuard), kPoison);
  if (ep.residual == Epilogue::kInPlace) std::copy(p.res.begin(), p.res.end(), y0.begin());
  Tensor dy = upload(y0.data(), y0.size() * 2);
  Tensor dres = ep.residual == Epilogue::kSeparate ? upload(p.res.data(), p.res.size() * 2) : Tensor();
  kern::Int8LinearArgs a;
  a.x8 = static_cast<const int8_t*>(p.dx8.raw()), a.x_scale = static_cast<const float*>(p.dsx.raw());
  a.w8 = static_cast<const int8_t*>(p.dw8.raw());
  a.w_scale = static_cast<const float*>(p.dsw.raw()) + vec_offset;
  a.bias = ep.bias ? static_cast<const uint16_t*>(p.dbias.raw()) + vec_offset : nullptr;
  a.y = dy.raw();
  a.residual = ep.residual == Epilogue::kSeparate ? dres.raw() : ep.residual == Epilogue::kInPlace ? dy.raw() : nullptr;
  a.M = M, a.N = N, a.K = p.K;
  a.act = ep.gelu ? kern::GemmAct::kGeluTanh : kern::GemmAct::kNone;
  const std::string what = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(p.K) + " " + ep.name +
                           (vec_offset ? " (scales at an odd offset)" : "");
  ASSERT_EQ(kern::linear_int8(a, compute_stream()), cudaSuccess) << what;
  const std::vector<uint16_t> y = download<uint16_t>(dy, y0.size());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess) << what;

  int64_t differ = 0, bad = 0, guard_hit = 0;
  int max_ulp = 0;
  for (int64_t i = 0; i < MN; ++i) {
    const uint16_t g = y[size_t(i)], r = ref[size_t(i)];
    if (g == r) continue;
    ++differ;
    const bool nan = std::isnan(kern::bf16_to_f32(g)) || std::isnan(kern::bf16_to_f32(r));
    const int ulp = nan ? INT32_MAX : std::abs(ordered(g) - ordered(r));
    max_ulp = std::max(max_ulp, ulp);
    if ((!ep.gelu || ulp > 1) && bad++ < 5)
      ADD_FAILURE() << what << ": y[" << i / N << "," << i % N << "] = " << kern::bf16_to_f32(g) << " (0x" << std::hex
                    << g << "), reference " << kern::bf16_to_f32(r) << " (0x" << r << std::dec << ")";
  }
  for (int64_t i = MN; i < MN + kGuard; ++i) guard_hit += y[size_t(i)] != kPoison;
  EXPECT_EQ(bad, 0) << what << ": " << bad << " outputs off the reference (max " << max_ulp << " bf16 ulp)";
  EXPECT_EQ(guard_hit, 0) << what << ": writes past [M, N]";
  std::printf("[ int8 gemm ] %-48s outputs differing from the reference: %ld (max %d bf16 ulp)\n", what.c_str(),
              long(differ), max_ulp);
}

void run_shape(int64_t M, int64_t N, int64_t K, uint32_t seed, int64_t vec_offset = 0) {
  const Problem p = make_problem(M, N, K, seed, vec_offset);
  for (const Epilogue& ep : kEpilogues) run_case(p, ep, vec_offset);
}

TEST(GemmInt8Gpu, ShapesEveryEpilogue) {
  VGEN_REQUIRE_GPU();
  if (!int8_runs_here()) return;  // the refusal checked instead
  run_shape(333, 512, 384, 1);
  run_shape(1000, 768, 640, 2);
  run_shape(77, 200, 144, 3);
  run_shape(77, 201, 144, 4);
  run_shape(1, 256, 16, 5);
  run_shape(5, 7, 48, 6);
}

TEST(GemmInt8Gpu, PersistentCtasLoopOverTiles) {
  VGEN_REQUIRE_GPU();
  if (!int8_runs_here()) return;  // the refusal checked instead
  run_shape(6000, 1000, 528, 7);
  run_shape(4500, 1280, 272, 10);  // N % 256 == 0: the full-tile epilogue, 36 × 5 tiles
}

TEST(GemmInt8Gpu, ScalesAndBiasAtOddOffsets) {
  VGEN_REQUIRE_GPU();
  if (!int8_runs_here()) return;  // the refusal checked instead
  run_shape(130, 512, 256, 8, 1);
}

// Refused before anything runs (on any GPU): y keeps its poison.
TEST(GemmInt8Gpu, ArgumentErrors) {
  VGEN_REQUIRE_GPU();
  const Problem p = make_problem(64, 64, 64, 9, 0);
  std::vector<uint16_t> y0(64 * 64, kPoison);
  Tensor dy = upload(y0.data(), y0.size() * 2);
  auto args = [&] {
    kern::Int8LinearArgs a;
    a.x8 = static_cast<const int8_t*>(p.dx8.raw()), a.x_scale = static_cast<const float*>(p.dsx.raw());
    a.w8 = static_cast<const int8_t*>(p.dw8.raw()), a.w_scale = static_cast<const float*>(p.dsw.raw());
    a.bias = p.dbias.raw(), a.y = dy.raw(), a.M = 64, a.N = 64, a.K = 64;
    return a;
  };
  auto expect_invalid = [&](const kern::Int8LinearArgs& a, const char* why) {
    EXPECT_EQ(kern::linear_int8(a, compute_stream()), cudaErrorInvalidValue) << why;
  };
  kern::Int8LinearArgs a = args();
  a.K = 8;
  expect_invalid(a, "K = 8 (not a multiple of 16)");
  a = args(), a.K = 40;
  expect_invalid(a, "K = 40");
  a = args(), a.K = int64_t(1) << 17;
  expect_invalid(a, "K = 2^17 (s32 sums could overflow)");
  a = args(), a.residual = a.y, a.act = kern::GemmAct::kGeluTanh;
  expect_invalid(a, "GELU with a residual");
  a = args(), a.M = 0;
  expect_invalid(a, "M = 0");
  a = args(), a.N = 0;
  expect_invalid(a, "N = 0");
  a = args(), a.x8 += 1;
  expect_invalid(a, "x8 not 16-byte aligned");
  a = args(), a.w8 += 8;
  expect_invalid(a, "w8 not 16-byte aligned");
  a = args(), a.y = static_cast<uint16_t*>(a.y) + 1;
  expect_invalid(a, "y not 4-byte aligned");
  a = args(), a.residual = static_cast<const uint16_t*>(dy.raw()) + 1;
  expect_invalid(a, "residual not 4-byte aligned");
  a = args(), a.x_scale = nullptr;
  expect_invalid(a, "no x_scale");
  a = args(), a.w_scale = nullptr;
  expect_invalid(a, "no w_scale");
  a = args(), a.y = nullptr;
  expect_invalid(a, "no y");
  EXPECT_EQ(download<uint16_t>(dy, y0.size()), y0) << "a refused call wrote y";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(GemmInt8Gpu)
#endif
