#include "pipeline/batch_reports.h"

#include <cstring>

namespace vgen {
namespace {

VideoReport from_json(const Json& j) {
  VideoReport v;
  v.index = j.value("index", 0);
  v.name = j.value("name", "");
  v.prompt = j.value("prompt", "");
  v.seed = j.value("seed", int64_t(0));
  v.status = j.value("status", "failed");
  v.error = j.value("error", "");
  v.output = j.value("output", "");
  v.frames = j.value("frames", 0);
  v.height = j.value("height", 0);
  v.width = j.value("width", 0);
  v.peak_memory_bytes = j.value("peak_memory_bytes", int64_t(0));
  if (j.contains("seconds")) {
    const Json& s = j["seconds"];
    v.seconds.text_encode = s.value("text_encode", 0.0);
    v.seconds.steps = s.value("steps", std::vector<double>{});
    v.seconds.denoise = s.value("denoise", 0.0);
    v.seconds.vae_decode = s.value("vae_decode", 0.0);
    v.seconds.mp4_encode = s.value("mp4_encode", 0.0);
    v.seconds.total = s.value("total", 0.0);
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
