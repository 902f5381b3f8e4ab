// The images of prompt lines (batch/preflight_images.h, docs/batch.md "Image inputs"): each file is
// decoded and hashed before any work; a missing, corrupt or unsupported file, or an image the
// checkpoint cannot take, fails its line alone with a message naming the prompt file, the line and
// the image; the files come before the checkpoint; the lines' images join their fingerprints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "batch/fingerprint.h"
#include "batch/preflight_images.h"
#include "core/hash.h"
#include "image_test_util.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

const std::string kImages = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/images";

fs::path fresh_dir() {
  fs::path d = fs::temp_directory_path() / ("vgen_preflight_images_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

ImageInputRules rules(ImageConditioning c, bool last = false) {
  ImageInputRules r;
  r.conditioning = c;
  r.takes_last_image = last;
  r.checkpoint = "/m/wan";
  r.variant = "Wan X";
  return r;
}

PromptItem line_with(const char* image, const char* last = nullptr) {
  PromptItem it;
  it.line = 1;
  it.prompt = "a cat";
  if (image) it.image.emplace().path = image;
  if (last) it.last_image.emplace().path = last;
  return it;
}

std::string problem(const ImageInputRules& r, const PromptItem& it) { return image_conditioning_problem(r, it); }

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// What each checkpoint kind accepts (ModelTraits::images), and this vgen's pipeline gate.
TEST(PreflightImages, ConditioningAgainstTheCheckpoint) {
  using C = ImageConditioning;
  EXPECT_EQ(problem(rules(C::kNone), line_with(nullptr)), "");
  EXPECT_TRUE(has(problem(rules(C::kNone), line_with("/i/a.png")),
                  "image /i/a.png: /m/wan is a text-to-video checkpoint (Wan X); the line's image cannot be used"));
  EXPECT_TRUE(has(problem(rules(C::kRequired, true), line_with(nullptr)),
                  "/m/wan is an image-to-video checkpoint (Wan X); the line needs an 'image'"));
  EXPECT_EQ(problem(rules(C::kRequired, true), line_with("/i/a.png", "/i/b.png")), "");
  EXPECT_EQ(problem(rules(C::kOptional), line_with(nullptr)), "");
  ImageInputRules pairs = rules(C::kRequired, true);
  pairs.needs_last_image = true;  // Wan 2.1 FLF2V
  EXPECT_TRUE(has(problem(pairs, line_with("/i/a.png")), "image /i/a.png: /m/wan (Wan X) renders from a first and a "
                  "last frame; the line needs a 'last_image'"));
  EXPECT_EQ(problem(pairs, line_with("/i/a.png", "/i/b.png")), "");
  EXPECT_EQ(problem(rules(C::kOptional), line_with("/i/a.png")), "");
  EXPECT_TRUE(has(problem(rules(C::kOptional), line_with("/i/a.png", "/i/b.png")),
                  "last_image /i/b.png: /m/wan (Wan X) takes a first frame only"));
}

// The files: a good PNG is hashed; a missing file, a few bytes, a directory, a GIF and an empty file
// each fail their own line (file:line and the image named); the other lines stay valid; a file comes
// before the checkpoint, so a missing image on a text-to-video checkpoint is named as missing.
TEST(PreflightImages, EachBadFileFailsItsLineAlone) {
  VGEN_SKIP_WITHOUT_DECODERS();
  const fs::path d = fresh_dir();
  std::ofstream(d / "corrupt.png", std::ios::binary) << "\x89PNG\r\n\x1a\nxx";
  std::ofstream(d / "anim.gif", std::ios::binary) << "GIF89a....";
  std::ofstream(d / "empty.png", std::ios::binary);
  fs::create_directories(d / "dir.png");
  const std::string good = kImages + "/i2v_first.png";
  std::ofstream(d / "p.jsonl")
      << "{\"prompt\": \"ok\", \"image\": \"" << good << "\", \"last_image\": \"" << kImages << "/flf_last.png\"}\n"
      << "{\"prompt\": \"missing\", \"image\": \"no-such.png\"}\n"
      << "{\"prompt\": \"corrupt\", \"image\": \"corrupt.png\"}\n"
      << "{\"prompt\": \"dir\", \"image\": \"dir.png\"}\n"
      << "{\"prompt\": \"gif\", \"image\": \"" << good << "\", \"last_image\": \"anim.gif\"}\n"
      << "{\"prompt\": \"text only\"}\n"
      << "{\"prompt\": \"empty\", \"image\": \"empty.png\"}\n";
  const std::string path = (d / "p.jsonl").string();
  std::vector<PromptItem> items = load_prompts(path);
  ASSERT_EQ(items.size(), 7u);
  preflight_images(rules(ImageConditioning::kRequired, true), path, items);
  ASSERT_TRUE(items[0].ok()) << items[0].error;
  EXPECT_EQ(items[0].image->bytes, int64_t(fs::file_size(good)));
  EXPECT_EQ(items[0].image->content_hash, file_content_hash(good));
  EXPECT_EQ(items[0].last_image->content_hash, file_content_hash(kImages + "/flf_last.png"));
  const std::string at = path + ":";
  EXPECT_TRUE(has(items[1].error, at + "2: image " + (d / "no-such.png").string() + ": no such file"))
      << items[1].error;
  EXPECT_TRUE(has(items[2].error, at + "3: image " + (d / "corrupt.png").string() + ": ")) << items[2].error;
  EXPECT_TRUE(has(items[3].error, at + "4: image " + (d / "dir.png").string() + ": is a directory")) << items[3].error;
  EXPECT_TRUE(has(items[4].error, at + "5: last_image " + (d / "anim.gif").string() + ": GIF images are not supported"))
      << items[4].error;
  EXPECT_TRUE(has(items[5].error, at + "6: /m/wan is an image-to-video checkpoint")) << items[5].error;
  EXPECT_TRUE(has(items[6].error, at + "7: image " + (d / "empty.png").string() + ": the file is empty"))
      << items[6].error;

  // On a text-to-video checkpoint: the missing file is named as missing, the good one as unusable.
  std::vector<PromptItem> t2v = load_prompts(path);
  preflight_images(rules(ImageConditioning::kNone), path, t2v);
  EXPECT_TRUE(has(t2v[0].error, at + "1: image " + good + ": /m/wan is a text-to-video checkpoint")) << t2v[0].error;
  EXPECT_TRUE(has(t2v[1].error, "no-such.png: no such file")) << t2v[1].error;
  EXPECT_TRUE(t2v[5].ok()) << t2v[5].error;
  fs::remove_all(d);
}

// A changed image changes its line's fingerprint; a moved copy does not; a line without images keeps
// the fingerprint of a vgen without image inputs (existing sidecars stay valid).
TEST(PreflightImages, ImagesJoinTheFingerprintByContent) {
  VGEN_SKIP_WITHOUT_DECODERS();
  const fs::path d = fresh_dir();
  fs::copy_file(kImages + "/i2v_first.png", d / "a.png");
  fs::copy_file(kImages + "/i2v_first.png", d / "copy.png");
  std::ofstream(d / "p.jsonl") << "{\"prompt\": \"a\", \"image\": \"a.png\"}\n"
                               << "{\"prompt\": \"a\", \"image\": \"copy.png\"}\n"
                               << "{\"prompt\": \"a\"}\n"
                               << "{\"prompt\": \"a\", \"image\": \"a.png\", \"last_image\": \"a.png\"}\n";
  const std::string path = (d / "p.jsonl").string();
  auto fingerprints = [&] {
    std::vector<PromptItem> items = load_prompts(path);
    preflight_images(rules(ImageConditioning::kOptional, true), path, items);
    Recipe r;
    r.model = "/m";
    VideoFingerprints fp(r, Json::object());
    std::vector<std::string> out;
    for (const PromptItem& it : items) {
      EXPECT_TRUE(it.ok()) << it.error;
      out.push_back(fp.fingerprint(fp.video_inputs(it.prompt, "", 7, 9, image_fingerprint_inputs(it))));
    }
    EXPECT_EQ(fp.fingerprint(fp.video_inputs("a", "", 7, 9)), out[2]);  // no images: as before
    EXPECT_EQ(image_fingerprint_inputs(items[2]), Json::object());
    return out;
  };
  const std::vector<std::string> before = fingerprints();
  EXPECT_EQ(before[0], before[1]);  // the same bytes under another name
  EXPECT_NE(before[0], before[2]);
  EXPECT_NE(before[0], before[3]);  // a last frame counts
  fs::copy_file(kImages + "/flf_first.png", d / "a.png", fs::copy_options::overwrite_existing);
  const std::vector<std::string> after = fingerprints();
  EXPECT_NE(after[0], before[0]);  // the image changed: rendered again
  EXPECT_EQ(after[1], before[1]);
  EXPECT_EQ(after[2], before[2]);
  EXPECT_NE(after[3], before[3]);
  fs::remove_all(d);
}

// One process: agree_on_prompt_errors keeps the lines as they are; the test hook fails one line.
TEST(PreflightImages, AgreementOnOneRankAndTheInjectedLine) {
  std::vector<PromptItem> items = parse_prompts("a\nb\nc\n", "p.txt");
  agree_on_prompt_errors("p.txt", items);
  for (const PromptItem& it : items) EXPECT_TRUE(it.ok()) << it.error;
  setenv("VGEN_INJECT_LINE_ERROR", "0:2", 1);
  agree_on_prompt_errors("p.txt", items);
  unsetenv("VGEN_INJECT_LINE_ERROR");
  EXPECT_TRUE(items[0].ok() && items[2].ok());
  EXPECT_TRUE(has(items[1].error, "p.txt:2: injected failure on rank 0 (VGEN_INJECT_LINE_ERROR)")) << items[1].error;
}

namespace {

// generation.image_max_area: the size diffusers' image-to-video examples compute (values from
// Python: round(sqrt(area · h / w)) // m · m and round(sqrt(area · w / h)) // m · m).
TEST(PreflightImages, SizeFromTheImageAsTheExamplesComputeIt) {
  using A = std::array<int, 2>;
  EXPECT_EQ(size_from_image(720, 1280, 480 * 832, 16), (A{464, 832}));
  EXPECT_EQ(size_from_image(1024, 1024, 480 * 832, 16), (A{624, 624}));
  EXPECT_EQ(size_from_image(832, 480, 720 * 1280, 16), (A{1264, 720}));
  EXPECT_EQ(size_from_image(704, 1280, 704 * 1280, 32), (A{704, 1280}));
  EXPECT_EQ(size_from_image(3, 5000, 480 * 832, 16)[0], 0);  // a sliver leaves no frame
}

// The preflight sizes image lines from their first image (after the orientation) and leaves the
// others at the recipe's size; a sliver fails its line.
TEST(PreflightImages, ImageMaxAreaSizesTheImageLines) {
  VGEN_SKIP_WITHOUT_DECODERS();
  const fs::path d = fresh_dir();
  std::ofstream(d / "p.jsonl") << "{\"prompt\": \"a\", \"image\": \"" << kImages << "/i2v_first.png\"}\n"
                               << "{\"prompt\": \"text only\"}\n";
  const std::string path = (d / "p.jsonl").string();
  std::vector<PromptItem> items = load_prompts(path);
  ImageInputRules r = rules(ImageConditioning::kOptional);
  r.image_max_area = 480 * 832;
  preflight_images(r, path, items);
  ASSERT_TRUE(items[0].ok()) << items[0].error;
  EXPECT_EQ(items[0].image->height, 32);  // i2v_first.png is 48 × 32
  EXPECT_EQ(items[0].image->width, 48);
  const std::array<int, 2> want = size_from_image(32, 48, 480 * 832, 16);
  EXPECT_EQ(items[0].height, want[0]);
  EXPECT_EQ(items[0].width, want[1]);
  EXPECT_FALSE(items[1].height.has_value());
  fs::remove_all(d);
}

}  // namespace
