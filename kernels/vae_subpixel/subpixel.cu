// Sub-pixel upsampler kernels (contracts in subpixel.cuh). Grid-stride loops; the shuffle and the
// channel copy move 16-byte vectors where the channel counts and pointers allow (pure copies: no
// conversion, so any element size of 2 or 4 bytes moves the same way).
#include "kernels/common/elem_io.cuh"
#include "kernels/vae_subpixel/subpixel.cuh"

#include <type_traits>

namespace vgen::kern {
namespace {

constexpr int kThreads = 256;

// One thread per element of w4 [4·cout, cin, 2, 2].
__global__ void subpixel_weight_kernel(const float* w3, float* w4, int64_t cout, int64_t cin) {
  const int64_t total = 4 * cout * cin * 4, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int kx = int(e % 2), ky = int(e / 2 % 2);
    const int64_t i = e / 4 % cin, po = e / (4 * cin), o = po % cout;
    const int p = int(po / cout), a = p / 2, b = p % 2;
    const int y0 = a == 0 ? (ky == 0 ? 0 : 1) : (ky == 0 ? 0 : 2), y1 = a == 0 ? (ky == 0 ? 0 : 2) : (ky == 0 ? 1 : 2);
    const int x0 = b == 0 ? (kx == 0 ? 0 : 1) : (kx == 0 ? 0 : 2), x1 = b == 0 ? (kx == 0 ? 0 : 2) : (kx == 0 ? 1 : 2);
    const float* src = w3 + (o * cin + i) * 9;
    float s = 0.0f;
    for (int dy = y0; dy <= y1; ++dy)
      for (int dx = x0; dx <= x1; ++dx) s += src[dy * 3 + dx];
    w4[e] = s;
  }
}

// One thread per V consecutive channels of one output pixel; V·sizeof(E) = 16 bytes when vectorised.
template <typename E, int V>
__global__ void shuffle_kernel(const E* r, E* y, int64_t Tn, int64_t H, int64_t W, int64_t Cr, int64_t C) {
  const int64_t CV = C / V, Ho = 2 * H, Wo = 2 * W, total = Tn * Ho * Wo * CV;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t cv = e % CV, pix = e / CV;  // pix = (t·Ho + yo)·Wo + xo
    const int64_t xo = pix % Wo, ty = pix / Wo, yo = ty % Ho, t = ty / Ho;
    const int64_t a = yo % 2, b = xo % 2, i = yo / 2 + a, j = xo / 2 + b;
    const E* src = r + ((t * (H + 1) + i) * (W + 1) + j) * Cr + (2 * a + b) * C + cv * V;
    E* dst = y + pix * C + cv * V;
    if constexpr (V == 1)
      dst[0] = src[0];
    else
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
  }
}

template <typename E, int V>
__global__ void copy_channels_kernel(const E* x, E* y, int64_t P, int64_t Cx, int64_t c0, int64_t C) {
  const int64_t CV = C / V, total = P * CV, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t cv = e % CV, p = e / CV;
    const E* src = x + p * Cx + c0 + cv * V;
    E* dst = y + p * C + cv * V;
    if constexpr (V == 1)
      dst[0] = src[0];
    else
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
  }
}

// Launches kernel<E, 16 / sizeof(E)> when every channel offset is a whole 16-byte vector, else
// kernel<E, 1>; E is the 2- or 4-byte element (a pure copy needs no arithmetic type).
template <typename E, typename Launch>
cudaError_t by_vector(bool aligned, int64_t n_elems, Launch&& launch) {
  constexpr int V = 16 / int(sizeof(E));
  if (aligned) return launch(std::integral_constant<int, V>{}, n_elems / V);
  return launch(std::integral_constant<int, 1>{}, n_elems);
}

inline int elem_size(FloatType t) { return t == FloatType::kF32 ? 4 : 2; }

}  // namespace

cudaError_t vae_subpixel_weight(const float* w3, float* w4, int64_t cout, int64_t cin, cudaStream_t stream) {
  if (cout < 0 || cin < 0) return cudaErrorInvalidValue;
  const int64_t n = 16 * cout * cin;
  if (n == 0) return cudaSuccess;
  subpixel_weight_kernel<<<dev::grid_for(n, kThreads), kThreads, 0, stream>>>(w3, w4, cout, cin);
  return cudaGetLastError();
}

cudaError_t vae_subpixel_shuffle(const void* r, void* y, FloatType type, int64_t T, int64_t H, int64_t W, int64_t Cr,
                                 int64_t C, cudaStream_t stream) {
  if (T < 0 || H < 0 || W < 0 || C < 0 || Cr < 4 * C) return cudaErrorInvalidValue;
  const int64_t n = T * 4 * H * W * C;
  if (n == 0) return cudaSuccess;
  auto run = [&](auto e) {
    using E = decltype(e);
    const int64_t V = 16 / int64_t(sizeof(E));
    const bool vec = C % V == 0 && Cr % V == 0 && dev::aligned16(r) && dev::aligned16(y);
    return by_vector<E>(vec, n, [&](auto v, int64_t threads) {
      shuffle_kernel<E, decltype(v)::value><<<dev::grid_for(threads, kThreads), kThreads, 0, stream>>>(
          static_cast<const E*>(r), static_cast<E*>(y), T, H, W, Cr, C);
      return cudaGetLastError();
    });
  };
  return elem_size(type) == 4 ? run(uint32_t{}) : run(uint16_t{});
}

cudaError_t vae_copy_channels(const void* x, void* y, FloatType type, int64_t P, int64_t Cx, int64_t c0, int64_t C,
                              cudaStream_t stream) {
  if (P < 0 || C < 0 || c0 < 0 || c0 + C > Cx) return cudaErrorInvalidValue;
  if (P * C == 0) return cudaSuccess;
  auto run = [&](auto e) {
    using E = decltype(e);
    const int64_t V = 16 / int64_t(sizeof(E));
    const bool vec = C % V == 0 && Cx % V == 0 && c0 % V == 0 && dev::aligned16(x) && dev::aligned16(y);
    return by_vector<E>(vec, P * C, [&](auto v, int64_t threads) {
      copy_channels_kernel<E, decltype(v)::value><<<dev::grid_for(threads, kThreads), kThreads, 0, stream>>>(
          static_cast<const E*>(x), static_cast<E*>(y), P, Cx, c0, C);
      return cudaGetLastError();
    });
  };
  return elem_size(type) == 4 ? run(uint32_t{}) : run(uint16_t{});
}

}  // namespace vgen::kern
