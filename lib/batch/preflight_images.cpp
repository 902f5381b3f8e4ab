#include "batch/preflight_images.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "core/error.h"
#include "core/hash.h"
#include "core/log.h"
#include "dist/bootstrap.h"
#include "io/image_reader.h"

namespace vgen {

namespace {

// One image file as the preflight found it.
struct ImageFileCheck {
  std::string error;  // the decoder's message, "image <path>: <reason>"; "" when it decodes
  std::string content_hash;
  int64_t bytes = 0;
  int64_t height = 0, width = 0;
};

// Reads and decodes the whole file (the decoder has no header-only check, docs/images.md "Limits and
// errors"): a truncated or corrupt file is found now, not when its video renders.
ImageFileCheck check_image_file(const std::string& path) {
  ImageFileCheck c;
  try {
    const std::vector<uint8_t> bytes = read_image_bytes(path);
    const Tensor rgb = decode_image(bytes.data(), bytes.size(), path);  // [H, W, 3]
    c.height = rgb.dim(0);
    c.width = rgb.dim(1);
    c.content_hash = content_hash(std::string(bytes.begin(), bytes.end()));
    c.bytes = int64_t(bytes.size());
  } catch (const Error& e) {
    c.error = e.message();
  }
  return c;
}

// The decoder names every file "image <path>"; a last frame reads "last_image <path>".
std::string as_key(const std::string& message, const char* key) {
  const std::string prefix = "image ";
  if (std::string(key) == "image" || message.rfind(prefix, 0) != 0) return message;
  return std::string(key) + " " + message.substr(prefix.size());
}

// The first problem of a valid line's image files ("" when none); fills their hashes and sizes.
std::string check_line_files(PromptItem& item, std::map<std::string, ImageFileCheck>& seen) {
  for (const auto& [key, image] : {std::pair{"image", &item.image}, std::pair{"last_image", &item.last_image}}) {
    if (!*image) continue;
    auto it = seen.find((*image)->path);
    if (it == seen.end()) it = seen.emplace((*image)->path, check_image_file((*image)->path)).first;
    if (!it->second.error.empty()) return as_key(it->second.error, key);
    (*image)->content_hash = it->second.content_hash;
    (*image)->bytes = it->second.bytes;
    (*image)->height = it->second.height;
    (*image)->width = it->second.width;
  }
  return "";
}

// VGEN_INJECT_LINE_ERROR=<rank>:<line> (a test hook): that line fails on that rank alone.
void inject_line_error(const std::string& prompts_path, std::vector<PromptItem>& prompts) {
  const char* v = std::getenv("VGEN_INJECT_LINE_ERROR");
  int rank = -1, line = -1;
  if (!v || std::sscanf(v, "%d:%d", &rank, &line) != 2 || rank != process_rank()) return;
  for (PromptItem& it : prompts)
    if (it.line == line && it.ok())
      it.error = fmt::format("{}:{}: injected failure on rank {} (VGEN_INJECT_LINE_ERROR)", prompts_path, line, rank);
}

}  // namespace

ImageInputRules image_input_rules(const ModelTraits& traits, const std::string& model_dir) {
  ImageInputRules r;
  r.conditioning = traits.images.conditioning;
  r.takes_last_image = traits.images.last_image;
  r.needs_last_image = traits.images.last_image_required;
  r.checkpoint = model_dir;
  r.variant = traits.variant;
  r.size_multiple = traits.scale_spatial * traits.patch[1];
  return r;
}

std::array<int, 2> size_from_image(int64_t image_height, int64_t image_width, int64_t max_area, int multiple) {
  // diffusers' image-to-video examples: round(sqrt(area · aspect)) floored to the multiple (Python's
  // round: ties to even, as nearbyint in the default rounding mode).
  const double aspect = double(image_height) / double(image_width);
  const auto fit = [&](double v) { return int(int64_t(std::nearbyint(std::sqrt(v))) / multiple * multiple); };
  return {fit(double(max_area) * aspect), fit(double(max_area) / aspect)};
}

std::string image_conditioning_problem(const ImageInputRules& r, const PromptItem& item) {
  if (r.conditioning == ImageConditioning::kRequired && !item.image)
    return fmt::format("{} is an image-to-video checkpoint ({}); the line needs an 'image' (its first frame)",
                       r.checkpoint, r.variant);
  if (!item.image) return "";
  if (r.conditioning == ImageConditioning::kNone)
    return fmt::format("image {}: {} is a text-to-video checkpoint ({}); the line's image cannot be used (remove "
                       "'image', or use an image-to-video checkpoint)",
                       item.image->path, r.checkpoint, r.variant);
  if (!item.last_image && r.needs_last_image)
    return fmt::format("image {}: {} ({}) renders from a first and a last frame; the line needs a 'last_image'",
                       item.image->path, r.checkpoint, r.variant);
  if (item.last_image && !r.takes_last_image)
    return fmt::format("last_image {}: {} ({}) takes a first frame only; the line's last_image cannot be used",
                       item.last_image->path, r.checkpoint, r.variant);
  return "";
}

void preflight_images(const ImageInputRules& rules, const std::string& prompts_path,
                      std::vector<PromptItem>& prompts) {
  std::map<std::string, ImageFileCheck> seen;  // a file used by several lines is decoded once
  for (PromptItem& it : prompts) {
    if (!it.ok()) continue;
    // The line's own files first (a broken file is broken whatever the checkpoint), then the checkpoint.
    std::string why = check_line_files(it, seen);
    if (why.empty()) why = image_conditioning_problem(rules, it);
    if (why.empty() && it.image && rules.image_max_area > 0) {
      const auto [h, w] = size_from_image(it.image->height, it.image->width, rules.image_max_area, rules.size_multiple);
      if (h <= 0 || w <= 0)
        why = fmt::format("image {}: {}x{} pixels within generation.image_max_area {} leave no frame (a side under {})",
                          it.image->path, it.image->width, it.image->height, rules.image_max_area, rules.size_multiple);
      it.height = h;
      it.width = w;
    }
    if (why.empty()) continue;
    it.error = fmt::format("{}:{}: {}", prompts_path, it.line, why);
    log_warn_job("{} (prompt {} will be marked failed)", it.error, it.index);
  }
}

void agree_on_prompt_errors(const std::string& prompts_path, std::vector<PromptItem>& prompts) {
  inject_line_error(prompts_path, prompts);
  std::vector<std::string> errors;
  for (const PromptItem& it : prompts) errors.push_back(it.error);
  const std::vector<size_t> taken = agree_on_item_errors(errors);  // collective
  for (size_t i = 0; i < prompts.size(); ++i) prompts[i].error = errors[i];
  // World rank 0 said its own findings in the preflight; the others' once here.
  for (size_t i : taken)
    log_warn_job("{} (prompt {} will be marked failed; found by another rank)", prompts[i].error, prompts[i].index);
  size_t bad = 0;
  for (const PromptItem& p : prompts) bad += p.ok() ? 0 : 1;
  if (bad) log_warn_job("{}: {} of {} prompts are invalid and will be reported as failed", prompts_path, bad,
                        prompts.size());
}

}  // namespace vgen
