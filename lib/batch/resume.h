// What a rerun finds in its output directory (docs/batch.md "Resume"): a finished video is reused
// only when its sidecar `<stem>.vgen.json` holds this run's fingerprint and its file is whole.
// Plain file I/O: the checks run on world rank 0, the sidecar is written by the video's writer.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"

namespace vgen {

// vgen's own temporaries: "<stem>.tmp.mp4" (the MP4 being encoded) and "<name>.tmp.<pid>" (raw
// frames, JSON reports, sidecars); a user's "notes.tmp.txt" is not one.
bool is_vgen_temporary(const std::string& file_name);
void remove_stale_temporaries(const std::string& dir);

// The file a video is written to: `<stem>.mp4`, or `<stem>.rgb` in a build without FFmpeg.
std::string video_file(const std::string& mp4_path);
// The sidecar beside it: `<stem>.vgen.json`.
std::string sidecar_path(const std::string& mp4_path);

// Empty when the file looks complete, else what is wrong with it. An MP4 must be non-empty and made
// of ISO-BMFF boxes that start with `ftyp`, end at the end of the file and include `moov`; a raw
// `.rgb` file must hold frames·height·width·3 bytes by its `<stem>.json`. `expected_bytes` >= 0:
// also the size the sidecar recorded.
std::string video_damage(const std::string& path, int64_t expected_bytes = -1);

// Why an existing video is or is not reused.
enum class Verdict : uint8_t {
  kNew,        // no video file: rendered (nothing is replaced)
  kReuse,      // same fingerprint, whole file: kept
  kChanged,    // its sidecar holds another fingerprint
  kNoSidecar,  // no sidecar (an older vgen, or deleted)
  kDamaged,    // the file or its sidecar is incomplete or unreadable
};
const char* verdict_name(Verdict v);  // "new", "reused", "settings changed", "no sidecar", "damaged"

struct ExistingVideo {
  Verdict verdict = Verdict::kNew;
  std::string why;          // for the log: what changed, or what is damaged
  std::string fingerprint;  // the sidecar's, when it could be read
};

// Checks the files of one video against the fingerprint and sidecar this run would write (`expect`:
// VideoFingerprints::sidecar, whose inputs name what changed).
ExistingVideo check_existing_video(const std::string& mp4_path, const Json& expect);

// What a job found in its output directory: logged once, and what --no-overwrite refuses.
class ResumeTally {
 public:
  void count(Verdict v) { ++counts_[size_t(v)]; }
  // An existing video that this run renders over (the verdict is counted, `why` logged).
  void replace(const std::string& name, Verdict v, const std::string& why);
  bool replaces_any() const { return !replaced_.empty(); }
  // Info lines: why the first videos are rendered again, then the counts.
  void log() const;
  // The --no-overwrite refusal (error lines, on the deciding rank only).
  void log_refusal() const;

 private:
  std::array<int, 5> counts_{};
  std::vector<std::pair<std::string, std::string>> replaced_;  // name, reason
};

// The sidecar of a written video: `content` (VideoFingerprints::sidecar) with the file's name and
// size, written atomically after the video file is complete.
void write_sidecar(const std::string& mp4_path, const std::string& written_file, Json content);

}  // namespace vgen
