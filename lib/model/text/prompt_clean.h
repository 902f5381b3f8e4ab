// Prompt cleaning exactly as diffusers' WanPipeline `prompt_clean`:
//   html.unescape(html.unescape(s)) → strip() → re.sub(r"\s+", " ", s) → strip()
// on Python str semantics (Unicode code points, Python's HTML5 entity table and str.isspace).
// ftfy.fix_text is NOT applied: diffusers applies it only when the optional ftfy package is
// installed, and the reference fixtures were made without it.
#pragma once
#include <string>

#include "core/utf8.h"  // utf8_decode / utf8_encode

namespace vgen {

// chr(c).isspace() in Python.
bool py_isspace(char32_t c);

// Python's html.unescape (HTML5 named references incl. the ones accepted without ';',
// longest-prefix matching, numeric references with Python's replacement rules).
std::u32string html_unescape(const std::u32string& s);
std::string html_unescape(const std::string& utf8);

// strip() → re.sub(r"\s+", " ") → strip() with Python's Unicode whitespace.
std::u32string collapse_whitespace(const std::u32string& s);

// The full pipeline cleaning, UTF-8 in and out.
std::string prompt_clean(const std::string& utf8);

}  // namespace vgen
