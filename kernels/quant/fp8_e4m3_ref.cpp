#include "kernels/quant/fp8_e4m3_ref.h"

#include <cmath>
#include <algorithm>
#include <cstring>

namespace vgen::kern {

uint8_t fp8_e4m3_encode(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const uint8_t sign = uint8_t((bits >> 24) & 0x80u);
  if (std::isnan(x)) return 0x7Fu;  // the hardware's canonical NaN, whatever the sign (H200: 0x7F for -NaN)
  const float a = std::fabs(x);
  if (a >= kFp8E4M3Max) return uint8_t(sign | 0x7Eu);  // satfinite (448 itself is 0x7E)
  // Quantise to the grid of the binade of a: normals have spacing 2^(e-3) for a in [2^e, 2^(e+1)),
  // e >= -6; below 2^-6 the subnormal spacing 2^-9. nearbyint rounds half to even (default mode).
  int e;
  std::frexp(a, &e);  // a = m · 2^e, m in [0.5, 1)
  const int exp = std::max(e - 1, -6);
  const float step = std::ldexp(1.0f, exp - 3);
  const float q = std::nearbyint(a / step) * step;  // exact: a/step < 2^24
  if (q == 0.0f) return sign;
  if (q >= kFp8E4M3Max) return uint8_t(sign | 0x7Eu);
  int qe;
  const float qm = std::frexp(q, &qe);  // q = qm · 2^qe
  const int unbiased = qe - 1;
  if (unbiased < -6) {  // subnormal: q = mant · 2^-9
    const int mant = int(std::lround(q / std::ldexp(1.0f, -9)));
    return uint8_t(sign | mant);
  }
  const int mant = int(std::lround((qm * 2.0f - 1.0f) * 8.0f));  // 3 bits
  return uint8_t(sign | uint8_t((unbiased + 7) << 3) | uint8_t(mant));
}

float fp8_e4m3_decode(uint8_t b) {
  const bool neg = b & 0x80u;
  const int e = (b >> 3) & 0xF, m = b & 0x7;
  float v;
  if (e == 0xF && m == 0x7)
    v = std::nanf("");
  else if (e == 0)
    v = std::ldexp(float(m), -9);
  else
    v = std::ldexp(1.0f + float(m) / 8.0f, e - 7);
  return neg ? -v : v;
}

}  // namespace vgen::kern
