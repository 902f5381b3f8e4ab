// The reading plan of dist/weight_stream.h: which byte ranges of which files are read, by whom, and
// who receives them. Pure functions of the headers and the node's needs, so every rank of a node
// computes the same plan.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vgen {

struct PlanTensor {
  size_t begin = 0, end = 0;  // bytes in the file's data section
  size_t elem = 1;            // element size: cuts inside the tensor fall on element boundaries
};

struct PlanFile {
  std::vector<PlanTensor> tensors;  // sorted by begin
  size_t data_size = 0;
};

// needs[r] of rank r: one flag per unit, the units being every file's tensors in order followed by
// one whole-file unit (the whole data section, gaps included) per file: for files f = 0, 1, …,
// tensors(f) flags then 1 flag.
using NeedFlags = std::vector<uint8_t>;
size_t plan_units(const std::vector<PlanFile>& files);

// Bytes anyone needs (tensors, and whole data sections).
size_t plan_needed_bytes(const std::vector<PlanFile>& files, const std::vector<NeedFlags>& needs);
// The segment size for `ranks` readers: about a quarter of each one's share, so small models are
// dealt evenly too, between 64 KiB and `cap`.
size_t plan_segment_size(size_t needed, int ranks, size_t cap);

struct Segment {
  int file = 0;
  size_t begin = 0, end = 0;  // bytes in the file's data section
  int reader = 0;             // rank that reads it
  std::vector<int> needers;   // ranks that receive it (the reader included if it needs it), ascending
};

// Segments of at most `cap` bytes covering every needed byte, in file order; two needed ranges
// closer than `gap` bytes share a segment (the bytes between are read too). Each segment's reader is
// the rank with the fewest bytes dealt so far (a needer among equals).
std::vector<Segment> plan_segments(const std::vector<PlanFile>& files, const std::vector<NeedFlags>& needs,
                                   size_t cap, size_t gap);

}  // namespace vgen
