// Start-up refusals that every rank of a job agrees on: each rank says whether it can go on and
// why not; every rank learns the first one that cannot and its reason, and how many others, so all
// throw the same error and none waits for a peer in a later collective.
#pragma once
#include <string>
#include <vector>

#include "dist/communicator.h"

namespace vgen {

struct RankRefusal {
  bool any = false;    // some rank cannot go on
  int first = -1;      // the lowest such world rank
  std::string reason;  // its reason (at most 255 bytes)
  std::vector<int> ranks;  // every refusing world rank, ascending
  // "; N ranks <what>: 0, 1, ..." when several ranks refuse (the first 16), else empty.
  std::string others(const char* what) const;
};

// Collective over `world`: one all-reduce and, when some rank refuses, one broadcast.
RankRefusal agree_on_refusal(Communicator& world, bool ok, const std::string& reason);

}  // namespace vgen
