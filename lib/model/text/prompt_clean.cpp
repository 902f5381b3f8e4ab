#include "model/text/prompt_clean.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "model/text/html_entities.h"

namespace vgen {

bool py_isspace(char32_t c) {
  return std::binary_search(html::kPyWhitespace, html::kPyWhitespace + html::kNumPyWhitespace, c);
}

namespace {

// Entity value for an exact name (UTF-8, e.g. "amp;" or "amp"), or nullptr.
const char* find_entity(const std::string& name) {
  const html::HtmlEntity* b = html::kHtml5Entities;
  const html::HtmlEntity* e = b + html::kNumHtml5Entities;
  auto it = std::lower_bound(b, e, name, [](const html::HtmlEntity& x, const std::string& k) {
    return std::strcmp(x.name, k.c_str()) < 0;
  });
  return (it != e && name == it->name) ? it->value : nullptr;
}

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_hex(char32_t c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_val(char32_t c) { return is_digit(c) ? int(c - '0') : (c >= 'a' && c <= 'f') ? int(c - 'a' + 10) : int(c - 'A' + 10); }

// Characters that end an entity name in Python's `[^\t\n\f <&#;]{1,32}`.
bool ends_name(char32_t c) { return c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' || c == ';'; }

// Python's _replace_charref for a numeric reference (num saturated above 0x10FFFF).
void append_numeric(std::u32string& out, uint64_t num) {
  const html::InvalidCharref* b = html::kInvalidCharrefs;
  const html::InvalidCharref* e = b + html::kNumInvalidCharrefs;
  auto it = std::lower_bound(b, e, num, [](const html::InvalidCharref& x, uint64_t k) { return x.num < k; });
  if (it != e && it->num == num) {
    out.push_back(it->replacement);
    return;
  }
  if ((num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) {
    out.push_back(0xFFFD);
    return;
  }
  if (std::binary_search(html::kInvalidCodepoints, html::kInvalidCodepoints + html::kNumInvalidCodepoints,
                         char32_t(num)))
    return;  // unescapes to nothing
  out.push_back(char32_t(num));
}

}  // namespace

std::u32string html_unescape(const std::u32string& s) {
  if (s.find(U'&') == std::u32string::npos) return s;
  std::u32string out;
  out.reserve(s.size());
  size_t n = s.size(), i = 0;
  while (i < n) {
    if (s[i] != U'&') {
      out.push_back(s[i++]);
      continue;
    }
    size_t j = i + 1;
    if (j < n && s[j] == U'#') {
      // `#[0-9]+;?` or `#[xX][0-9a-fA-F]+;?`
      size_t k = j + 1;
      bool hex = false;
      if (k < n && is_digit(s[k])) {
      } else if (k + 1 < n && (s[k] == U'x' || s[k] == U'X') && is_hex(s[k + 1])) {
        hex = true;
        ++k;
      } else {
        out.push_back(s[i++]);  // no match at this '&'
        continue;
      }
      uint64_t num = 0;
      for (; k < n && (hex ? is_hex(s[k]) : is_digit(s[k])); ++k) {
        num = num * (hex ? 16 : 10) + uint64_t(hex ? hex_val(s[k]) : int(s[k] - '0'));
        if (num > 0x110000) num = 0x110000;  // saturate: anything past U+10FFFF behaves the same
      }
      if (k < n && s[k] == U';') ++k;
      append_numeric(out, num);
      i = k;
      continue;
    }
    // Named: `[^\t\n\f <&#;]{1,32};?`
    size_t e = j;
    while (e < n && e - j < 32 && !ends_name(s[e])) ++e;
    if (e == j) {
      out.push_back(s[i++]);
      continue;
    }
    if (e < n && s[e] == U';') ++e;
    std::u32string name = s.substr(j, e - j);
    if (const char* v = find_entity(utf8_encode(name))) {
      out += utf8_decode(v);
    } else {
      // Longest prefix (length ≥ 2) that is an entity name, as Python does.
      bool found = false;
      for (size_t x = name.size() - 1; x >= 2 && x < name.size(); --x) {
        if (const char* pv = find_entity(utf8_encode(name.substr(0, x)))) {
          out += utf8_decode(pv);
          out += name.substr(x);
          found = true;
          break;
        }
      }
      if (!found) {
        out.push_back(U'&');
        out += name;
      }
    }
    i = e;
  }
  return out;
}

std::string html_unescape(const std::string& utf8) { return utf8_encode(html_unescape(utf8_decode(utf8))); }

std::u32string collapse_whitespace(const std::u32string& s) {
  // strip + collapse + strip = the non-space runs joined by single spaces.
  std::u32string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (char32_t c : s) {
    if (py_isspace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(U' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::string prompt_clean(const std::string& utf8) {
  std::u32string s = utf8_decode(utf8);
  s = html_unescape(html_unescape(s));
  return utf8_encode(collapse_whitespace(s));
}

}  // namespace vgen
