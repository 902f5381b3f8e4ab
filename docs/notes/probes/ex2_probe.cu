// Build and run on the GPU machine: nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/ex2_probe docs/notes/probes/ex2_probe.cu && /tmp/ex2_probe
// (cuobjdump -sass /tmp/ex2_probe shows the MUFU instructions). Recorded in results/attention/1xh200/2026-12-02_1xh200_fp8_attention_stages.jsonl.
// Probe: MUFU throughput of ex2.approx.ftz.f32 against ex2.approx.f16x2 on this GPU, and the
// accuracy of ex2.approx.f16 against a correctly rounded exp2 over every f16 input in [-24, 9].
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <vector>

__device__ __forceinline__ float ex2f(float x) { float y; asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__device__ __forceinline__ uint32_t ex2h2(uint32_t x) { uint32_t y; asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(y) : "r"(x)); return y; }
__device__ __forceinline__ uint16_t ex2h(uint16_t x) { uint16_t y; asm volatile("ex2.approx.f16 %0, %1;" : "=h"(y) : "h"(x)); return y; }
__device__ __forceinline__ uint16_t cvt_e4m3x2_f16x2(uint32_t x) { uint16_t y; asm volatile("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(y) : "r"(x)); return y; }
__device__ __forceinline__ uint32_t cvt_f16x2_f32(float a, float b) { uint32_t y; asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(y) : "f"(a), "f"(b)); return y; }

constexpr int kIters = 4096;
__global__ void tp_f32(float* out, long long* cyc) {
  float v[8];
  for (int i = 0; i < 8; ++i) v[i] = -0.001f * (threadIdx.x + i);
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = ex2f(-v[i]);
  __syncthreads();
  long long t1 = clock64();
  float s = 0; for (int i = 0; i < 8; ++i) s += v[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}
__global__ void tp_f16x2(float* out, long long* cyc) {
  uint32_t v[8];
  for (int i = 0; i < 8; ++i) { __half2 h = __floats2half2_rn(-0.001f * (threadIdx.x + i), -0.002f * i); v[i] = *reinterpret_cast<uint32_t*>(&h); }
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = ex2h2(v[i] ^ 0x80008000u);
  __syncthreads();
  long long t1 = clock64();
  float s = 0; for (int i = 0; i < 8; ++i) { __half2 h = *reinterpret_cast<__half2*>(&v[i]); s += __low2float(h) + __high2float(h); }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}
// every f16 bit pattern: ex2.approx.f16 and ex2.approx.f16x2 (low half), and e4m3x2 from f16x2
__global__ void acc(uint16_t* y1, uint16_t* y2, uint16_t* e8) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  y1[i] = ex2h(uint16_t(i));
  y2[i] = uint16_t(ex2h2(uint32_t(i) | (uint32_t(i) << 16)) & 0xffff);
  e8[i] = cvt_e4m3x2_f16x2(uint32_t(i) | (uint32_t(i) << 16));
}
// keep the conversions in the SASS for inspection
__global__ void sass_mix(const float* in, uint16_t* out) {
  int i = threadIdx.x;
  uint32_t h = cvt_f16x2_f32(in[2 * i], in[2 * i + 1]);
  out[i] = cvt_e4m3x2_f16x2(ex2h2(h));
}

static double f16_to_d(uint16_t b) { __half_raw r; r.x = b; return double(__half2float(__half(r))); }
static uint16_t d_to_f16(double d) { __half h = __double2half(d); return reinterpret_cast<__half_raw&>(h).x; }

int main() {
  int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out; long long* cyc; cudaMalloc(&out, sms * 1024 * 4); cudaMalloc(&cyc, sms * 8);
  std::vector<long long> c(sms);
  for (int rep = 0; rep < 2; ++rep) {
    tp_f32<<<sms, 1024>>>(out, cyc); cudaDeviceSynchronize();
    cudaMemcpy(c.data(), cyc, sms * 8, cudaMemcpyDeviceToHost);
    double ops = 1024.0 * kIters * 8;  // per SM
    printf("ex2.approx.ftz.f32: %.2f results/clk/SM (%.2f MUFU instr/clk/SM)\n", ops / c[0], ops / c[0]);
    tp_f16x2<<<sms, 1024>>>(out, cyc); cudaDeviceSynchronize();
    cudaMemcpy(c.data(), cyc, sms * 8, cudaMemcpyDeviceToHost);
    printf("ex2.approx.f16x2: %.2f results/clk/SM (%.2f instr/clk/SM)\n", 2 * ops / c[0], ops / c[0]);
  }
  uint16_t *y1, *y2, *e8; cudaMalloc(&y1, 131072); cudaMalloc(&y2, 131072); cudaMalloc(&e8, 131072);
  acc<<<256, 256>>>(y1, y2, e8); cudaDeviceSynchronize();
  std::vector<uint16_t> h1(65536), h2(65536), he(65536);
  cudaMemcpy(h1.data(), y1, 131072, cudaMemcpyDeviceToHost);
  cudaMemcpy(h2.data(), y2, 131072, cudaMemcpyDeviceToHost);
  cudaMemcpy(he.data(), e8, 131072, cudaMemcpyDeviceToHost);
  long n = 0, exact = 0, off1 = 0, worse = 0, same12 = 0; double maxrel = 0;
  for (int i = 0; i < 65536; ++i) {
    double x = f16_to_d(uint16_t(i));
    if (!(x >= -24.0 && x <= 9.0)) continue;
    ++n;
    uint16_t ref = d_to_f16(std::exp2(x));
    if (h1[i] == h2[i]) ++same12;
    int d = std::abs(int(h1[i]) - int(ref));
    if (d == 0) ++exact; else if (d == 1) ++off1; else ++worse;
    double r = std::exp2(x);
    if (r > 6.2e-5) maxrel = std::max(maxrel, std::fabs(f16_to_d(h1[i]) - r) / r);
  }
  printf("ex2.approx.f16 over %ld inputs in [-24, 9]: correctly rounded %ld, 1 ulp off %ld, more %ld, f16==f16x2 %ld, max rel err (normal results) %.3e\n",
         n, exact, off1, worse, same12, maxrel);
  // e4m3 from f16: compare with RN of the exact value, satfinite at 448
  long ebad = 0, en = 0;
  for (int i = 0; i < 65536; ++i) {
    double x = f16_to_d(uint16_t(i));
    if (!(x >= 0 && x <= 1000)) continue;
    ++en;
    // reference RN-even e4m3 (bias 7, subnormals 2^-9 steps, max 448)
    double a = std::min(x, 448.0); int e; std::frexp(a, &e); int ex = std::max(e - 1, -6);
    double q = std::ldexp(1.0, ex - 3); double r = std::nearbyint(a / q) * q; if (r > 448) r = 448;
    uint8_t lo = he[i] & 0xff; int s = lo >> 7, E = (lo >> 3) & 15, M = lo & 7;
    double v = E == 0 ? std::ldexp(M / 8.0, -6) : std::ldexp(1 + M / 8.0, E - 7); if (s) v = -v;
    if (v != r) ++ebad;
  }
  printf("cvt.rn.satfinite.e4m3x2.f16x2 over %ld non-negative f16 inputs <= 1000: %ld differ from RN-even\n", en, ebad);
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
