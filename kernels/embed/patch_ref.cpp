#include "kernels/embed/patch_ref.h"

namespace vgen::kern {

void patchify_ref(const float* x, float* out, int64_t B, int64_t C, int64_t T, int64_t H, int64_t W, int64_t pt,
                  int64_t ph, int64_t pw, int64_t tok_begin, int64_t tok_count) {
  const int64_t gh = H / ph, gw = W / pw, S = (T / pt) * gh * gw;
  const int64_t P = C * pt * ph * pw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < tok_count; ++i) {
      float* o = out + (b * tok_count + i) * P;
      const int64_t tok = tok_begin + i;
      if (tok >= S) {
        for (int64_t p = 0; p < P; ++p) o[p] = 0.0f;
        continue;
      }
      const int64_t f = tok / (gh * gw), h = (tok / gw) % gh, w = tok % gw;
      int64_t p = 0;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t kt = 0; kt < pt; ++kt)
          for (int64_t kh = 0; kh < ph; ++kh)
            for (int64_t kw = 0; kw < pw; ++kw)
              o[p++] = x[(((b * C + c) * T + f * pt + kt) * H + h * ph + kh) * W + w * pw + kw];
    }
}

void unpatchify_ref(const float* tokens, float* out, int64_t B, int64_t C, int64_t T, int64_t H, int64_t W, int64_t pt,
                    int64_t ph, int64_t pw) {
  const int64_t gh = H / ph, gw = W / pw, S = (T / pt) * gh * gw;
  const int64_t P = C * pt * ph * pw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t tok = 0; tok < S; ++tok) {
      const float* in = tokens + (b * S + tok) * P;
      const int64_t f = tok / (gh * gw), h = (tok / gw) % gh, w = tok % gw;
      int64_t p = 0;
      for (int64_t kt = 0; kt < pt; ++kt)
        for (int64_t kh = 0; kh < ph; ++kh)
          for (int64_t kw = 0; kw < pw; ++kw)
            for (int64_t c = 0; c < C; ++c)
              out[(((b * C + c) * T + f * pt + kt) * H + h * ph + kh) * W + w * pw + kw] = in[p++];
    }
}

}  // namespace vgen::kern
