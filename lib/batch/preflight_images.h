// The images of the prompt lines (docs/batch.md "Image inputs"), checked by every rank before any
// work: each file exists, is readable and decodes as PNG or JPEG within the decoder's limits
// (docs/images.md), then the line's images against what the checkpoint takes (ModelTraits::images,
// from ModelFamily::image_inputs). A problem fails its line alone, as an invalid JSONL line does
// (exit 7 at the end), named by prompt file, line and image; agree_on_prompt_errors then makes the
// ranks agree on the failed lines, so an image that one rank cannot read fails its line on every rank.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "io/prompts.h"
#include "model/model.h"

namespace vgen {

// What a run accepts on a prompt line: the checkpoint's conditioning.
struct ImageInputRules {
  ImageConditioning conditioning = ImageConditioning::kNone;
  bool takes_last_image = false;
  bool needs_last_image = false;
  std::string checkpoint;  // for messages: the model directory
  std::string variant;     // ModelTraits::variant, e.g. "Wan T2V"
  int64_t image_max_area = 0;  // generation.image_max_area: > 0 sizes image lines from their image
  int size_multiple = 16;      // frame sizes are multiples of this (the VAE's factor × the DiT patch)
};
ImageInputRules image_input_rules(const ModelTraits& traits, const std::string& model_dir);

// The frame size (height, width) of a line whose first image is image_height × image_width under
// generation.image_max_area: the image's aspect ratio, at most about max_area pixels, each side a
// multiple of `multiple` (as diffusers' image-to-video examples compute it).
std::array<int, 2> size_from_image(int64_t image_height, int64_t image_width, int64_t max_area, int multiple);

// Why a valid line's images do not fit `rules` ("" when they do): an image on a text-to-video
// checkpoint, no image on an image-to-video one, a last frame where the checkpoint takes the first
// only or none where it needs one.
std::string image_conditioning_problem(const ImageInputRules& rules, const PromptItem& item);

// Each valid line: its images decoded once per file (content hash and size into the item), then
// image_conditioning_problem, then with rules.image_max_area the line's frame size. A problem becomes the line's error ("<prompts>:<line>: image <path>:
// <reason>"), logged once per job (world rank 0). No collective.
void preflight_images(const ImageInputRules& rules, const std::string& prompts_path,
                      std::vector<PromptItem>& prompts);

// Collective over the world, after every rank's preflight passed: a line that any rank failed fails on
// every rank with the lowest such rank's message (dist/bootstrap.h agree_on_item_errors), logged once;
// then the count of failed lines. Test hook VGEN_INJECT_LINE_ERROR=<rank>:<line> fails that line on
// that rank alone (docs/testing.md).
void agree_on_prompt_errors(const std::string& prompts_path, std::vector<PromptItem>& prompts);

}  // namespace vgen
