#include "pipeline/rank_refusal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/tensor.h"

namespace vgen {

RankRefusal agree_on_refusal(Communicator& world, bool ok, const std::string& reason) {
  const int n = world.size(), me = world.rank();
  Tensor bad = Tensor::zeros({n}, DType::kI64);
  bad.data<int64_t>()[me] = ok ? 0 : 1;
  world.all_reduce_max(bad);
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r)
    if (bad.data<int64_t>()[r]) ranks.push_back(r);
  RankRefusal out;
  if (ranks.empty()) return out;
  constexpr size_t kName = 256;
  Tensor text = Tensor::zeros({int64_t(kName)}, DType::kU8);
  if (me == ranks[0]) std::memcpy(text.raw(), reason.data(), std::min(reason.size(), kName - 1));
  world.broadcast(text, ranks[0]);
  out.any = true;
  out.first = ranks[0];
  out.reason = static_cast<const char*>(text.raw());
  out.ranks = ranks;
  return out;
}

std::string RankRefusal::others(const char* what) const {
  if (ranks.size() < 2) return "";
  std::string list;
  for (size_t i = 0; i < ranks.size() && i < 16; ++i) list += (i ? ", " : "") + std::to_string(ranks[i]);
  return fmt::format("; {} ranks {}: {}{}", ranks.size(), what, list, ranks.size() > 16 ? ", ..." : "");
}

}  // namespace vgen
