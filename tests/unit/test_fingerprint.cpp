// Resume fingerprints (batch/fingerprint.h) and the checks on existing videos (batch/resume.h):
// equal inputs give equal fingerprints, every pixel-affecting setting changes it, the mesh and other
// settings that change no pixel do not; the model part follows configs and safetensors headers but
// not the directory's path; whole and damaged MP4 / raw files; the verdicts of an existing video.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "batch/fingerprint.h"
#include "core/version.h"
#include "batch/resume.h"
#include "io/mp4_writer.h"
#include "io/report.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

const std::string kTiny = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny";

fs::path fresh_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("vgen_fp_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Recipe base_recipe() {
  Recipe r;
  r.model = kTiny;
  return r;
}

std::string fingerprint_of(const Recipe& r, const Json& job = Json::object(), const std::string& prompt = "a cat",
                           const std::string& negative = "", int64_t seed = 7, int frames = 9) {
  VideoFingerprints fp(r, job);
  return fp.fingerprint(fp.video_inputs(prompt, negative, seed, frames));
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// An ISO-BMFF box: 32-bit big-endian size, type, payload.
std::string box(const std::string& type, const std::string& payload) {
  const uint32_t n = uint32_t(8 + payload.size());
  std::string s = {char(n >> 24), char(n >> 16), char(n >> 8), char(n)};
  return s + type + payload;
}

}  // namespace

TEST(Fingerprint, EqualInputsGiveEqualFingerprints) {
  EXPECT_EQ(fingerprint_of(base_recipe()), fingerprint_of(base_recipe()));
  EXPECT_EQ(fingerprint_of(base_recipe()).size(), 32u);
}

TEST(Fingerprint, EveryPixelAffectingSettingChangesIt) {
  const std::string ref = fingerprint_of(base_recipe());
  const std::vector<std::pair<const char*, std::function<void(Recipe&)>>> changes = {
      {"height", [](Recipe& r) { r.generation.height += 16; }},
      {"width", [](Recipe& r) { r.generation.width += 16; }},
      {"steps", [](Recipe& r) { r.generation.num_inference_steps = 4; }},
      {"guidance", [](Recipe& r) { r.generation.guidance_scale = 2.0; }},
      {"guidance_2", [](Recipe& r) { r.generation.guidance_scale_2 = 3.0; }},
      {"boundary", [](Recipe& r) { r.generation.boundary_ratio = 0.9; }},
      {"scheduler", [](Recipe& r) { r.generation.scheduler = SchedulerKind::kEuler; }},
      {"flow_shift", [](Recipe& r) { r.generation.flow_shift = 3.0; }},
      {"max_sequence_length", [](Recipe& r) { r.generation.max_sequence_length = 16; }},
      {"precision", [](Recipe& r) { r.precision = Precision::kBf16; }},
      {"fbcache", [](Recipe& r) { r.cache.first_block_threshold = 0.1; }},
      {"fps", [](Recipe& r) { r.output.fps = 24; }},
      {"crf", [](Recipe& r) { r.output.crf = 23; }},
  };
  for (auto& [name, change] : changes) {
    Recipe r = base_recipe();
    change(r);
    EXPECT_NE(fingerprint_of(r), ref) << name;
  }
  // The prompt line's own values.
  const Recipe r = base_recipe();
  EXPECT_NE(fingerprint_of(r, Json::object(), "a dog"), ref);
  EXPECT_NE(fingerprint_of(r, Json::object(), "a cat", "blurry"), ref);
  EXPECT_NE(fingerprint_of(r, Json::object(), "a cat", "", 8), ref);
  EXPECT_NE(fingerprint_of(r, Json::object(), "a cat", "", 7, 13), ref);
  // The job part (model files, LoRA, initial latents, version).
  EXPECT_NE(fingerprint_of(r, Json{{"lora", Json::array({"x"})}}), ref);
}

// A line without images hashes exactly what a vgen without image inputs hashed (the value below is
// that vgen's), so the sidecars it wrote stay valid (docs/batch.md "Resume").
TEST(Fingerprint, ALineWithoutImagesKeepsItsFingerprint) {
  VideoFingerprints fp(base_recipe(), Json{{"vgen_version", "dev"}});
  const Json inputs = fp.video_inputs("a cat", "blurry", 7, 9);
  EXPECT_EQ(fp.video_inputs("a cat", "blurry", 7, 9, Json::object()), inputs);
  EXPECT_FALSE(inputs.contains("image") || inputs.contains("last_image"));
  EXPECT_EQ(fp.fingerprint(inputs), "191772e1873a672a781b5dbcca579e08");
}

