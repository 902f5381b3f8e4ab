// The recipe's `precision`: what the models compute in (docs/recipe.md, docs/fp8.md).
#pragma once
#include <cstdint>

#include "config/named.h"

namespace vgen {

enum class Precision : uint8_t { kFp32, kBf16, kFp8 };
inline constexpr Named<Precision> kPrecisionNames[] = {
    {Precision::kFp32, "fp32"}, {Precision::kBf16, "bf16"}, {Precision::kFp8, "fp8"}};
inline const char* precision_name(Precision p) { return name_in(kPrecisionNames, p); }

}  // namespace vgen
