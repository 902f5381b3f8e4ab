#include "dist/weight_stream_plan.h"

#include <algorithm>

#include "core/error.h"

namespace vgen {
namespace {

// A needed byte range with the ranks that need it; `elem`/`base`: cuts fall on base + k·elem.
struct Span {
  size_t begin, end;
  std::vector<int> needers;
  size_t elem, base;
};

std::vector<int> merge(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The ranks whose need flags mark `unit`, ascending.
std::vector<int> needers_of(const std::vector<NeedFlags>& needs, size_t unit) {
  std::vector<int> r;
  for (int i = 0; i < int(needs.size()); ++i)
    if (needs[size_t(i)][unit]) r.push_back(i);
  return r;
}

// The needed byte ranges of file `f`, whose plan units start at `unit`: its tensors, and the gap
// bytes between them and after the last one where anyone needs the whole file.
std::vector<Span> file_spans(const PlanFile& f, size_t unit, const std::vector<NeedFlags>& needs) {
  const std::vector<int> whole = needers_of(needs, unit + f.tensors.size());
  std::vector<Span> spans;
  size_t pos = 0;
  for (const PlanTensor& t : f.tensors) {
    std::vector<int> n = merge(needers_of(needs, unit++), whole);
    if (!whole.empty() && t.begin > pos) spans.push_back({pos, t.begin, whole, 1, pos});  // gap bytes
    if (!n.empty() && t.end > t.begin) spans.push_back({t.begin, t.end, n, std::max<size_t>(t.elem, 1), t.begin});
    pos = std::max(pos, t.end);
  }
  if (!whole.empty() && f.data_size > pos) spans.push_back({pos, f.data_size, whole, 1, pos});
  return spans;
}

// Cuts the spans of file `fi` into segments of at most `cap` bytes on element boundaries; spans at
// most `gap` bytes apart share a segment (the bytes between are read too).
void cut_segments(int fi, const std::vector<Span>& spans, size_t cap, size_t gap, std::vector<Segment>& segs) {
  Segment cur;
  bool open = false;
  auto close = [&] {
    if (open && cur.end > cur.begin) segs.push_back(cur);
    open = false;
  };
  for (const Span& s : spans) {
    if (open && (s.begin > cur.end + gap || s.begin < cur.end)) close();
    size_t b = s.begin;
    while (b < s.end) {
      if (!open) {
        cur = Segment{fi, b, b, 0, {}};
        open = true;
      }
      const size_t used = b - cur.begin;  // the segment so far and the gap bytes before b
      const size_t room = used >= cap ? 0 : cap - used;
      size_t take = std::min(s.end - b, room);
      if (b + take < s.end) take -= (b + take - s.base) % s.elem;  // cut on an element boundary
      if (take == 0) {
        VGEN_ASSERT(cur.end > cur.begin, "plan_segments: an element of {} bytes exceeds the segment size {}", s.elem,
                    cap);
        close();
        continue;
      }
      cur.end = b + take;
      cur.needers = merge(cur.needers, s.needers);
      b += take;
      if (cur.end - cur.begin >= cap) close();
    }
  }
  close();
}

// Deal the segments by bytes.
void deal_segments(std::vector<Segment>& segs, int ranks) {
  std::vector<size_t> load(size_t(std::max(ranks, 1)), 0);
  for (Segment& s : segs) {
    const size_t bytes = s.end - s.begin;
    int best = 0;
    for (int r = 1; r < ranks; ++r)
      if (load[size_t(r)] < load[size_t(best)]) best = r;
    for (int r : s.needers)  // among the least loaded, one that needs it (no hand-off for itself)
      if (load[size_t(r)] == load[size_t(best)]) {
        best = r;
        break;
      }
    s.reader = best;
    load[size_t(best)] += bytes;
  }
}

}  // namespace

size_t plan_units(const std::vector<PlanFile>& files) {
  size_t n = 0;
  for (auto& f : files) n += f.tensors.size() + 1;
  return n;
}

size_t plan_needed_bytes(const std::vector<PlanFile>& files, const std::vector<NeedFlags>& needs) {
  size_t total = 0, unit = 0;
  auto any = [&](size_t u) {
    for (auto& n : needs)
      if (n[u]) return true;
    return false;
  };
  for (const PlanFile& f : files) {
    const size_t whole = unit + f.tensors.size();
    if (any(whole)) {
      total += f.data_size;
    } else {
      for (size_t i = 0; i < f.tensors.size(); ++i)
        if (any(unit + i)) total += f.tensors[i].end - f.tensors[i].begin;
    }
    unit = whole + 1;
  }
  return total;
}

size_t plan_segment_size(size_t needed, int ranks, size_t cap) {
  const size_t floor = std::min<size_t>(cap, size_t(64) << 10);
  const size_t quarter = needed / (4 * size_t(std::max(ranks, 1)));
  return std::clamp((quarter + 4095) / 4096 * 4096, floor, cap);
}

std::vector<Segment> plan_segments(const std::vector<PlanFile>& files, const std::vector<NeedFlags>& needs,
                                   size_t cap, size_t gap) {
  VGEN_ASSERT(cap > 0, "plan_segments: zero segment size");
  const size_t units = plan_units(files);
  for (auto& n : needs) VGEN_ASSERT(n.size() == units, "plan_segments: {} need flags for {} units", n.size(), units);
  std::vector<Segment> segs;
  size_t unit = 0;
  for (size_t fi = 0; fi < files.size(); ++fi) {
    cut_segments(int(fi), file_spans(files[fi], unit, needs), cap, gap, segs);
    unit += files[fi].tensors.size() + 1;  // the tensors' units and the whole-file unit
  }
  deal_segments(segs, int(needs.size()));
  return segs;
}

}  // namespace vgen
