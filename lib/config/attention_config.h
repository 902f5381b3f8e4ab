// attention_config of the recipe: plain data, read by io/recipe.cpp and used by the attention
// factory (parallel/) below io, so it lives in the lowest room.
#pragma once
#include <string>

namespace vgen {

struct AttentionConfig {
  std::string backend = "auto";  // auto | native | cudnn
};

}  // namespace vgen
