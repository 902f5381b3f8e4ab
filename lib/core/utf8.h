// UTF-8 ⇄ code points (Unicode table 3-7: no overlong forms, surrogates or code points past
// U+10FFFF). Ill-formed input decodes to one U+FFFD per maximal ill-formed subpart, as Python's
// bytes.decode("utf-8", errors="replace") does.
#pragma once
#include <cstddef>
#include <string>

namespace vgen {

std::u32string utf8_decode(const std::string& s);
std::string utf8_encode(const std::u32string& s);
// Offset of the first byte of `s` that is not part of well-formed UTF-8, or npos.
size_t first_invalid_utf8(const std::string& s);
// `s` with every ill-formed subpart replaced by U+FFFD.
inline std::string replace_invalid_utf8(const std::string& s) { return utf8_encode(utf8_decode(s)); }

}  // namespace vgen
