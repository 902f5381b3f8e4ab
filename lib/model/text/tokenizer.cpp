#include "model/text/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "core/json.h"
#include "core/log.h"
#include "io/diffusers_dir.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// Bounds far above T5's 100 sentinels and UMT5's 256,384 ids: every id and the vocabulary size
// stay in int, and the sentinel table stays small.
constexpr int kMaxExtraIds = 1 << 16;
constexpr int64_t kMaxTokenId = int64_t(1) << 30;

// A special token in tokenizer_config.json is a string or an AddedToken object {"content": ...}.
std::string token_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return {};
}

// `<extra_id_N>` → N, else −1.
int extra_id_index(const std::string& t) {
  static const std::regex re("<extra_id_([0-9]{1,9})>");
  std::smatch m;
  if (!std::regex_match(t, m, re)) return -1;
  return std::stoi(m[1].str());
}

Json read_optional_json(const fs::path& p) {
  if (!fs::exists(p)) return Json::object();
  Json j = read_json_file(p.string(), ExitCode::kModel);
  return j.is_object() ? j : Json::object();
}

}  // namespace

int64_t tokenizer_max_length(const std::string& dir) {
  const Json cfg = read_optional_json(fs::path(dir) / "tokenizer_config.json");
  int64_t n = 0;
  // transformers writes int(1e30) when a tokenizer has no limit: not a number of tokens.
  if (!cfg.contains("model_max_length") || !json_as(cfg["model_max_length"], &n) || n < 1 || n > kMaxTokenId) return 0;
  return n;
}

T5Tokenizer::T5Tokenizer(const std::string& dir) : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  fs::path model = fs::path(dir) / "spiece.model";
  model_path_ = model.string();
  VGEN_CHECK(fs::is_regular_file(model), ExitCode::kModel,
             "tokenizer: SentencePiece model {} not found (expected the Diffusers tokenizer/ folder)", model_path_);
  auto st = sp_->Load(model_path_);
  VGEN_CHECK(st.ok(), ExitCode::kModel, "tokenizer: cannot load SentencePiece model {}: {}", model_path_,
             st.ToString());
  sp_size_ = sp_->GetPieceSize();

  Json cfg = read_optional_json(fs::path(dir) / "tokenizer_config.json");
  Json stm = read_optional_json(fs::path(dir) / "special_tokens_map.json");
  auto text_of = [&](const char* key, const char* dflt) {
    std::string t = cfg.contains(key) ? token_text(cfg[key]) : std::string();
    if (t.empty() && stm.contains(key)) t = token_text(stm[key]);
    return t.empty() ? std::string(dflt) : t;
  };

  // Explicit id ↔ text assignments (newer transformers save them) take precedence.
  std::map<std::string, int64_t> explicit_ids;
  if (cfg.contains("added_tokens_decoder") && cfg["added_tokens_decoder"].is_object()) {
    for (auto& [id_str, v] : cfg["added_tokens_decoder"].items()) {
      std::string t = token_text(v);
      int64_t id = -1;
      try {
        size_t used = 0;
        id = std::stoll(id_str, &used);
        if (used != id_str.size()) id = -1;
      } catch (const std::exception&) {
      }
      VGEN_CHECK(!t.empty() && id >= 0 && id < kMaxTokenId, ExitCode::kModel,
                 "tokenizer_config.json in {}: bad added_tokens_decoder entry '{}'", dir, id_str);
      explicit_ids[t] = id;
    }
  }

  // Sentinel count: `extra_ids` if given, else the `<extra_id_N>` tokens listed anywhere.
  std::vector<std::string> listed;
  for (const char* key : {"additional_special_tokens", "extra_special_tokens"})
    for (const Json* j : {&cfg, &stm})
      if (j->contains(key) && (*j)[key].is_array())
        for (auto& v : (*j)[key]) listed.push_back(token_text(v));
  for (auto& [t, id] : explicit_ids) listed.push_back(t);
  if (cfg.contains("extra_ids") && cfg["extra_ids"].is_number_integer()) {
    VGEN_CHECK(json_as(cfg["extra_ids"], &extra_ids_), ExitCode::kModel,
               "tokenizer_config.json in {}: extra_ids {} is out of range", dir, cfg["extra_ids"].dump());
  } else {
    for (auto& t : listed) extra_ids_ = std::max(extra_ids_, extra_id_index(t) + 1);
  }
  VGEN_CHECK(extra_ids_ >= 0 && extra_ids_ <= kMaxExtraIds, ExitCode::kModel,
             "tokenizer_config.json in {}: {} sentinel tokens (extra_ids) is outside [0, {}]", dir, extra_ids_,
             kMaxExtraIds);

  auto resolve = [&](const std::string& t) -> int64_t {
    if (auto it = explicit_ids.find(t); it != explicit_ids.end()) return it->second;
    int n = extra_id_index(t);
    if (n >= 0 && n < extra_ids_) return sp_size_ + extra_ids_ - 1 - n;
    int id = sp_->PieceToId(t);
    if (id == sp_->unk_id() && t != sp_->IdToPiece(id)) return -1;
    return id;
  };
  auto must = [&](const std::string& t, const char* role) {
    int64_t id = resolve(t);
    VGEN_CHECK(id >= 0, ExitCode::kModel, "tokenizer {}: {} token '{}' is neither a SentencePiece piece nor an added token",
               dir, role, t);
    return id;
  };
  std::string pad = text_of("pad_token", "<pad>"), eos = text_of("eos_token", "</s>"), unk = text_of("unk_token", "<unk>");
  pad_id_ = must(pad, "pad");
  eos_id_ = must(eos, "eos");
  unk_id_ = must(unk, "unk");

  specials_[pad] = pad_id_;
  specials_[eos] = eos_id_;
  specials_[unk] = unk_id_;
  for (int n = 0; n < extra_ids_; ++n) {
    std::string t = "<extra_id_" + std::to_string(n) + ">";
    specials_[t] = resolve(t);
  }
  for (auto& t : listed) {
    if (t.empty() || specials_.count(t)) continue;
    int64_t id = resolve(t);
    if (id >= 0) specials_[t] = id;
    else log_warn_job("tokenizer {}: special token '{}' has no id; treated as text", dir, t);
  }
}

