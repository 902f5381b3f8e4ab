// The recipe's `precision`: what the models compute in (docs/recipe.md, docs/fp8.md). fp4: the DiT
// block linears in NVFP4 (weights and activations), bf16 elsewhere (docs/fp8.md "Block scaling").
#pragma once
#include <cstdint>

#include "config/named.h"

namespace vgen {

enum class Precision : uint8_t { kFp32, kBf16, kFp8, kFp4 };
inline constexpr Named<Precision> kPrecisionNames[] = {
    {Precision::kFp32, "fp32"}, {Precision::kBf16, "bf16"}, {Precision::kFp8, "fp8"}, {Precision::kFp4, "fp4"}};
inline const char* precision_name(Precision p) { return name_in(kPrecisionNames, p); }

}  // namespace vgen
