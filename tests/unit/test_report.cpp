// timing.json: layout of docs/batch.md "Outputs", atomic write, reading failures back for --retry-failed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "io/report.h"

using namespace vgen;
namespace fs = std::filesystem;

TEST(Report, WriteAndReadBack) {
  fs::path dir = fs::temp_directory_path() / ("vgen_report_" + std::to_string(getpid()));
  fs::create_directories(dir);
  RunReport r;
  r.recipe = {{"model", "/m"}};
  MeshShape m;
  m.cfg = 2;
  m.ulysses = 2;
  r.mesh = mesh_to_json(m);
  r.device = {{"kind", "cpu"}};
  r.load_seconds = 1.5;
  VideoReport ok;
  ok.index = 0;
  ok.name = "0000-a-cat";
  ok.prompt = "A cat";
  ok.seed = 42;
  ok.output = (dir / "0000-a-cat.mp4").string();
  ok.frames = 9;
  ok.height = 32;
  ok.width = 48;
  ok.seconds.steps = {0.1, 0.2};
  ok.seconds.denoise = 0.3;
  ok.seconds.total = NAN;  // not finite → null, file stays valid JSON
  ok.cache_forwards = 16, ok.cache_hits = 9;  // the first-block cache ran
  ok.cache_step_hits = {0, 1, 2, 2, 2, 2, 0, 0};
  VideoReport bad;
  bad.index = 1;
  bad.name = "0001-dog";
  bad.status = "failed";
  bad.error = "p.jsonl:2: malformed JSON";
  VideoReport skipped;
  skipped.index = 2;
  skipped.name = "0002-x";
  skipped.status = "skipped";
  r.videos = {ok, bad, skipped};
  std::string path = (dir / "timing.json").string();
  write_run_report(path, r);

  Json j = read_json_file(path, ExitCode::kInput);
  for (const char* k : {"recipe", "mesh", "device", "load_seconds", "videos"}) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["mesh"]["world"], 4);
  EXPECT_EQ(j["mesh"]["seq"], 2);
  ASSERT_EQ(j["videos"].size(), 3u);
  Json v = j["videos"][0];
  for (const char* k : {"index", "name", "prompt", "seed", "status", "error", "output", "frames", "height", "width",
                        "seconds", "peak_memory_bytes"})
    EXPECT_TRUE(v.contains(k)) << k;
  for (const char* k : {"text_encode", "steps", "denoise", "vae_decode", "mp4_encode", "total"})
    EXPECT_TRUE(v["seconds"].contains(k)) << k;
  EXPECT_EQ(v["status"], "ok");
  EXPECT_TRUE(v["error"].is_null());
  EXPECT_EQ(v["seconds"]["steps"].size(), 2u);
  EXPECT_TRUE(v["seconds"]["total"].is_null());
  EXPECT_EQ(j["videos"][1]["error"], "p.jsonl:2: malformed JSON");
  EXPECT_EQ(v["first_block_cache"]["forwards"], 16);
  EXPECT_EQ(v["first_block_cache"]["hits"], 9);
  EXPECT_EQ(v["first_block_cache"]["steps"].size(), 8u);
  EXPECT_FALSE(j["videos"][1].contains("first_block_cache"));  // only where the cache ran

  // Round trip through JSON (null error/output and non-finite times come back as defaults).
  for (size_t i = 0; i < r.videos.size(); ++i) {
    VideoReport back = video_report_from_json(j["videos"][i]);
    EXPECT_EQ(back.index, r.videos[i].index);
    EXPECT_EQ(back.name, r.videos[i].name);
    EXPECT_EQ(back.status, r.videos[i].status);
    EXPECT_EQ(back.error, r.videos[i].error);
    EXPECT_EQ(back.output, r.videos[i].output);
    EXPECT_EQ(back.seconds.steps, r.videos[i].seconds.steps);
    EXPECT_EQ(back.frames, r.videos[i].frames);
    EXPECT_EQ(back.cache_forwards, r.videos[i].cache_forwards);
    EXPECT_EQ(back.cache_hits, r.videos[i].cache_hits);
    EXPECT_EQ(back.cache_step_hits, r.videos[i].cache_step_hits);
  }
  EXPECT_EQ(video_report_from_json(j["videos"][0]).seconds.total, 0.0);

  // A failed entry counts for the same stem made from the same prompt only (an edited prompt file can
  // give a stem to another prompt).
  PreviousRun prev = read_previous_run(path);
  EXPECT_TRUE(prev.is_failed("0001-dog", r.videos[1].prompt));
  EXPECT_FALSE(prev.is_failed("0001-dog", "another prompt"));
  EXPECT_FALSE(prev.is_failed("0000-a-cat", r.videos[0].prompt));
  EXPECT_EQ(prev.by_name.at("0000-a-cat").status, "ok");
  EXPECT_EQ(prev.by_name.at("0000-a-cat").seed, r.videos[0].seed);
  ASSERT_NE(prev.same_prompt("0000-a-cat", r.videos[0].prompt), nullptr);
  EXPECT_EQ(prev.same_prompt("0000-a-cat", "a dog"), nullptr);
  EXPECT_EQ(prev.by_name.size(), r.videos.size());
  // A failed prompt that moved to another index is still found by its text.
  VideoReport moved = bad;
  moved.prompt = "a moved dog";
  RunReport r2 = r;
  r2.videos = {moved};
  write_run_report((dir / "t2.json").string(), r2);
  PreviousRun prev2 = read_previous_run((dir / "t2.json").string());
  EXPECT_TRUE(prev2.is_failed("0000-a-moved-dog", "a moved dog"));
  EXPECT_FALSE(prev2.is_failed("0000-a-moved-dog", "a cat"));
  // No temporary files left behind: timing.json and t2.json only.
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 2);

  EXPECT_THROW(read_previous_run((dir / "missing.json").string()), Error);
  write_text_file_atomic((dir / "other.json").string(), "{\"a\": 1}");
  try {
    read_previous_run((dir / "other.json").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInput);
    EXPECT_NE(e.message().find("other.json"), std::string::npos);
  }
  fs::remove_all(dir);
}
