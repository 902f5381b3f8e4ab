// The text side of the byte-level BPE tokenizer: Unicode classes and NFC through ICU, the Qwen2
// pre-tokenizer split and the GPT-2 byte ↔ character map of the ByteLevel step.
//
// The Qwen2 split regex (tokenizers' `Split` pre-tokenizer, behaviour Isolated, run by Oniguruma)
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// is scanned by hand over code points with the regex's own alternation order and backtracking;
// \p{L} and \p{N} are the general categories L and N, \s is Oniguruma's Unicode \s (U+0009..U+000D,
// U+0085 and the categories Zs, Zl, Zp). Every code point starts a match, so the pieces tile the text.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace vgen::bpe {

bool is_letter(char32_t c);  // \p{L}
bool is_number(char32_t c);  // \p{N}
bool is_space(char32_t c);   // \s

// NFC of well-formed UTF-8 (ICU).
std::string nfc(const std::string& utf8);

// The Qwen2 regex of tokenizers' Split pre-tokenizer, as it appears in tokenizer.json.
extern const char* const kQwen2SplitRegex;

// [begin, end) code-point ranges of the pieces of `text`, in order, covering it.
std::vector<std::pair<size_t, size_t>> qwen2_split(const std::u32string& text);

// GPT-2's byte → character map of the ByteLevel pre-tokenizer and decoder, and its inverse
// (−1 for a character that is not one of the 256).
const std::array<char32_t, 256>& byte_to_char();
int char_to_byte(char32_t c);

}  // namespace vgen::bpe
