// The CLIP vision encoder's input as transformers' CLIPImageProcessor prepares it with its PIL
// backend (docs/images.md "CLIP input"): the shortest edge resized to size.shortest_edge (bicubic
// by default; the other edge int(shortest · long / short)), a centre crop to crop_size (offsets
// floor((H − h) / 2); zero padding where the image is smaller), rescale (float64 product, stored
// as float32), normalise ((x − mean) / std in float32). Parameters come from the checkpoint's
// image_processor/preprocessor_config.json.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "core/json.h"
#include "core/tensor.h"
#include "ops/image_resize.h"

namespace vgen {

struct ClipImageProcessorConfig {
  bool do_resize = true;
  int64_t shortest_edge = 224;  // > 0: resize the shortest edge to this
  int64_t resize_height = 0, resize_width = 0;  // with shortest_edge 0: resize to exactly this
  ResampleFilter resample = ResampleFilter::kBicubic;
  bool do_center_crop = true;
  int64_t crop_height = 224, crop_width = 224;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  std::array<float, 3> image_mean = {0.48145466f, 0.4578275f, 0.40821073f};  // OpenAI CLIP's
  std::array<float, 3> image_std = {0.26862954f, 0.26130258f, 0.27577711f};
};

// From a preprocessor_config.json object (absent keys keep transformers' CLIP defaults above);
// kModel naming `source` for a key of the wrong type or a processor other than CLIP's.
ClipImageProcessorConfig clip_image_processor_config(const Json& j, const std::string& source);
// `dir`/preprocessor_config.json (the checkpoint's image_processor/ folder).
ClipImageProcessorConfig read_clip_image_processor_config(const std::string& dir);

// The (height, width) the resize step produces for an h × w image.
std::array<int64_t, 2> clip_resize_size(int64_t h, int64_t w, const ClipImageProcessorConfig& cfg);

// rgb: CPU u8 [H, W, 3] → f32 [3, crop_height, crop_width] (without a crop: the resized size).
Tensor clip_image_preprocess(const Tensor& rgb, const ClipImageProcessorConfig& cfg);

}  // namespace vgen
