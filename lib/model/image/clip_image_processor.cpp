#include "model/image/clip_image_processor.h"

#include <filesystem>

#include "io/diffusers_dir.h"
#include "io/image_reader.h"

namespace vgen {

namespace {

// size / crop_size: a number, or an object with shortest_edge or height and width.
struct SizeKey {
  int64_t shortest_edge = 0, height = 0, width = 0;
};

SizeKey read_size(const Json& v, const std::string& key, bool number_is_square, const std::string& source) {
  SizeKey s;
  int64_t n = 0;
  if (json_as(v, &n)) {
    (number_is_square ? s.height : s.shortest_edge) = n;
    if (number_is_square) s.width = n;
  } else if (v.is_object() && !v.contains("longest_edge") && !v.contains("max_height")) {
    s.shortest_edge = json_get_or<int64_t>(v, "shortest_edge", 0, source);
    s.height = json_get_or<int64_t>(v, "height", 0, source);
    s.width = json_get_or<int64_t>(v, "width", 0, source);
  }
  const bool ok = s.shortest_edge > 0 ? s.height == 0 && s.width == 0 : s.height > 0 && s.width > 0;
  const bool sane = s.shortest_edge <= kMaxImageSide && s.height <= kMaxImageSide && s.width <= kMaxImageSide;
  VGEN_CHECK(ok && sane, ExitCode::kModel,
             "{}: '{}' must be a positive size, {{\"shortest_edge\": n}} or {{\"height\": h, \"width\": w}}; got {}",
             source, key, v.dump());
  return s;
}

std::array<float, 3> read_triple(const Json& j, const std::string& key, std::array<float, 3> dflt,
                                 const std::string& source) {
  if (!j.contains(key) || j[key].is_null()) return dflt;
  float one = 0;
  if (json_as(j[key], &one)) return {one, one, one};
  std::vector<float> v = json_get_or<std::vector<float>>(j, key, {}, source);
  VGEN_CHECK(v.size() == 3, ExitCode::kModel, "{}: '{}' must hold 3 numbers (R, G, B), got {}", source, key,
             j[key].dump());
  return {v[0], v[1], v[2]};
}

int64_t floor_div2(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

}  // namespace

ClipImageProcessorConfig clip_image_processor_config(const Json& j, const std::string& source) {
  VGEN_CHECK(j.is_object(), ExitCode::kModel, "{}: not a JSON object", source);
  const std::string type = json_get_or<std::string>(j, "image_processor_type", "CLIPImageProcessor", source);
  VGEN_CHECK(type.rfind("CLIPImageProcessor", 0) == 0, ExitCode::kModel,
             "{}: image_processor_type '{}' is not supported (CLIPImageProcessor is)", source, type);
  ClipImageProcessorConfig c;
  c.do_resize = json_get_or(j, "do_resize", c.do_resize, source);
  if (j.contains("size") && !j["size"].is_null()) {
    SizeKey s = read_size(j["size"], "size", false, source);
    c.shortest_edge = s.shortest_edge;
    c.resize_height = s.height;
    c.resize_width = s.width;
  }
  c.resample = resample_filter_from_pil(json_get_or<int64_t>(j, "resample", int64_t(c.resample), source),
                                        source + ": resample");
  c.do_center_crop = json_get_or(j, "do_center_crop", c.do_center_crop, source);
  if (j.contains("crop_size") && !j["crop_size"].is_null()) {
    SizeKey s = read_size(j["crop_size"], "crop_size", true, source);
    VGEN_CHECK(s.shortest_edge == 0, ExitCode::kModel, "{}: crop_size needs a height and a width", source);
    c.crop_height = s.height;
    c.crop_width = s.width;
  }
  c.do_rescale = json_get_or(j, "do_rescale", c.do_rescale, source);
  c.rescale_factor = json_get_or(j, "rescale_factor", c.rescale_factor, source);
  c.do_normalize = json_get_or(j, "do_normalize", c.do_normalize, source);
  c.image_mean = read_triple(j, "image_mean", c.image_mean, source);
  c.image_std = read_triple(j, "image_std", c.image_std, source);
  for (float s : c.image_std)
    VGEN_CHECK(s != 0.0f, ExitCode::kModel, "{}: image_std has a zero", source);
  return c;
}

ClipImageProcessorConfig read_clip_image_processor_config(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "preprocessor_config.json").string();
  return clip_image_processor_config(read_json_file(path, ExitCode::kModel), path);
}

std::array<int64_t, 2> clip_resize_size(int64_t h, int64_t w, const ClipImageProcessorConfig& cfg) {
  if (!cfg.do_resize) return {h, w};
  if (cfg.shortest_edge <= 0) return {cfg.resize_height, cfg.resize_width};
  // The long edge is int(size * long / short), truncated (docs/images.md "CLIP input").
  const int64_t short_edge = std::min(h, w), long_edge = std::max(h, w);
  const int64_t new_long = int64_t(double(cfg.shortest_edge * long_edge) / double(short_edge));
  return w <= h ? std::array<int64_t, 2>{new_long, cfg.shortest_edge}
                : std::array<int64_t, 2>{cfg.shortest_edge, new_long};
}

Tensor clip_image_preprocess(const Tensor& rgb, const ClipImageProcessorConfig& cfg) {
  const auto [rh, rw] = clip_resize_size(rgb.dim(0), rgb.dim(1), cfg);
  const Tensor resized = cfg.do_resize ? image_resize(rgb, rh, rw, cfg.resample) : rgb;  // [rh, rw, 3]
  const int64_t oh = cfg.do_center_crop ? cfg.crop_height : rh, ow = cfg.do_center_crop ? cfg.crop_width : rw;
  // The crop's first row and column in the resized image; outside it the crop reads zeros.
  const int64_t top = cfg.do_center_crop ? floor_div2(rh - oh) : 0, left = cfg.do_center_crop ? floor_div2(rw - ow) : 0;
  Tensor out = Tensor::empty({3, oh, ow}, DType::kF32);  // [3, oh, ow]
  const uint8_t* src = resized.data<uint8_t>();
  float* dst = out.f32();
  for (int64_t y = 0; y < oh; ++y) {
    for (int64_t x = 0; x < ow; ++x) {
      const int64_t sy = top + y, sx = left + x;
      const bool inside = sy >= 0 && sy < rh && sx >= 0 && sx < rw;
      for (int c = 0; c < 3; ++c) {
        const uint8_t q = inside ? src[(sy * rw + sx) * 3 + c] : 0;
        // transformers' rescale multiplies in float64 and stores float32; normalise is float32.
        float v = cfg.do_rescale ? float(double(q) * cfg.rescale_factor) : float(q);
        if (cfg.do_normalize) v = (v - cfg.image_mean[size_t(c)]) / cfg.image_std[size_t(c)];
        dst[(c * oh + y) * ow + x] = v;
      }
    }
  }
  return out;
}

}  // namespace vgen
