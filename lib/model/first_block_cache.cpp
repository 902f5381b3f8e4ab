#include "model/first_block_cache.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "ops/elementwise.h"

namespace vgen {

namespace {

// Σ|a − b| and Σ|b| over the real tokens of the shard (pad rows of the last ranks excluded, so a
// mesh sums what one rank sums), f32 [2] on a's device.
Tensor shard_sums(const Tensor& a, const Tensor& b, const SeqLayout& layout) {
  const int64_t valid = std::clamp<int64_t>(layout.tokens - layout.begin(), 0, layout.local());
  Tensor sums;
  for (int64_t i = 0; i < a.dim(0); ++i) {
    Tensor s = abs_diff_sums(a[i].narrow(0, valid), b[i].narrow(0, valid));  // [2]
    if (sums.defined())
      add_inplace(sums, s);
    else
      sums = s;
  }
  return sums;
}

}  // namespace

void FirstBlockCache::begin(const Tensor& x) { x0_ = x.clone(); }

bool FirstBlockCache::try_skip(Tensor& x, const SeqLayout& layout) {
  VGEN_ASSERT(x.ndim() == 3 && x0_.shape() == x.shape() && x.dim(1) == layout.local(),
              "first-block cache: x {} and block 0's input {} for a shard of {} tokens", x.str(), x0_.str(),
              layout.local());
  ++forwards_;
  Tensor r = sub(x, x0_);  // [B, S_loc, D]
  const bool comparable = first_ref_.defined() && first_ref_.shape() == r.shape() &&
                          first_ref_.dtype() == r.dtype() && first_ref_.device() == r.device();
  if (comparable) {
    // Every rank sums the group's shard sums in group-rank order, so all take the same decision
    // bit for bit (an all-reduce need not give every rank the same bits, and ranks that disagree
    // here would wait on each other's attention forever).
    Tensor sums = shard_sums(r, first_ref_, layout);  // [2]
    if (group_ && group_->size() > 1) {
      Tensor all = Tensor::empty({group_->size(), 2}, DType::kF32, sums.device());  // [N, 2]
      group_->all_gather(sums, all);
      sums = all;
    }
    const Tensor h = sums.to(Device::kCPU);
    double diff = 0.0, ref = 0.0;
    for (int64_t i = 0; i < h.numel(); i += 2) diff += h.f32()[i], ref += h.f32()[i + 1];
    last_change_ = ref > 0.0 ? diff / ref : (diff > 0.0 ? std::numeric_limits<double>::infinity() : 0.0);
    if (last_change_ < threshold_) {
      add_inplace(x, rest_);
      ++hits_;
      return true;
    }
  }
  pending_ = std::move(r);
  x1_ = x.clone();
  return false;
}

void FirstBlockCache::end(const Tensor& x) {
  if (x1_.defined()) {  // the other blocks ran: this forward becomes the reference
    VGEN_ASSERT(x1_.shape() == x.shape(), "first-block cache: end with x {} after {}", x.str(), x1_.str());
    rest_ = sub(x, x1_);
    first_ref_ = std::move(pending_);
  }
  x0_ = x1_ = pending_ = Tensor();
}

}  // namespace vgen