TEST(Fingerprint, Fp8ConfigCountsUnderFp8Only) {
  Recipe fp8 = base_recipe();
  fp8.precision = Precision::kFp8;
  Recipe fp8_b = fp8;
  fp8_b.fp8.bf16_last_steps = 2;
  EXPECT_NE(fingerprint_of(fp8), fingerprint_of(fp8_b));
  Recipe bf16 = base_recipe(), bf16_b = base_recipe();
  bf16.precision = bf16_b.precision = Precision::kBf16;
  bf16_b.fp8.bf16_last_steps = 2;  // ignored under bf16: the same pixels
  EXPECT_EQ(fingerprint_of(bf16), fingerprint_of(bf16_b));
}

TEST(Fingerprint, MeshAndOtherNonPixelSettingsDoNotChangeIt) {
  const std::string ref = fingerprint_of(base_recipe());
  const std::vector<std::pair<const char*, std::function<void(Recipe&)>>> changes = {
      {"dp", [](Recipe& r) { r.parallel.dp_size = 2; }},
      {"cfg", [](Recipe& r) { r.parallel.cfg_size = 2; }},
      {"ulysses", [](Recipe& r) { r.parallel.ulysses_size = 4; }},
      {"ring", [](Recipe& r) { r.parallel.ring_size = 2; }},
      {"vae", [](Recipe& r) { r.parallel.parallel_vae_size = 2; }},
      {"dwdp", [](Recipe& r) { r.parallel.dwdp_size = 2; }},
      {"dwdp transport", [](Recipe& r) { r.parallel.dwdp_transport = DwdpTransport::kIpc; }},
      {"output dir", [](Recipe& r) { r.output.dir = "/elsewhere"; }},
      {"skip_existing", [](Recipe& r) { r.output.skip_existing = false; }},
      {"recipe seed", [](Recipe& r) { r.generation.seed = 1234; }},  // the line's resolved seed counts
      {"timeout", [](Recipe& r) { r.runtime.collective_timeout_s = 5; }},
  };
  for (auto& [name, change] : changes) {
    Recipe r = base_recipe();
    change(r);
    EXPECT_EQ(fingerprint_of(r), ref) << name;
  }
}

