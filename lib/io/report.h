// The run's timing JSON (docs/batch.md "Outputs"): `<out>/timing.json`, written by world rank 0.
//   {"recipe": …resolved…, "mesh": …, "device": …, "load_seconds": …, "videos": [{"index", "name",
//    "prompt", "seed", "status": "ok"|"failed"|"skipped", "error", "output", "frames", "height", "width",
//    "seconds": {"text_encode", "steps": […], "denoise", "vae_decode", "mp4_encode", "total"},
//    "peak_memory_bytes", "reused", "fingerprint"}, …], "fingerprint_inputs": …}
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/mesh_shape.h"
#include "core/json.h"

namespace vgen {

struct VideoSeconds {
  double text_encode = 0;
  // Image-conditioned lines: the image encoder (CLIP) and the autoencoder's encode of the condition;
  // in the JSON only for lines with images.
  double image_encode = 0;
  double vae_encode = 0;
  std::vector<double> steps;  // one entry per denoising step
  double denoise = 0;
  double vae_decode = 0;
  double mp4_encode = 0;
  double total = 0;
};

struct VideoReport {
  int index = 0;
  std::string name;  // output stem, e.g. "0003-a-cat-walks"
  std::string prompt;
  int64_t seed = 0;
  std::string status = "ok";  // ok | failed | skipped
  std::string error;
  std::string output;  // path of the MP4 (or raw fallback); empty when failed
  int frames = 0, height = 0, width = 0;
  VideoSeconds seconds;
  int64_t peak_memory_bytes = 0;
  int64_t rss_bytes = 0;  // resident set after the video (host memory over a long batch)
  // First-block cache: DiT forwards that reached its decision and those it cut short, and the cut
  // forwards per step ("first_block_cache": {"forwards", "hits", "steps"} in the JSON, only when it ran).
  int64_t cache_forwards = 0, cache_hits = 0;
  std::vector<int64_t> cache_step_hits;  // per denoising step, both streams ("steps")
  // Resume: the existing file was kept instead of rendered, and the fingerprint of what made the
  // file `output` names (batch/fingerprint.h; empty: no output or unknown).
  bool reused = false;
  std::string fingerprint;
};

struct RunReport {
  Json recipe;  // Recipe::resolved
  Json mesh;    // mesh_to_json
  Json device;  // e.g. {"kind": "cuda", "name": "NVIDIA H200", "count": 8}
  double load_seconds = 0;
  std::vector<VideoReport> videos;
  Json extra = Json::object();  // further top-level fields (merged in)
};

OrderedJson to_json(const VideoReport& v);
OrderedJson to_json(const RunReport& r);
// Inverse of to_json(VideoReport): null or absent fields keep their defaults (error/output are
// written as null when empty, and non-finite times as null).
VideoReport video_report_from_json(const Json& j);
// {"world", "dp", "cfg", "rows", "cols", "ulysses", "ring", "cp", "seq", "vae"}.
Json mesh_to_json(const MeshShape& m);
// Atomic write (temporary file + rename) of to_json(r).
void write_run_report(const std::string& path, const RunReport& r);

// What a previous timing.json says, for --retry-failed and resume.
struct PreviousRun {
  std::map<std::string, VideoReport> by_name;  // output stem → its entry
  // The entry of `stem` when it was made from the same prompt text, else null: after the prompt file
  // is edited the same stem (index + slug) can name another prompt.
  const VideoReport* same_prompt(const std::string& stem, const std::string& prompt) const {
    auto it = by_name.find(stem);
    return it != by_name.end() && it->second.prompt == prompt ? &it->second : nullptr;
  }
  // Failed before: the stem's entry with this prompt failed, or (the prompt moved in the file) some
  // entry with this prompt text failed.
  bool is_failed(const std::string& stem, const std::string& prompt) const {
    if (const VideoReport* v = same_prompt(stem, prompt)) return v->status == "failed";
    return !prompt.empty() && failed_prompts.count(prompt) > 0;
  }
  std::set<std::string> failed_prompts;  // prompt texts of the failed entries
};
// Reads `path` (kInput naming the file when missing or malformed).
PreviousRun read_previous_run(const std::string& path);

}  // namespace vgen
