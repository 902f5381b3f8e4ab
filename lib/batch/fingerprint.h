// What made a video: a fingerprint (core/hash.h content_hash) of everything that decides its pixels
// and its bytes, so a rerun reuses a finished video only when it would render the same one
// (docs/batch.md "Resume"). Two parts: the job's (files, read once on world rank 0) and the video's
// (resolved settings of one prompt line, with its images by content).
#pragma once
#include <string>

#include "core/json.h"
#include "io/prompts.h"
#include "io/recipe.h"

namespace vgen {

// The job part, read once per job (world rank 0): vgen's version; the model's identity
// (model_index.json, and per component folder every file: safetensors by name, size and a hash of
// the header bytes, never tensor data; other files by content, or by size alone above 64 MiB);
// each LoRA file's name, size, header hash, scale and target; the initial latents file's content
// hash. The model directory's own path is not part of it (a moved copy is the same model).
Json job_fingerprint_inputs(const Recipe& recipe);

// The per-video part and the fingerprints of one job (every rank builds it from the same inputs).
class VideoFingerprints {
 public:
  VideoFingerprints(const Recipe& recipe, Json job_inputs);

  const Json& job_inputs() const { return job_inputs_; }
  const std::string& job_hash() const { return job_hash_; }
  // The resolved settings that change one video's pixels or bytes: prompt, negative prompt, seed,
  // frames, size, steps, guidances, boundary, scheduler, flow shift, text length, precision (with
  // fp8_config when it is fp8), the first-block cache threshold, fps and crf. Not the mesh, the
  // device or the attention backend: those change rounding only.
  // `images` (image_fingerprint_inputs): the line's images, added by key; a line without any keeps
  // the inputs (and so the fingerprint) of a vgen that had no image inputs.
  Json video_inputs(const std::string& prompt, const std::string& negative_prompt, int64_t seed, int num_frames,
                    const Json& images = Json::object()) const;
  std::string fingerprint(const Json& video_inputs) const;
  // What a video's sidecar holds before its file is known: {"fingerprint", "vgen_version",
  // "inputs": {"job", "video"}} (the writer adds "video" and "bytes").
  Json sidecar(const Json& video_inputs) const;

 private:
  Json job_inputs_;
  std::string job_hash_;
  Json settings_;  // the job-wide settings of video_inputs
};

// A prompt line's images by content (their bytes and content hash, as the preflight read them; not
// their paths: a moved copy is the same image): {"image": {...}, "last_image": {...}}, each key only
// when the line has that image.
Json image_fingerprint_inputs(const PromptItem& item);

// The names of the inputs that differ between two sidecars' "inputs" ("model", "guidance_scale",
// …), for the log line that says why a video is rendered again.
std::string changed_inputs(const Json& old_inputs, const Json& new_inputs);

}  // namespace vgen