TEST(Fingerprint, ModelPartFollowsConfigsAndHeadersNotThePath) {
  const fs::path a = fresh_dir("model_a"), b = fresh_dir("model_b");
  fs::copy(kTiny, a / "m", fs::copy_options::recursive);
  fs::copy(kTiny, b / "m", fs::copy_options::recursive);
  Recipe ra = base_recipe(), rb = base_recipe();
  ra.model = (a / "m").string(), rb.model = (b / "m").string();
  const Json ja = job_fingerprint_inputs(ra);
  EXPECT_EQ(ja, job_fingerprint_inputs(rb));  // a copy elsewhere is the same model
  EXPECT_EQ(ja["vgen_version"].get<std::string>(), vgen_version());
  EXPECT_TRUE(ja["model"]["components"]["transformer"]["diffusion_pytorch_model.safetensors"].contains("header_hash"));

  // A config edit changes it.
  const fs::path cfg = b / "m" / "transformer" / "config.json";
  std::string text;
  {
    std::ifstream f(cfg);
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  write_bytes(cfg, text + " ");
  EXPECT_NE(job_fingerprint_inputs(rb), ja);
  write_bytes(cfg, text);
  EXPECT_EQ(job_fingerprint_inputs(rb), ja);

  // Tensor data is not read: a byte after the header leaves it alone; a header byte changes it.
  const fs::path st = b / "m" / "vae" / "diffusion_pytorch_model.safetensors";
  std::fstream f(st, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(-1, std::ios::end);
  f.put('\x7f');
  f.flush();
  EXPECT_EQ(job_fingerprint_inputs(rb), ja);
  f.seekg(8);
  const char c = char(f.get());
  f.seekp(8);
  f.put(c == '{' ? '[' : '{');
  f.close();
  EXPECT_NE(job_fingerprint_inputs(rb), ja);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(Fingerprint, ChangedInputsNameWhatChanged) {
  VideoFingerprints fp(base_recipe(), Json{{"model", "m1"}});
  Recipe r2 = base_recipe();
  r2.generation.guidance_scale = 2.0;
  VideoFingerprints fp2(r2, Json{{"model", "m2"}});
  const Json a = fp.sidecar(fp.video_inputs("a cat", "", 7, 9))["inputs"];
  const Json b = fp2.sidecar(fp2.video_inputs("a dog", "", 7, 9))["inputs"];
  EXPECT_EQ(changed_inputs(a, b), "model, guidance_scale 5.0 → 2.0, prompt");
}

TEST(Resume, WholeAndDamagedMp4) {
  const fs::path d = fresh_dir("mp4");
  const std::string good = box("ftyp", "isom0000") + box("mdat", std::string(100, 'x')) + box("moov", "m");
  write_bytes(d / "good.mp4", good);
  EXPECT_EQ(video_damage((d / "good.mp4").string()), "");
  EXPECT_NE(video_damage((d / "good.mp4").string(), int64_t(good.size()) + 1), "");  // not the recorded size
  write_bytes(d / "empty.mp4", "");
  EXPECT_EQ(video_damage((d / "empty.mp4").string()), "empty file");
  write_bytes(d / "garbage.mp4", std::string(200, '\x5a'));
  EXPECT_NE(video_damage((d / "garbage.mp4").string()), "");
  write_bytes(d / "cut.mp4", good.substr(0, 60));  // mdat runs past the end
  EXPECT_NE(video_damage((d / "cut.mp4").string()), "");
  write_bytes(d / "nomoov.mp4", box("ftyp", "isom0000") + box("mdat", "x"));
  EXPECT_NE(video_damage((d / "nomoov.mp4").string()), "");
  EXPECT_NE(video_damage((d / "absent.mp4").string()), "");
  fs::remove_all(d);
}

TEST(Resume, RawVideoSizeFollowsItsJson) {
  const fs::path d = fresh_dir("raw");
  Tensor frames = Tensor::zeros({2, 4, 6, 3}, DType::kU8);
  const std::string rgb = write_raw_rgb((d / "v.mp4").string(), frames, VideoOptions{});
  EXPECT_EQ(video_damage(rgb), "");
  fs::resize_file(rgb, 2 * 4 * 6 * 3 - 1);
  EXPECT_NE(video_damage(rgb), "");
  fs::remove_all(d);
}

TEST(Resume, VerdictsOfAnExistingVideo) {
  const fs::path d = fresh_dir("verdict");
  const std::string mp4 = (d / "0000-cat.mp4").string(), file = video_file(mp4);
  VideoFingerprints fp(base_recipe(), Json::object());
  const Json expect = fp.sidecar(fp.video_inputs("a cat", "", 7, 9));
  EXPECT_EQ(check_existing_video(mp4, expect).verdict, Verdict::kNew);

  if (mp4_supported()) write_bytes(file, box("ftyp", "isom0000") + box("moov", "m"));
  else write_raw_rgb(mp4, Tensor::zeros({1, 2, 2, 3}, DType::kU8), VideoOptions{});
  EXPECT_EQ(check_existing_video(mp4, expect).verdict, Verdict::kNoSidecar);

  write_sidecar(mp4, file, expect);
  EXPECT_EQ(sidecar_path(mp4), (d / "0000-cat.vgen.json").string());
  const ExistingVideo same = check_existing_video(mp4, expect);
  EXPECT_EQ(same.verdict, Verdict::kReuse) << same.why;
  EXPECT_EQ(same.fingerprint, expect["fingerprint"].get<std::string>());

  const ExistingVideo other = check_existing_video(mp4, fp.sidecar(fp.video_inputs("a cat", "", 8, 9)));
  EXPECT_EQ(other.verdict, Verdict::kChanged);
  EXPECT_EQ(other.why, "settings changed: seed 7 → 8");

  fs::resize_file(file, fs::file_size(file) - 1);  // not the size the sidecar recorded
  EXPECT_EQ(check_existing_video(mp4, expect).verdict, Verdict::kDamaged);
  write_bytes(sidecar_path(mp4), "{not json");
  EXPECT_EQ(check_existing_video(mp4, expect).verdict, Verdict::kDamaged);
  fs::remove_all(d);
}

TEST(Resume, OnlyVgenTemporariesAreTemporary) {
  EXPECT_TRUE(is_vgen_temporary("0001-cat.tmp.mp4"));
  EXPECT_TRUE(is_vgen_temporary("0001-cat.vgen.json.tmp.1234"));
  EXPECT_FALSE(is_vgen_temporary("notes.tmp.txt"));
  EXPECT_FALSE(is_vgen_temporary("0001-cat.vgen.json"));
}

TEST(Resume, TimingJsonCarriesReuseAndFingerprint) {
  VideoReport v;
  v.status = "skipped";
  v.reused = true;
  v.fingerprint = "0123456789abcdef0123456789abcdef";
  const OrderedJson j = to_json(v);
  EXPECT_EQ(j["reused"].get<bool>(), true);
  EXPECT_EQ(j["fingerprint"].get<std::string>(), v.fingerprint);
  const VideoReport back = video_report_from_json(Json::parse(j.dump()));
  EXPECT_TRUE(back.reused);
  EXPECT_EQ(back.fingerprint, v.fingerprint);
  const OrderedJson none = to_json(VideoReport{});
  EXPECT_EQ(none["reused"].get<bool>(), false);
  EXPECT_TRUE(none["fingerprint"].is_null());  // no output, no fingerprint
  EXPECT_FALSE(video_report_from_json(Json::object()).reused);  // an older timing.json
}
