#include "core/utf8.h"

namespace vgen {

namespace {

// The sequence at p[i] (i < n): its length and code point, or (ill-formed) the length of its maximal
// ill-formed subpart and false.
bool decode_one(const unsigned char* p, size_t n, size_t i, size_t* len_out, char32_t* cp_out) {
  const unsigned c = p[i];
  if (c < 0x80) {
    *len_out = 1, *cp_out = c;
    return true;
  }
  size_t len = 0;
  unsigned lo2 = 0x80, hi2 = 0xBF;  // allowed range of the second byte
  char32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F, lo2 = c == 0xE0 ? 0xA0 : 0x80, hi2 = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07, lo2 = c == 0xF0 ? 0x90 : 0x80, hi2 = c == 0xF4 ? 0x8F : 0xBF;
  size_t k = 1;
  while (len > 0 && k < len && i + k < n) {
    const unsigned b = p[i + k];
    if (!(k == 1 ? (b >= lo2 && b <= hi2) : (b >= 0x80 && b <= 0xBF))) break;
    cp = (cp << 6) | (b & 0x3F);
    ++k;
  }
  if (len == 0 || k < len) {
    *len_out = k;
    return false;
  }
  *len_out = len, *cp_out = cp;
  return true;
}

}  // namespace

std::u32string utf8_decode(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0, len = 0; i < s.size(); i += len) {
    char32_t cp = 0;
    out.push_back(decode_one(p, s.size(), i, &len, &cp) ? cp : char32_t(0xFFFD));
  }
  return out;
}

size_t first_invalid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0, len = 0; i < s.size(); i += len) {
    char32_t cp = 0;
    if (!decode_one(p, s.size(), i, &len, &cp)) return i;
  }
  return std::string::npos;
}

std::string utf8_encode(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (c < 0x80) {
      out.push_back(char(c));
    } else if (c < 0x800) {
      out.push_back(char(0xC0 | (c >> 6)));
      out.push_back(char(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(char(0xE0 | (c >> 12)));
      out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(char(0x80 | (c & 0x3F)));
    } else {
      out.push_back(char(0xF0 | (c >> 18)));
      out.push_back(char(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(char(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

}  // namespace vgen
