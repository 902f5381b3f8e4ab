// Python's html.unescape tables and str.isspace code points, generated from CPython by
// scripts/gen_html_entities.py into html_entities.cpp (regenerate, do not edit).
#pragma once
#include <cstddef>

namespace vgen::html {

// One HTML5 named character reference: `name` is the text after '&' (with or without the ';',
// exactly as the keys of html.entities.html5), `value` its UTF-8 replacement (1 or 2 code points).
struct HtmlEntity {
  const char* name;
  const char* value;
};
extern const HtmlEntity kHtml5Entities[];  // sorted bytewise by name
extern const size_t kNumHtml5Entities;

// html._invalid_charrefs: numeric references replaced by another code point (e.g. &#128; → €).
struct InvalidCharref {
  char32_t num;
  char32_t replacement;
};
extern const InvalidCharref kInvalidCharrefs[];  // sorted by num
extern const size_t kNumInvalidCharrefs;

// html._invalid_codepoints: numeric references that unescape to nothing.
extern const char32_t kInvalidCodepoints[];  // sorted
extern const size_t kNumInvalidCodepoints;

// Code points c with chr(c).isspace() (= `\s` of a str regex and str.strip()).
extern const char32_t kPyWhitespace[];  // sorted
extern const size_t kNumPyWhitespace;

}  // namespace vgen::html
