#include "batch/batch_reports.h"

#include <cstring>

namespace vgen {

std::vector<VideoReport> gather_video_reports(Communicator& world, const std::vector<VideoReport>& mine) {
  Json arr = Json::array();
  for (auto& v : mine) arr.push_back(Json::parse(to_json(v).dump(-1, ' ', false, Json::error_handler_t::replace)));
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
    for (auto& j : Json::parse(s)) out.push_back(video_report_from_json(j));
  }
  return out;
}

}  // namespace vgen
