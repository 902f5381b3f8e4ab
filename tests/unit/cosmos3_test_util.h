// Shared pieces of the Cosmos 3 tests: the fixture set made with diffusers and its token ids.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace vgen::testing {

inline const std::string kCosmos3Fixtures = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3";

// An int64 tensor of a case file (e.g. "input_ids_cond") as a vector.
inline std::vector<int64_t> ids_of(const WeightStore& ws, const std::string& name) {
  const Tensor t = ws.get(name);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

}  // namespace vgen::testing