T5Tokenizer::~T5Tokenizer() = default;

int64_t T5Tokenizer::vocab_size() const {
  int64_t v = sp_size_ + extra_ids_;
  for (auto& [t, id] : specials_) v = std::max(v, id + 1);
  return v;
}

int64_t T5Tokenizer::special_token_id(const std::string& token) const {
  auto it = specials_.find(token);
  return it == specials_.end() ? -1 : it->second;
}

std::vector<int64_t> T5Tokenizer::encode(const std::string& text) const {
  std::vector<int64_t> ids;
  auto flush = [&](size_t b, size_t e) {
    if (e <= b) return;
    std::vector<int> piece_ids;
    auto st = sp_->Encode(std::string_view(text).substr(b, e - b), &piece_ids);
    VGEN_CHECK(st.ok(), ExitCode::kInput, "tokenizer {}: cannot encode text: {}", model_path_, st.ToString());
    ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
  };
  // Split out literal special tokens (leftmost-longest), SentencePiece on the text between them.
  size_t seg = 0, pos = 0, n = text.size();
  while (pos < n) {
    size_t best_len = 0;
    int64_t best_id = -1;
    // The candidates are the map entries starting with this byte (a contiguous range).
    for (auto it = specials_.lower_bound(std::string(1, text[pos]));
         it != specials_.end() && it->first[0] == text[pos]; ++it) {
      const std::string& t = it->first;
      if (t.size() > best_len && text.compare(pos, t.size(), t) == 0) best_len = t.size(), best_id = it->second;
    }
    if (best_len > 0) {
      flush(seg, pos);
      ids.push_back(best_id);
      pos += best_len;
      seg = pos;
    } else {
      ++pos;
    }
  }
  flush(seg, n);
  return ids;
}

std::vector<int64_t> T5Tokenizer::encode_with_eos(const std::string& text, int max_len) const {
  VGEN_CHECK(max_len >= 1, ExitCode::kRecipe, "max_sequence_length must be at least 1, got {}", max_len);
  std::vector<int64_t> ids = encode(text);
  if (ids.size() > size_t(max_len - 1)) ids.resize(size_t(max_len - 1));
  ids.push_back(eos_id_);
  return ids;
}

TokenizedBatch T5Tokenizer::tokenize(const std::vector<std::string>& texts, int max_len) const {
  VGEN_CHECK(max_len >= 1, ExitCode::kRecipe, "max_sequence_length must be at least 1, got {}", max_len);
  int64_t B = int64_t(texts.size()), L = max_len;
  TokenizedBatch out;
  out.input_ids = Tensor::empty({B, L}, DType::kI64);        // [B, L]
  out.attention_mask = Tensor::zeros({B, L}, DType::kI64);   // [B, L]
  int64_t* ids = out.input_ids.data<int64_t>();
  int64_t* mask = out.attention_mask.data<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int64_t> row = encode_with_eos(texts[size_t(b)], max_len);
    for (int64_t j = 0; j < L; ++j) {
      bool real = j < int64_t(row.size());
      ids[b * L + j] = real ? row[size_t(j)] : pad_id_;
      mask[b * L + j] = real ? 1 : 0;
    }
    out.lengths.push_back(int64_t(row.size()));
  }
  return out;
}

}  // namespace vgen
