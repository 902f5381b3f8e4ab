// T5 tokenizer (T5TokenizerFast conventions) on the SentencePiece model `tokenizer/spiece.model`:
// text pieces through SentencePiece, truncation to max_len − 1 pieces, EOS appended, right padding
// with the pad id, attention mask 1 on real tokens (incl. EOS). No BOS.
//
// Special tokens (pad/eos/unk and the sentinels `<extra_id_N>`) written literally in a text are
// split out and mapped to their ids, as the HF tokenizers do. Sentinel ids follow T5Tokenizer:
// `<extra_id_N>` = sp_pieces + extra_ids − 1 − N (extra_id_0 is the last id), unless
// tokenizer_config.json lists them in `added_tokens_decoder`, which then wins. The text between
// special tokens is encoded by SentencePiece segment by segment (each segment gets SentencePiece's
// dummy "▁" prefix, i.e. the `legacy`/prepend "always" behaviour); ordinary prompts contain no
// special tokens and are one segment.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace vgen {

struct TokenizedBatch {
  Tensor input_ids;              // [B, L] i64
  Tensor attention_mask;         // [B, L] i64
  std::vector<int64_t> lengths;  // real tokens per row (incl. EOS)
};

// tokenizer_config.json's `model_max_length` in `dir` (the longest input the text model was made
// for; 512 in Wan's): 0 when the file or the key is absent, or when it holds transformers' "no
// limit" sentinel (a huge number). kModel when the file is not JSON.
int64_t tokenizer_max_length(const std::string& dir);

class T5Tokenizer {
 public:
  // `dir` holds spiece.model and optionally tokenizer_config.json / special_tokens_map.json.
  // Throws kModel naming the path if spiece.model is missing or unreadable.
  explicit T5Tokenizer(const std::string& dir);
  ~T5Tokenizer();
  T5Tokenizer(const T5Tokenizer&) = delete;
  T5Tokenizer& operator=(const T5Tokenizer&) = delete;

  // Token ids of `text` without EOS, untruncated.
  std::vector<int64_t> encode(const std::string& text) const;
  // encode() truncated to max_len − 1 ids, EOS appended (max_len ≥ 1).
  std::vector<int64_t> encode_with_eos(const std::string& text, int max_len) const;
  // Padded batch [B, max_len] (the pipeline's padding="max_length", truncation=True).
  TokenizedBatch tokenize(const std::vector<std::string>& texts, int max_len) const;

  int64_t pad_id() const { return pad_id_; }
  int64_t eos_id() const { return eos_id_; }
  int64_t unk_id() const { return unk_id_; }
  int64_t sp_vocab_size() const { return sp_size_; }
  int64_t vocab_size() const;  // SentencePiece pieces + extra ids (+ other added tokens)
  int extra_ids() const { return extra_ids_; }
  const std::string& model_path() const { return model_path_; }
  // Special-token id of a literal string such as "<extra_id_3>", or −1.
  int64_t special_token_id(const std::string& token) const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::string model_path_;
  int64_t sp_size_ = 0;
  int extra_ids_ = 0;
  int64_t pad_id_ = 0, eos_id_ = 1, unk_id_ = 2;
  std::map<std::string, int64_t> specials_;  // literal token text → id, matched leftmost-longest
};

}  // namespace vgen
