// Byte-level BPE tokenizer read from a Hugging Face tokenizer.json (the `tokenizers` library's
// format), as Qwen2/Qwen3 ship it: model BPE (vocab + merges, "a b" strings or [a, b] pairs),
// normalizer NFC (or none), pre-tokenizer Split(Qwen2 regex, Isolated) + ByteLevel (no prefix
// space, no regex of its own), decoder ByteLevel. Any other layout is refused naming the file and
// the part (kModel).
//
// encode() is tokenizers' Tokenizer::encode with add_special_tokens=False, as apply_chat_template
// tokenizes (the post_processor is not applied, whatever it is): added tokens are split out first,
// leftmost-longest, the ones not `normalized` on the raw text, the others on the normalized text
// (lstrip/rstrip take the whitespace beside a match along); the text between them is normalized,
// split by the regex, mapped to bytes and merged by rank (lowest rank first, leftmost among equal
// ranks).
//
// Input that is not well-formed UTF-8 is first decoded as Python's bytes.decode("utf-8",
// errors="replace") does (one U+FFFD per maximal ill-formed subpart), so every byte string encodes.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace vgen {

struct BpeAddedToken {
  std::string content;
  int64_t id = 0;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

class BpeTokenizer {
 public:
  // Reads `path` (a tokenizer.json). Throws kModel naming the file for an unreadable file or an
  // unsupported layout.
  static BpeTokenizer from_file(const std::string& path);
  // The same from JSON text; `name` stands for the file in messages.
  static BpeTokenizer from_json_text(const std::string& text, const std::string& name);

  std::vector<int64_t> encode(const std::string& text) const;
  // ByteLevel decoding (bytes of each token, then UTF-8 with U+FFFD replacement); ids outside the
  // vocabulary are skipped, special added tokens too when skip_special.
  std::string decode(const std::vector<int64_t>& ids, bool skip_special = false) const;

  // Id of an added token's content or of a vocabulary entry (its tokenizer.json spelling), or −1.
  int64_t token_id(const std::string& token) const;
  int64_t vocab_size() const { return vocab_size_; }  // largest id + 1
  const std::vector<BpeAddedToken>& added_tokens() const { return added_; }
  const std::string& name() const { return name_; }

 private:
  struct Merge {
    int32_t rank;
    int32_t id;
  };
  struct Segment;  // a part of the text: an added token's id or text to pre-tokenize

  friend struct BpeTokenizerLoader;  // bpe_tokenizer_load.cpp
  BpeTokenizer() = default;
  std::vector<Segment> split_added(const std::string& text, bool normalized_pass) const;
  void encode_piece(const std::string& bytes, std::vector<int64_t>& out) const;

  std::string name_;
  bool nfc_ = false;
  bool ignore_merges_ = false;
  int64_t unk_id_ = -1;
  bool fuse_unk_ = false;
  int64_t vocab_size_ = 0;
  std::unordered_map<std::string, int32_t> by_bytes_;    // token bytes → id
  std::unordered_map<std::string, int64_t> by_text_;     // tokenizer.json spelling → id
  std::unordered_map<int64_t, std::string> id_bytes_;    // id → bytes the decoder writes
  std::unordered_map<uint64_t, Merge> merges_;           // (left id, right id) → rank and merged id
  int32_t byte_id_[256] = {};                            // single-byte token ids (−1: none)
  std::vector<BpeAddedToken> added_;
  std::unordered_map<int64_t, size_t> added_by_id_;
};

}  // namespace vgen
