#include "io/attention_tuning.h"

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace vgen {

AttentionKeySplit attention_key_split_from_env() {
  AttentionKeySplit split;
  const char* chunk = std::getenv("VGEN_ATTN_KV_CHUNK");
  const std::string c = chunk ? chunk : "";
  if (!c.empty() && c != "auto") {
    VGEN_CHECK(c.size() <= 9 && c.find_first_not_of("0123456789") == std::string::npos, ExitCode::kUsage,
               "VGEN_ATTN_KV_CHUNK={}: expected auto, 0 (no split) or a key count", c);
    split.kv_chunk = std::stoll(c);
  }
  const char* tail = std::getenv("VGEN_ATTN_TAIL");
  const std::string t = tail ? tail : "";
  VGEN_CHECK(t.empty() || t == "fold" || t == "cudnn", ExitCode::kUsage,
             "VGEN_ATTN_TAIL={}: expected fold (the remainder keys merged in one pass) or cudnn", t);
  split.tail_fold = t != "cudnn";
  return split;
}

}  // namespace vgen
