#include "model/text/bpe_tokenizer_split.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "core/error.h"

namespace vgen::bpe {

const char* const kQwen2SplitRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool is_letter(char32_t c) { return (U_GET_GC_MASK(UChar32(c)) & U_GC_L_MASK) != 0; }
bool is_number(char32_t c) { return (U_GET_GC_MASK(UChar32(c)) & U_GC_N_MASK) != 0; }
bool is_space(char32_t c) {
  if ((c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85) return true;
  return c > 0x7F && (U_GET_GC_MASK(UChar32(c)) & U_GC_Z_MASK) != 0;
}

std::string nfc(const std::string& utf8) {
  bool ascii = true;
  for (unsigned char b : utf8) ascii = ascii && b < 0x80;
  if (ascii) return utf8;  // ASCII is always NFC
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFCInstance(err);
  VGEN_CHECK(U_SUCCESS(err), ExitCode::kInternal, "ICU has no NFC normalizer: {}", u_errorName(err));
  const icu::UnicodeString in = icu::UnicodeString::fromUTF8(utf8);
  if (n->isNormalized(in, err) && U_SUCCESS(err)) return utf8;
  err = U_ZERO_ERROR;
  const icu::UnicodeString out = n->normalize(in, err);
  VGEN_CHECK(U_SUCCESS(err), ExitCode::kInternal, "ICU NFC failed: {}", u_errorName(err));
  std::string s;
  out.toUTF8String(s);
  return s;
}

namespace {

bool is_crlf(char32_t c) { return c == U'\r' || c == U'\n'; }
// [^\s\p{L}\p{N}]
bool is_other(char32_t c) { return !is_space(c) && !is_letter(c) && !is_number(c); }

// Simple case folding onto the ASCII letters of the contractions: only U+017F (long s) folds onto
// one of them (s) besides the ASCII capitals.
char32_t fold(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c + 32;
  if (c == 0x17F) return U's';
  return c;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at i: the match length or 0.
size_t match_contraction(const std::u32string& t, size_t i) {
  if (t[i] != U'\'' || i + 1 >= t.size()) return 0;
  static const char* const kTails[] = {"s", "t", "re", "ve", "m", "ll", "d"};
  for (const char* tail : kTails) {
    size_t k = 0;
    while (tail[k] && i + 1 + k < t.size() && fold(t[i + 1 + k]) == char32_t(tail[k])) ++k;
    if (!tail[k]) return 1 + k;
  }
  return 0;
}

size_t run_end(const std::u32string& t, size_t i, bool (*pred)(char32_t)) {
  while (i < t.size() && pred(t[i])) ++i;
  return i;
}

// The end of the one match that starts at i (always > i).
size_t match_at(const std::u32string& t, size_t i) {
  const size_t n = t.size();
  if (size_t len = match_contraction(t, i)) return i + len;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!is_crlf(t[i]) && !is_letter(t[i]) && !is_number(t[i]) && i + 1 < n && is_letter(t[i + 1]))
    return run_end(t, i + 1, is_letter);
  if (is_letter(t[i])) return run_end(t, i, is_letter);
  // \p{N}
  if (is_number(t[i])) return i + 1;
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  size_t j = (t[i] == U' ' && i + 1 < n && is_other(t[i + 1])) ? i + 1 : i;
  if (is_other(t[j])) return run_end(t, run_end(t, j, is_other), is_crlf);
  // Only whitespace is left at i.
  const size_t ws_end = run_end(t, i, is_space);
  // \s*[\r\n]+ : the greedy \s* backs off to the last line break of the run.
  for (size_t k = ws_end; k > i; --k)
    if (is_crlf(t[k - 1])) return k;
  // \s+(?!\S) : the whole run at the end of the text, else all but its last character.
  if (ws_end == n || ws_end - i >= 2) return ws_end == n ? n : ws_end - 1;
  return ws_end;  // \s+
}

}  // namespace

std::vector<std::pair<size_t, size_t>> qwen2_split(const std::u32string& text) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < text.size();) {
    const size_t e = match_at(text, i);
    out.emplace_back(i, e);
    i = e;
  }
  return out;
}

const std::array<char32_t, 256>& byte_to_char() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[size_t(b)] = printable ? char32_t(b) : next++;
    }
    return t;
  }();
  return table;
}

int char_to_byte(char32_t c) {
  if (c < 256) {
    const bool printable = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
    return printable ? int(c) : -1;
  }
  if (c >= 256 + 68) return -1;  // 68 bytes are not printable
  const auto& t = byte_to_char();
  for (int b = 0; b < 256; ++b)
    if (t[size_t(b)] == c) return b;
  return -1;
}

}  // namespace vgen::bpe
