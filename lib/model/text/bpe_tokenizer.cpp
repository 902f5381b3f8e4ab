#include "model/text/bpe_tokenizer.h"

#include <queue>
#include <tuple>

#include "core/utf8.h"
#include "model/text/bpe_tokenizer_split.h"

namespace vgen {

struct BpeTokenizer::Segment {
  int64_t added_id;  // −1: `text` is to be tokenized
  std::string text;
};

int64_t BpeTokenizer::token_id(const std::string& token) const {
  for (const BpeAddedToken& a : added_)
    if (a.content == token) return a.id;
  auto it = by_text_.find(token);
  return it == by_text_.end() ? -1 : it->second;
}

namespace {

// Rust's char::is_whitespace (Unicode White_Space), the whitespace lstrip/rstrip take along.
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Bytes of the whitespace code points that end (back) or start (!back) s[lo, hi).
size_t white_run(const std::string& s, size_t lo, size_t hi, bool back) {
  const std::u32string cps = utf8_decode(s.substr(lo, hi - lo));
  size_t bytes = 0;
  for (size_t k = 0; k < cps.size(); ++k) {
    const char32_t c = cps[back ? cps.size() - 1 - k : k];
    if (!is_white_space(c)) break;
    bytes += utf8_encode(std::u32string(1, c)).size();
  }
  return bytes;
}

}  // namespace

// Splits `text` at the added tokens of one kind (normalized or not), leftmost-longest.
std::vector<BpeTokenizer::Segment> BpeTokenizer::split_added(const std::string& text, bool normalized_pass) const {
  std::vector<Segment> out;
  size_t seg = 0, pos = 0;
  const size_t n = text.size();
  while (pos < n) {
    const BpeAddedToken* best = nullptr;
    for (const BpeAddedToken& a : added_)
      if (a.normalized == normalized_pass && (!best || a.content.size() > best->content.size()) &&
          text.compare(pos, a.content.size(), a.content) == 0)
        best = &a;
    if (!best) {
      ++pos;
      continue;
    }
    size_t start = pos, end = pos + best->content.size();
    if (best->lstrip) start -= white_run(text, seg, start, true);
    if (best->rstrip) end += white_run(text, end, n, false);
    if (start > seg) out.push_back({-1, text.substr(seg, start - seg)});
    out.push_back({best->id, {}});
    pos = seg = end;
  }
  if (seg < n) out.push_back({-1, text.substr(seg)});
  return out;
}

// BPE of one pre-tokenized piece (raw bytes): lowest merge rank first, leftmost among equals.
void BpeTokenizer::encode_piece(const std::string& bytes, std::vector<int64_t>& out) const {
  if (ignore_merges_) {
    if (auto it = by_bytes_.find(bytes); it != by_bytes_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  struct Sym {
    int32_t id;
    int32_t prev, next;  // −1 at the ends
    bool alive;
  };
  std::vector<Sym> syms;
  syms.reserve(bytes.size());
  for (unsigned char b : bytes) {
    int32_t id = byte_id_[b];
    if (id < 0) {
      if (unk_id_ < 0) continue;  // no token and no unk: the byte is dropped, as tokenizers does
      if (fuse_unk_ && !syms.empty() && syms.back().id == int32_t(unk_id_)) continue;
      id = int32_t(unk_id_);
    }
    const int32_t k = int32_t(syms.size());
    syms.push_back({id, k - 1, -1, true});
    if (k > 0) syms[size_t(k - 1)].next = k;
  }
  using Cand = std::tuple<int32_t, int32_t, int32_t, int32_t>;  // rank, position, left id, right id
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto push_pair = [&](int32_t i) {
    if (i < 0 || syms[size_t(i)].next < 0) return;
    const int32_t l = syms[size_t(i)].id, r = syms[size_t(syms[size_t(i)].next)].id;
    auto it = merges_.find((uint64_t(uint32_t(l)) << 32) | uint32_t(r));
    if (it != merges_.end()) heap.emplace(it->second.rank, i, l, r);
  };
  for (int32_t i = 0; i + 1 < int32_t(syms.size()); ++i) push_pair(i);
  while (!heap.empty()) {
    const auto [rank, i, l, r] = heap.top();
    heap.pop();
    Sym& s = syms[size_t(i)];
    if (!s.alive || s.id != l || s.next < 0 || syms[size_t(s.next)].id != r) continue;  // stale
    Sym& nx = syms[size_t(s.next)];
    s.id = merges_.at((uint64_t(uint32_t(l)) << 32) | uint32_t(r)).id;
    nx.alive = false;
    s.next = nx.next;
    if (s.next >= 0) syms[size_t(s.next)].prev = i;
    push_pair(s.prev);
    push_pair(i);
  }
  for (const Sym& s : syms)
    if (s.alive) out.push_back(s.id);
}

std::vector<int64_t> BpeTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> ids;
  const std::string clean = first_invalid_utf8(text) == std::string::npos ? text : replace_invalid_utf8(text);
  for (const Segment& raw : split_added(clean, false)) {
    if (raw.added_id >= 0) {
      ids.push_back(raw.added_id);
      continue;
    }
    for (const Segment& seg : split_added(nfc_ ? bpe::nfc(raw.text) : raw.text, true)) {
      if (seg.added_id >= 0) {
        ids.push_back(seg.added_id);
        continue;
      }
      const std::u32string cps = utf8_decode(seg.text);
      for (auto [b, e] : bpe::qwen2_split(cps)) encode_piece(utf8_encode(cps.substr(b, e - b)), ids);
    }
  }
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special) const {
  std::string bytes;
  for (int64_t id : ids) {
    if (skip_special) {
      auto a = added_by_id_.find(id);
      if (a != added_by_id_.end() && added_[a->second].special) continue;
    }
    auto it = id_bytes_.find(id);
    if (it != id_bytes_.end()) bytes += it->second;
  }
  return replace_invalid_utf8(bytes);
}

}  // namespace vgen
