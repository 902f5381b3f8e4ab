// tokenizer.json → BpeTokenizer: the layouts Qwen2/Qwen3 ship, every other one refused by name.
#include <fstream>
#include <sstream>

#include "core/json.h"
#include "core/utf8.h"
#include "model/text/bpe_tokenizer.h"
#include "model/text/bpe_tokenizer_split.h"

namespace vgen {

namespace {

// Ids stay in int32 with room to spare (Qwen's largest is 151,668).
constexpr int64_t kMaxTokenId = int64_t(1) << 30;

std::string type_of(const Json& j) {
  return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : std::string();
}

bool is_null_or(const Json& j, const char* key, const Json& want) {
  return !j.contains(key) || j[key].is_null() || j[key] == want;
}

// A tokenizer.json token spelling → the bytes it stands for through the ByteLevel map, or false
// when a character is not one of the 256 (such a token is never produced by encode()).
bool spelling_bytes(const std::string& s, std::string* out) {
  out->clear();
  for (char32_t c : utf8_decode(s)) {
    const int b = bpe::char_to_byte(c);
    if (b < 0) return false;
    out->push_back(char(b));
  }
  return true;
}

}  // namespace

struct BpeTokenizerLoader {
  BpeTokenizer& t;

  [[noreturn]] void refuse(const std::string& what) const {
    VGEN_THROW(ExitCode::kModel, "tokenizer {}: {} (vgen reads byte-level BPE tokenizers laid out as Qwen2's)",
               t.name_, what);
  }

  void check_pipeline(const Json& j) const {
    const Json& norm = j.contains("normalizer") ? j["normalizer"] : Json();
    if (type_of(norm) == "NFC") {
      t.nfc_ = true;
    } else if (type_of(norm) == "Sequence" && norm.contains("normalizers") && norm["normalizers"].is_array()) {
      for (const Json& n : norm["normalizers"]) {
        if (type_of(n) != "NFC") refuse("normalizer '" + type_of(n) + "' is not supported (only NFC)");
        t.nfc_ = true;
      }
    } else if (!norm.is_null()) {
      refuse("normalizer '" + type_of(norm) + "' is not supported (only NFC)");
    }
    const Json& pre = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : Json();
    const bool seq = type_of(pre) == "Sequence" && pre.contains("pretokenizers") && pre["pretokenizers"].is_array() &&
                     pre["pretokenizers"].size() == 2;
    if (!seq) refuse("pre_tokenizer must be Sequence[Split(Qwen2 regex), ByteLevel]");
    const Json& split = pre["pretokenizers"][0];
    const Json& bl = pre["pretokenizers"][1];
    const bool split_ok = type_of(split) == "Split" && split.contains("pattern") && split["pattern"].is_object() &&
                          split["pattern"].contains("Regex") && split["pattern"]["Regex"] == bpe::kQwen2SplitRegex &&
                          split.value("behavior", Json()) == "Isolated" && is_null_or(split, "invert", false);
    if (!split_ok) refuse("pre_tokenizer's Split is not Qwen2's (its regex, behavior Isolated, invert false)");
    if (type_of(bl) != "ByteLevel" || !is_null_or(bl, "add_prefix_space", false) || !is_null_or(bl, "use_regex", false))
      refuse("pre_tokenizer's second step must be ByteLevel without prefix space and regex");
    const Json& dec = j.contains("decoder") ? j["decoder"] : Json();
    if (type_of(dec) != "ByteLevel") refuse("decoder '" + type_of(dec) + "' is not supported (only ByteLevel)");
    if (j.contains("truncation") && !j["truncation"].is_null()) refuse("truncation is not supported");
  }

  int32_t vocab_id(const std::string& spelling, const char* what) const {
    auto it = t.by_text_.find(spelling);
    if (it == t.by_text_.end()) refuse(std::string(what) + " '" + spelling + "' is not in the vocabulary");
    return int32_t(it->second);
  }

