// `vgen compare A B`: how far two output directories of `vgen run` (rendered with
// output.save_tensors) lie apart, video by video, from their `<stem>.safetensors` files: the final
// latents as a relative L2 and the decoded video as a PSNR. For tuning what trades fidelity for speed
// (cache_config.first_block_threshold, precision) and for checking a mesh against one rank, on the
// exact tensors rather than through the MP4 codec.
#pragma once
#include <string>
#include <vector>

#include "core/json.h"

namespace vgen {

struct CompareOptions {
  double min_psnr_db = -1.0;  // a video below it fails; < 0: no bound
  double max_rel_l2 = -1.0;   // latents above it fail; < 0: no bound
};

struct VideoComparison {
  std::string name;    // the file stem (the video's name in timing.json)
  std::string status;  // "ok", "over" (beyond a bound), "only_in_a", "only_in_b", "nan"
  int64_t frames = 0;
  double latents_rel_l2 = 0.0;  // ‖a − b‖₂ / ‖a‖₂ of the final latents (‖a − b‖₂ when a is 0)
  double video_psnr_db = 0.0;   // over the frames mapped to [0, 1]; +inf when identical
  double video_max_abs = 0.0;   // largest |a − b| of the frames in [0, 1]
};

struct Comparison {
  std::string dir_a, dir_b;
  CompareOptions options;
  std::vector<VideoComparison> videos;  // by name
  int compared = 0, failed = 0;         // failed: over a bound, NaN, or on one side only
};

// Errors (kInput): a directory that is not one, an A without any `<stem>.safetensors`, a file that
// is not safetensors or lacks `latents` / `video`, shapes that differ between A and B.
Comparison compare_outputs(const std::string& dir_a, const std::string& dir_b, const CompareOptions& opt);

std::string format_comparison(const Comparison& c);  // a line per video and a summary line
Json comparison_json(const Comparison& c);           // +inf PSNR as null with "identical": true

}  // namespace vgen
