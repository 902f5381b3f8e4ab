// Patch gather / unpatchify on the device (contracts in patch.cuh): one thread per output element
// of the gather, one per input element of the scatter (both are small next to the GEMMs).
#include "kernels/common/elem_io.cuh"
#include "kernels/embed/patch.cuh"

namespace vgen::kern {
namespace {

struct Grid {
  int64_t B, C, T, H, W, pt, ph, pw;
  int64_t gh() const { return H / ph; }
  int64_t gw() const { return W / pw; }
  int64_t S() const { return (T / pt) * gh() * gw(); }
  int64_t P() const { return C * pt * ph * pw; }
};

template <typename TI, typename TO>
__global__ void patchify_kernel(const TI* x, TO* out, Grid g, int64_t tok_begin, int64_t tok_count) {
  const int64_t P = g.C * g.pt * g.ph * g.pw, gh = g.H / g.ph, gw = g.W / g.pw, S = (g.T / g.pt) * gh * gw;
  const int64_t n = g.B * tok_count * P;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t p = e % P, bi = e / P;
    const int64_t i = bi % tok_count, b = bi / tok_count;
    const int64_t tok = tok_begin + i;
    float v = 0.0f;
    if (tok < S) {
      const int64_t f = tok / (gh * gw), h = (tok / gw) % gh, w = tok % gw;
      // p = ((c·pt + kt)·ph + kh)·pw + kw, c slowest.
      const int64_t kw = p % g.pw, kh = (p / g.pw) % g.ph, kt = (p / (g.pw * g.ph)) % g.pt,
                    c = p / (g.pw * g.ph * g.pt);
      v = dev::to_f(x[(((b * g.C + c) * g.T + f * g.pt + kt) * g.H + h * g.ph + kh) * g.W + w * g.pw + kw]);
    }
    out[e] = dev::from_f<TO>(v);
  }
}

template <typename TI, typename TO>
__global__ void unpatchify_kernel(const TI* tokens, TO* out, Grid g) {
  const int64_t P = g.C * g.pt * g.ph * g.pw, gh = g.H / g.ph, gw = g.W / g.pw, S = (g.T / g.pt) * gh * gw;
  const int64_t n = g.B * S * P;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t p = e % P, bt = e / P;
    const int64_t tok = bt % S, b = bt / S;
    const int64_t f = tok / (gh * gw), h = (tok / gw) % gh, w = tok % gw;
    // p = ((kt·ph + kh)·pw + kw)·C + c, c fastest.
    const int64_t c = p % g.C, kw = (p / g.C) % g.pw, kh = (p / (g.C * g.pw)) % g.ph, kt = p / (g.C * g.pw * g.ph);
    out[(((b * g.C + c) * g.T + f * g.pt + kt) * g.H + h * g.ph + kh) * g.W + w * g.pw + kw] =
        dev::from_f<TO>(dev::to_f(tokens[e]));
  }
}

bool valid(const Grid& g) {
  return g.B >= 0 && g.C >= 0 && g.pt > 0 && g.ph > 0 && g.pw > 0 && g.T >= 0 && g.H >= 0 && g.W >= 0 &&
         g.T % g.pt == 0 && g.H % g.ph == 0 && g.W % g.pw == 0;
}

}  // namespace

cudaError_t patchify(const void* x, FloatType x_type, void* out, FloatType out_type, int64_t B, int64_t C, int64_t T,
                     int64_t H, int64_t W, int64_t pt, int64_t ph, int64_t pw, int64_t tok_begin, int64_t tok_count,
                     cudaStream_t stream) {
  const Grid g{B, C, T, H, W, pt, ph, pw};
  if (!valid(g) || tok_begin < 0 || tok_count < 0) return cudaErrorInvalidValue;
  const int64_t n = B * tok_count * g.P();
  if (n == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(x_type, TI, {
    VGEN_DISPATCH_FB(out_type, TO, {
      patchify_kernel<TI, TO><<<dev::grid_for(n, 256), 256, 0, stream>>>(static_cast<const TI*>(x),
                                                                           static_cast<TO*>(out), g, tok_begin,
                                                                           tok_count);
      return cudaGetLastError();
    });
  });
}

cudaError_t unpatchify(const void* tokens, FloatType t_type, void* out, FloatType out_type, int64_t B, int64_t C,
                       int64_t T, int64_t H, int64_t W, int64_t pt, int64_t ph, int64_t pw, cudaStream_t stream) {
  const Grid g{B, C, T, H, W, pt, ph, pw};
  if (!valid(g)) return cudaErrorInvalidValue;
  const int64_t n = B * g.S() * g.P();
  if (n == 0) return cudaSuccess;
  VGEN_DISPATCH_FB(t_type, TI, {
    VGEN_DISPATCH_FB(out_type, TO, {
      unpatchify_kernel<TI, TO><<<dev::grid_for(n, 256), 256, 0, stream>>>(static_cast<const TI*>(tokens),
                                                                             static_cast<TO*>(out), g);
      return cudaGetLastError();
    });
  });
}

}  // namespace vgen::kern
