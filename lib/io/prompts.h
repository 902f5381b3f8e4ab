// Prompt files: plain text (one prompt per line; blank and `#` lines skipped) or JSONL (extension
// .jsonl, or a first non-blank line starting with `{`) with per-prompt overrides:
//   {"prompt": "...", "negative_prompt": "...", "seed": 7, "num_frames": 33, "name": "cat",
//    "image": "in/first.png", "last_image": "in/last.png"}
// Image paths are relative to the prompt file's directory (docs/batch.md "Image inputs").
// An invalid JSONL line, a line that is not valid UTF-8, holds a NUL byte or is longer than
// kMaxPromptLineBytes does not fail the file: its item carries `error` (naming the file and line) and
// the batch marks it failed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vgen {

// The longest prompt line read (docs/recipe.md "Prompt files"): far beyond what the text encoder
// takes (512 tokens), small enough that reports and logs stay readable.
inline constexpr size_t kMaxPromptLineBytes = size_t(64) << 10;

// A still image of a prompt line (image-to-video's first or last frame).
struct PromptImage {
  std::string path;          // absolute: relative paths resolved against the prompt file's directory
  std::string content_hash;  // of the file's bytes, set by the preflight (batch/preflight_images.h)
  int64_t bytes = 0;         // the file's size, set with content_hash
  int64_t height = 0, width = 0;  // as decoded (orientation applied), set with content_hash
};

struct PromptItem {
  int index = 0;  // position in the file among prompt lines (invalid JSONL lines count too)
  int line = 0;   // 1-based line number in the file
  std::string prompt;
  std::optional<std::string> negative_prompt;
  std::optional<int64_t> seed;
  std::optional<int> num_frames;  // already rounded to 4k+1
  std::optional<PromptImage> image;       // JSONL `image`: the first frame
  std::optional<PromptImage> last_image;  // JSONL `last_image`: the last frame (needs `image`)
  // The line's own frame size (generation.image_max_area from its image, set by the preflight);
  // unset: the recipe's height × width.
  std::optional<int> height, width;
  std::string name;   // slug: from `name`, else from the prompt
  std::string error;  // non-empty: the item is invalid

  bool ok() const { return error.empty(); }
  // Output file stem: `<index>-<slug>`, index zero-padded to 4 digits, e.g. `0003-a-cat-walks`.
  std::string stem() const;
};

// Reads and parses a prompt file; kInput naming the file if it cannot be read or holds no prompts.
std::vector<PromptItem> load_prompts(const std::string& path);
// Parses prompt text; `path` decides JSONL by extension and is used in messages.
std::vector<PromptItem> parse_prompts(const std::string& text, const std::string& path);

// Lowercase ASCII letters/digits, other runs collapsed to '-', trimmed, at most `max_len` chars;
// "prompt" when nothing is left (e.g. a prompt without ASCII letters).
std::string slugify(const std::string& text, size_t max_len = 48);
std::string output_stem(int index, const std::string& slug);

}  // namespace vgen
