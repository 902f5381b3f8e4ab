// The attention key split's tuning knobs (config/attention_config.h AttentionKeySplit), read from
// the environment in this one place when a recipe is parsed; below, every call gets them through
// its AttentionPolicy. They change speed, never the attention computed (docs/performance.md).
//   VGEN_ATTN_KV_CHUNK = auto | 0 | N   (unset: auto) -> kv_chunk -1 | 0 | N
//   VGEN_ATTN_TAIL     = fold | cudnn   (unset: fold) -> tail_fold true | false
#pragma once
#include "config/attention_config.h"

namespace vgen {

// The key split the environment asks for; another value of either variable is kUsage naming it.
AttentionKeySplit attention_key_split_from_env();

}  // namespace vgen
