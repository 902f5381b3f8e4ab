#include "io/report.h"

#include <cmath>

namespace vgen {

namespace {
// JSON has no NaN/inf: an unset or broken timer must not make the file unreadable.
OrderedJson num(double v) { return std::isfinite(v) ? OrderedJson(v) : OrderedJson(nullptr); }
}  // namespace

OrderedJson to_json(const VideoReport& v) {
  OrderedJson steps = OrderedJson::array();
  for (double s : v.seconds.steps) steps.push_back(num(s));
  OrderedJson secs;
  secs["text_encode"] = num(v.seconds.text_encode);
  if (v.seconds.image_encode > 0 || v.seconds.vae_encode > 0) {
    secs["image_encode"] = num(v.seconds.image_encode);
    secs["vae_encode"] = num(v.seconds.vae_encode);
  }
  secs["steps"] = steps;
  secs["denoise"] = num(v.seconds.denoise);
  secs["vae_decode"] = num(v.seconds.vae_decode);
  secs["mp4_encode"] = num(v.seconds.mp4_encode);
  secs["total"] = num(v.seconds.total);
  OrderedJson j;
  j["index"] = v.index;
  j["name"] = v.name;
  j["prompt"] = v.prompt;
  j["seed"] = v.seed;
  j["status"] = v.status;
  j["error"] = v.error.empty() ? OrderedJson(nullptr) : OrderedJson(v.error);
  j["output"] = v.output.empty() ? OrderedJson(nullptr) : OrderedJson(v.output);
  j["frames"] = v.frames;
  j["height"] = v.height;
  j["width"] = v.width;
  j["seconds"] = secs;
  j["peak_memory_bytes"] = v.peak_memory_bytes;
  j["rss_bytes"] = v.rss_bytes;
  j["reused"] = v.reused;
  j["fingerprint"] = v.fingerprint.empty() ? OrderedJson(nullptr) : OrderedJson(v.fingerprint);
  if (v.cache_forwards > 0)
    j["first_block_cache"] = {{"forwards", v.cache_forwards}, {"hits", v.cache_hits}, {"steps", v.cache_step_hits}};
  return j;
}

OrderedJson to_json(const RunReport& r) {
  OrderedJson j;
  j["recipe"] = r.recipe;
  j["mesh"] = r.mesh;
  j["device"] = r.device;
  j["load_seconds"] = num(r.load_seconds);
  OrderedJson videos = OrderedJson::array();
  for (auto& v : r.videos) videos.push_back(to_json(v));
  j["videos"] = videos;
  if (r.extra.is_object())
    for (auto& [k, v] : r.extra.items())
      if (!j.contains(k)) j[k] = v;
  return j;
}

namespace {
template <typename T>
T field(const Json& j, const char* key, T dflt) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return dflt;
  try {
    return j[key].get<T>();
  } catch (const std::exception&) {
    VGEN_THROW(ExitCode::kInput, "timing report: field '{}' has the wrong type: {}", key, j[key].dump());
  }
}
}  // namespace

VideoReport video_report_from_json(const Json& j) {
  VideoReport v;
  v.index = field(j, "index", 0);
  v.name = field<std::string>(j, "name", "");
  v.prompt = field<std::string>(j, "prompt", "");
  v.seed = field<int64_t>(j, "seed", 0);
  v.status = field<std::string>(j, "status", "failed");
  v.error = field<std::string>(j, "error", "");
  v.output = field<std::string>(j, "output", "");
  v.frames = field(j, "frames", 0);
  v.height = field(j, "height", 0);
  v.width = field(j, "width", 0);
  v.peak_memory_bytes = field<int64_t>(j, "peak_memory_bytes", 0);
  v.rss_bytes = field<int64_t>(j, "rss_bytes", 0);
  v.reused = field(j, "reused", false);
  v.fingerprint = field<std::string>(j, "fingerprint", "");
  if (j.contains("first_block_cache") && j["first_block_cache"].is_object()) {
    v.cache_forwards = field<int64_t>(j["first_block_cache"], "forwards", 0);
    v.cache_hits = field<int64_t>(j["first_block_cache"], "hits", 0);
    const Json& st = j["first_block_cache"].value("steps", Json::array());
    if (st.is_array())
      for (const Json& h : st)
        if (h.is_number_integer()) v.cache_step_hits.push_back(h.get<int64_t>());
  }
  if (j.contains("seconds") && j["seconds"].is_object()) {
    const Json& s = j["seconds"];
    v.seconds.text_encode = field(s, "text_encode", 0.0);
    v.seconds.image_encode = field(s, "image_encode", 0.0);
    v.seconds.vae_encode = field(s, "vae_encode", 0.0);
    v.seconds.denoise = field(s, "denoise", 0.0);
    v.seconds.vae_decode = field(s, "vae_decode", 0.0);
    v.seconds.mp4_encode = field(s, "mp4_encode", 0.0);
    v.seconds.total = field(s, "total", 0.0);
    if (s.contains("steps") && s["steps"].is_array())
      for (auto& x : s["steps"]) v.seconds.steps.push_back(x.is_number() ? x.get<double>() : 0.0);
  }
  return v;
}

Json mesh_to_json(const MeshShape& m) {
  return {{"world", m.world()}, {"dp", m.dp},         {"cfg", m.cfg},   {"rows", m.rows},
          {"cols", m.cols},     {"ulysses", m.ulysses}, {"ring", m.ring}, {"cp", m.cp()},
          {"seq", m.seq()},     {"vae", m.vae}};
}

void write_run_report(const std::string& path, const RunReport& r) {
  // Text that is not UTF-8 (a prompt) is written with U+FFFD rather than failing the report.
  write_text_file_atomic(path, to_json(r).dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

PreviousRun read_previous_run(const std::string& path) {
  Json j = read_json_file(path, ExitCode::kInput);
  VGEN_CHECK(j.is_object() && j.contains("videos") && j["videos"].is_array(), ExitCode::kInput,
             "{}: not a vgen timing file (no \"videos\" list)", path);
  PreviousRun p;
  for (auto& v : j["videos"]) {
    VGEN_CHECK(v.is_object() && v.contains("status") && v["status"].is_string(), ExitCode::kInput,
               "{}: a video entry lacks \"status\": {}", path, v.dump());
    VideoReport r;
    try {
      r = video_report_from_json(v);
    } catch (const Error& e) {
      VGEN_THROW(ExitCode::kInput, "{}: {}", path, e.message());
    }
    if (r.status == "failed" && !r.prompt.empty()) p.failed_prompts.insert(r.prompt);
    if (!r.name.empty()) p.by_name[r.name] = std::move(r);
  }
  return p;
}

}  // namespace vgen
