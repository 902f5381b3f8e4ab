// Golden case image_resize: each listed image decoded and resized with the named filter, against
// Pillow's Image.resize (tests/golden-i2v/README.md: at most one 8-bit level per value).
#include <filesystem>

#include "io/image_reader.h"
#include "ops/image_resize.h"
#include "tools/golden.h"

namespace vgen {

void golden_image_resize(GoldenCase& c) {
  VGEN_CHECK(c.params.contains("resizes") && c.params["resizes"].is_array(), ExitCode::kInput,
             "case {}: needs a 'resizes' list", c.name);
  const Json& list = c.params["resizes"];
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& r = list[i];
    const std::string where = fmt::format("case {}: resizes[{}]", c.name, i);
    VGEN_CHECK(r.is_object() && r.contains("image") && r.contains("height") && r.contains("width") &&
                   r.contains("filter"),
               ExitCode::kInput, "{}: needs image, height, width and filter", where);
    const std::string path = (std::filesystem::path(c.fixtures_dir) / r["image"].get<std::string>()).string();
    const Tensor img = read_image(path);
    const ResampleFilter f = resample_filter_from_name(r["filter"].get<std::string>(), where);
    const Tensor out = image_resize(img, r["height"].get<int64_t>(), r["width"].get<int64_t>(), f);  // [H, W, 3]
    const Tensor ref = c.tensors.get(fmt::format("resized_{}", i));                                 // i64 [H, W, 3]
    VGEN_CHECK(ref.shape() == out.shape(), ExitCode::kInput, "{}: output {} but reference {}", where, out.str(),
               ref.str());
    c.max_abs(fmt::format("resized_{} {}", i, resample_filter_name(f)), out, ref, 1.0);
  }
}

}  // namespace vgen
