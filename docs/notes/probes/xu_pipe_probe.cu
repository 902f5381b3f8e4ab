// Build and run on the GPU machine:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -o /tmp/xu_pipe_probe docs/notes/probes/xu_pipe_probe.cu && /tmp/xu_pipe_probe
// Probe: does the f32 → e4m3x2 conversion (F2FP) share the MUFU's rate with ex2.approx? The fp8
// attention's softmax spends, per 64 probabilities of a thread, 64 ex2 and 32 conversions. Rates
// (results per clock and SM, the resident blocks of 256 threads each) of: ex2 alone, the conversion alone, the two mixed
// 2:1 as in the kernel, an integer-pipe encoding (scale into the f32 denormal range, round to
// nearest even on the bits, pack with shifts) alone and mixed 2:1 with ex2. Also checks that
// encoding against the conversion for every f32 in [0, 464] (every non-negative the softmax writes).
#include <cuda_fp8.h>
#include <cstdio>
#include <cstdint>
#include <vector>

__device__ __forceinline__ float ex2f(float x) { float y; asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__device__ __forceinline__ uint32_t cvt2(float a, float b) {
  return __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
}
// e4m3 code of 0 <= x <= 464 (RN-even; 448 above 448): x·2⁻¹²⁰ puts e4m3's exponent bias (7) on
// f32's (127) and its subnormals (steps of 2⁻⁹) on f32's denormals (steps of 2⁻¹⁴⁹), exactly where
// x >= 2⁻⁶ and x's bits allow; the code is bits 27..20 rounded to nearest even.
__device__ __forceinline__ uint32_t e4m3_bits(float x) {
  float y;
  asm("mul.rn.f32 %0, %1, 0f03800000;" : "=f"(y) : "f"(x));  // 2^-120, no ftz
  const uint32_t f = __float_as_uint(y);
  return (f + 0x7ffffu + ((f >> 20) & 1u)) >> 20;
}
__device__ __forceinline__ uint32_t alu4(float a, float b, float c, float d) {
  const uint32_t lo = e4m3_bits(a) | (e4m3_bits(b) << 8), hi = e4m3_bits(c) | (e4m3_bits(d) << 8);
  return lo | (hi << 16);
}

constexpr int kIters = 2048;
// mode 0: ex2 only (64 per iter); 1: cvt only (32 per iter); 2: 64 ex2 + 32 cvt; 3: ALU encode only
// (64 values); 4: 64 ex2 + ALU encode of the 64; 5: 64 ex2 + 16 cvt + 32 values ALU
template <int kMode>
__global__ void __launch_bounds__(256) tp(float* out, long long* cyc, float seed) {
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) v[i] = seed * float(threadIdx.x + i);
  uint32_t acc = 0;
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < kIters; ++it) {
    if constexpr (kMode == 0 || kMode == 2 || kMode == 4 || kMode == 5) {
#pragma unroll
      for (int i = 0; i < 64; ++i) v[i] = ex2f(-v[i]);
    }
    if constexpr (kMode == 1 || kMode == 2) {
#pragma unroll
      for (int i = 0; i < 64; i += 2) acc ^= cvt2(v[i], v[i + 1]) << (i & 15);
    }
    if constexpr (kMode == 3 || kMode == 4) {
#pragma unroll
      for (int i = 0; i < 64; i += 4) acc ^= alu4(v[i], v[i + 1], v[i + 2], v[i + 3]) + i;
    }
    if constexpr (kMode == 5) {
#pragma unroll
      for (int i = 0; i < 32; i += 2) acc ^= cvt2(v[i], v[i + 1]) << (i & 15);
#pragma unroll
      for (int i = 32; i < 64; i += 4) acc ^= alu4(v[i], v[i + 1], v[i + 2], v[i + 3]) + i;
    }
    if constexpr (kMode == 1 || kMode == 3) {
#pragma unroll
      for (int i = 0; i < 64; ++i) v[i] = __uint_as_float(__float_as_uint(v[i]) ^ (acc & 1u));
    }
  }
  __syncthreads();
  const long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += v[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s + float(acc & 7u);
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}

// every f32 bit pattern in [0, 464]: the integer encoding against the conversion
__global__ void check(unsigned long long* bad, uint32_t* first) {
  const uint32_t top = 0x43e80000u;  // 464.0f
  for (uint64_t b = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; b <= top; b += uint64_t(gridDim.x) * blockDim.x) {
    const float x = __uint_as_float(uint32_t(b));
    const uint32_t want = cvt2(x, 0.0f) & 0xffu, got = e4m3_bits(x);
    if (want != got) { atomicAdd(bad, 1ull); atomicMin(first, uint32_t(b)); }
  }
}

// Launches exactly the blocks that are resident together (occupancy query), so each block's clock
// span is the span of the whole SM's work.
template <int kMode>
double rate(int sms, float* out, long long* cyc, double per_iter, int* resident) {
  int occ = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tp<kMode>, 256, 0);
  if (occ < 1) occ = 1;
  *resident = occ;
  std::vector<long long> c(sms * occ);
  tp<kMode><<<sms * occ, 256>>>(out, cyc, 1e-7f);
  tp<kMode><<<sms * occ, 256>>>(out, cyc, 1e-7f);
  cudaDeviceSynchronize();
  cudaMemcpy(c.data(), cyc, c.size() * 8, cudaMemcpyDeviceToHost);
  long long mx = 0; for (long long x : c) mx = x > mx ? x : mx;
  return per_iter * kIters * 256.0 * occ / double(mx);
}

int main() {
  int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out; long long* cyc; cudaMalloc(&out, sms * 2048 * 4); cudaMalloc(&cyc, sms * 8 * 8);
  int o[6];
  const double r0 = rate<0>(sms, out, cyc, 64, &o[0]), r1 = rate<1>(sms, out, cyc, 32, &o[1]), r2 = rate<2>(sms, out, cyc, 64, &o[2]),
               r3 = rate<3>(sms, out, cyc, 64, &o[3]), r4 = rate<4>(sms, out, cyc, 64, &o[4]), r5 = rate<5>(sms, out, cyc, 64, &o[5]);
  printf("{\"ex2_per_clk_sm\": %.2f, \"cvt_e4m3x2_per_clk_sm\": %.2f, \"ex2_with_cvt_2to1_ex2_per_clk_sm\": %.2f,"
         " \"alu_encode_values_per_clk_sm\": %.2f, \"ex2_with_alu_encode_ex2_per_clk_sm\": %.2f, \"ex2_with_half_cvt_half_alu_ex2_per_clk_sm\": %.2f,"
         " \"resident_blocks_of_256\": [%d, %d, %d, %d, %d, %d]",
         r0, r1, r2, r3, r4, r5, o[0], o[1], o[2], o[3], o[4], o[5]);
  unsigned long long* bad; uint32_t* first; cudaMalloc(&bad, 8); cudaMalloc(&first, 4);
  cudaMemset(bad, 0, 8); cudaMemset(first, 0xff, 4);
  check<<<sms * 8, 256>>>(bad, first); cudaDeviceSynchronize();
  unsigned long long hb = 0; uint32_t hf = 0; cudaMemcpy(&hb, bad, 8, cudaMemcpyDeviceToHost); cudaMemcpy(&hf, first, 4, cudaMemcpyDeviceToHost);
  printf(", \"alu_encode_mismatches_0_to_464\": %llu, \"first_mismatch_bits\": \"0x%08x\", \"cuda\": \"%s\"}\n", hb, hf, cudaGetErrorString(cudaGetLastError()));
  return 0;
}
