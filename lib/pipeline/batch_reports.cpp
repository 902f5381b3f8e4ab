#include "pipeline/batch_reports.h"

#include <cstring>

namespace vgen {
namespace {

// Like Json::value, but a null entry (e.g. "error": null) also gives the default.
template <typename T>
T get_or(const Json& j, const char* key, T dflt) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? dflt : it->get<T>();
}

VideoReport from_json(const Json& j) {
  VideoReport v;
  v.index = get_or(j, "index", 0);
  v.name = get_or(j, "name", std::string());
  v.prompt = get_or(j, "prompt", std::string());
  v.seed = get_or(j, "seed", int64_t(0));
  v.status = get_or(j, "status", std::string("failed"));
  v.error = get_or(j, "error", std::string());
  v.output = get_or(j, "output", std::string());
  v.frames = get_or(j, "frames", 0);
  v.height = get_or(j, "height", 0);
  v.width = get_or(j, "width", 0);
  v.peak_memory_bytes = get_or(j, "peak_memory_bytes", int64_t(0));
  if (j.contains("seconds")) {
    const Json& s = j["seconds"];
    v.seconds.text_encode = get_or(s, "text_encode", 0.0);
    v.seconds.steps = get_or(s, "steps", std::vector<double>{});
    v.seconds.denoise = get_or(s, "denoise", 0.0);
    v.seconds.vae_decode = get_or(s, "vae_decode", 0.0);
    v.seconds.mp4_encode = get_or(s, "mp4_encode", 0.0);
    v.seconds.total = get_or(s, "total", 0.0);
  }
  return v;
}

}  // namespace

std::vector<VideoReport> gather_video_reports(Communicator& world, const std::vector<VideoReport>& mine) {
  Json arr = Json::array();
  for (auto& v : mine) arr.push_back(Json::parse(to_json(v).dump()));
  std::string text = arr.dump();
  Tensor len = Tensor::empty({1}, DType::kI64);
  len.data<int64_t>()[0] = int64_t(text.size());
  Tensor lens = Tensor::empty({world.size()}, DType::kI64);
  world.all_gather(len, lens);
  std::vector<int64_t> counts(size_t(world.size()));
  int64_t total = 0;
  for (int r = 0; r < world.size(); ++r) total += counts[size_t(r)] = lens.data<int64_t>()[r];
  Tensor send = Tensor::empty({int64_t(text.size())}, DType::kU8);
  if (!text.empty()) std::memcpy(send.raw(), text.data(), text.size());
  Tensor recv = Tensor::empty({total}, DType::kU8);
  world.all_gather_v(send, recv, counts);
  std::vector<VideoReport> out;
  const char* p = static_cast<const char*>(recv.raw());
  for (int r = 0; r < world.size(); ++r) {
    std::string s(p, size_t(counts[size_t(r)]));
    p += counts[size_t(r)];
    for (auto& j : Json::parse(s)) out.push_back(from_json(j));
  }
  return out;
}

}  // namespace vgen