  void load_merges(const Json& merges) {
    if (!merges.is_array()) refuse("model.merges is not a list");
    int32_t rank = 0;
    for (const Json& m : merges) {
      std::string a, b;
      if (m.is_string()) {
        const std::string s = m.get<std::string>();
        const size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          refuse("merge '" + s + "' is not two tokens separated by one space");
        a = s.substr(0, sp), b = s.substr(sp + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>(), b = m[1].get<std::string>();
      } else {
        refuse("merge " + std::to_string(rank) + " is neither \"a b\" nor [a, b]");
      }
      const int32_t ia = vocab_id(a, "merge part"), ib = vocab_id(b, "merge part");
      const int32_t im = vocab_id(a + b, "merge result");
      // A repeated pair keeps its last rank, as tokenizers' map does.
      t.merges_[(uint64_t(uint32_t(ia)) << 32) | uint32_t(ib)] = {rank++, im};
    }
  }

  void load_model(const Json& m) {
    if (type_of(m) != "BPE") refuse("model type '" + type_of(m) + "' is not supported (only BPE)");
    if (!is_null_or(m, "dropout", Json())) refuse("BPE dropout is not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (!is_null_or(m, key, "")) refuse(std::string("BPE ") + key + " is not supported");
    if (!is_null_or(m, "byte_fallback", false)) refuse("BPE byte_fallback is not supported");
    t.ignore_merges_ = m.contains("ignore_merges") && m["ignore_merges"] == true;
    t.fuse_unk_ = m.contains("fuse_unk") && m["fuse_unk"] == true;
    if (!m.contains("vocab") || !m["vocab"].is_object()) refuse("model.vocab is not an object");
    std::fill(std::begin(t.byte_id_), std::end(t.byte_id_), -1);
    for (auto& [spelling, v] : m["vocab"].items()) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= kMaxTokenId)
        refuse("vocabulary id of '" + spelling + "' is not an integer in [0, 2^30)");
      const int64_t id = v.get<int64_t>();
      t.by_text_[spelling] = id;
      t.vocab_size_ = std::max(t.vocab_size_, id + 1);
      std::string bytes;
      const bool mapped = spelling_bytes(spelling, &bytes);
      t.id_bytes_[id] = mapped ? bytes : spelling;
      if (mapped && !bytes.empty()) {
        t.by_bytes_[bytes] = int32_t(id);
        if (bytes.size() == 1) t.byte_id_[uint8_t(bytes[0])] = int32_t(id);
      }
    }
    if (m.contains("unk_token") && !m["unk_token"].is_null()) {
      if (!m["unk_token"].is_string()) refuse("model.unk_token is not a string");
      t.unk_id_ = vocab_id(m["unk_token"].get<std::string>(), "unk_token");
    }
    if (!m.contains("merges")) refuse("model.merges is missing");
    load_merges(m["merges"]);
  }

  void load_added(const Json& added) {
    if (added.is_null()) return;
    if (!added.is_array()) refuse("added_tokens is not a list");
    for (const Json& a : added) {
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id") ||
          !a["id"].is_number_integer())
        refuse("an added_tokens entry lacks content or id");
      BpeAddedToken tok;
      tok.content = a["content"].get<std::string>();
      tok.id = a["id"].get<int64_t>();
      if (tok.id < 0 || tok.id >= kMaxTokenId) refuse("added token '" + tok.content + "' has an id outside [0, 2^30)");
      auto flag = [&](const char* key) { return a.contains(key) && a[key] == true; };
      if (flag("single_word")) refuse("added token '" + tok.content + "' is single_word, which is not supported");
      tok.special = flag("special"), tok.lstrip = flag("lstrip"), tok.rstrip = flag("rstrip");
      tok.normalized = a.contains("normalized") ? a["normalized"] == true : !tok.special;
      if (tok.content.empty()) continue;  // tokenizers ignores empty added tokens
      if (tok.normalized && t.nfc_) tok.content = bpe::nfc(tok.content);
      t.vocab_size_ = std::max(t.vocab_size_, tok.id + 1);
      std::string bytes;
      t.added_by_id_[tok.id] = t.added_.size();
      t.id_bytes_[tok.id] = spelling_bytes(tok.content, &bytes) ? bytes : tok.content;
      t.added_.push_back(std::move(tok));
    }
  }

  void load(const Json& j) {
    if (!j.is_object()) refuse("not a JSON object");
    check_pipeline(j);
    if (!j.contains("model")) refuse("no model");
    load_model(j["model"]);
    load_added(j.contains("added_tokens") ? j["added_tokens"] : Json());
  }
};

BpeTokenizer BpeTokenizer::from_json_text(const std::string& text, const std::string& name) {
  BpeTokenizer t;
  t.name_ = name;
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) VGEN_THROW(ExitCode::kModel, "tokenizer {}: not valid JSON", name);
  BpeTokenizerLoader{t}.load(j);
  return t;
}

BpeTokenizer BpeTokenizer::from_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  VGEN_CHECK(f.good(), ExitCode::kModel, "tokenizer {}: cannot open the file", path);
  std::ostringstream ss;
  ss << f.rdbuf();
  VGEN_CHECK(!f.bad(), ExitCode::kModel, "tokenizer {}: cannot read the file", path);
  return from_json_text(ss.str(), path);
}

}  // namespace vgen
