#include "batch/resume.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/log.h"
#include "batch/fingerprint.h"
#include "io/mp4_writer.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

std::string stem_path(const std::string& mp4_path) { return fs::path(mp4_path).replace_extension().string(); }

uint64_t big_endian(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// Walks the top-level ISO-BMFF boxes: a complete MP4 starts with `ftyp`, holds `moov` (written when
// the muxer finishes) and its boxes end exactly at the end of the file.
std::string mp4_damage(const std::string& path, uint64_t size) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot be read";
  bool moov = false;
  uint64_t pos = 0;
  for (int boxes = 0; pos < size; ++boxes) {
    if (boxes > 100000) return "too many boxes";
    unsigned char h[16];
    if (size - pos < 8 || !f.seekg(std::streamoff(pos)) || !f.read(reinterpret_cast<char*>(h), 8))
      return fmt::format("truncated box header at byte {}", pos);
    const std::string type(reinterpret_cast<const char*>(h + 4), 4);
    if (boxes == 0 && type != "ftyp") return "not an MP4 (no ftyp box first)";
    uint64_t box = big_endian(h, 4), header = 8;
    if (box == 1) {  // 64-bit size follows the type
      if (size - pos < 16 || !f.read(reinterpret_cast<char*>(h + 8), 8)) return "truncated box header";
      box = big_endian(h + 8, 8), header = 16;
    } else if (box == 0) {
      box = size - pos;  // the last box runs to the end of the file
    }
    if (box < header || box > size - pos)
      return fmt::format("box '{}' at byte {} runs past the end of the file", type, pos);
    moov = moov || type == "moov";
    pos += box;
  }
  return moov ? "" : "no moov box (the encoder did not finish)";
}

// A raw video holds frames·height·width·3 bytes by its `<stem>.json` (io/mp4_writer.h).
std::string raw_damage(const std::string& path, uint64_t size) {
  const std::string meta = stem_path(path) + ".json";
  try {
    const Json j = read_json_file(meta, ExitCode::kInput);
    const uint64_t want = j.at("frames").get<uint64_t>() * j.at("height").get<uint64_t>() *
                          j.at("width").get<uint64_t>() * 3;
    if (want != size) return fmt::format("{} bytes, {} says {}", size, fs::path(meta).filename().string(), want);
  } catch (const std::exception&) {
    return fmt::format("{} is missing or unreadable", fs::path(meta).filename().string());
  }
  return "";
}

}  // namespace

bool is_vgen_temporary(const std::string& n) {
  const size_t p = n.rfind(".tmp.");
  if (p == std::string::npos || p == 0) return false;
  const std::string tail = n.substr(p + 5);
  return tail == "mp4" || (!tail.empty() && tail.find_first_not_of("0123456789") == std::string::npos);
}

void remove_stale_temporaries(const std::string& dir) {
  for (auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (e.is_regular_file() && is_vgen_temporary(n)) {
      std::error_code ec;
      fs::remove(e.path(), ec);
      if (!ec) log_info("removed stale temporary file {}", e.path().string());
    }
  }
}

std::string video_file(const std::string& mp4_path) {
  return mp4_supported() ? mp4_path : stem_path(mp4_path) + ".rgb";
}

std::string sidecar_path(const std::string& mp4_path) { return stem_path(mp4_path) + ".vgen.json"; }

std::string video_damage(const std::string& path, int64_t expected_bytes) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return "cannot be read";
  if (size == 0) return "empty file";
  if (expected_bytes >= 0 && size != uint64_t(expected_bytes))
    return fmt::format("{} bytes, its sidecar says {}", size, expected_bytes);
  return fs::path(path).extension() == ".rgb" ? raw_damage(path, size) : mp4_damage(path, size);
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kNew: return "new";
    case Verdict::kReuse: return "reused";
    case Verdict::kChanged: return "settings changed";
    case Verdict::kNoSidecar: return "no sidecar";
    case Verdict::kDamaged: return "damaged";
  }
  return "?";
}

ExistingVideo check_existing_video(const std::string& mp4_path, const Json& expect) {
  ExistingVideo r;
  const std::string file = video_file(mp4_path), side = sidecar_path(mp4_path);
  if (!fs::exists(file)) return r;  // kNew
  if (!fs::exists(side)) {
    r.verdict = Verdict::kNoSidecar;
    r.why = "no " + fs::path(side).filename().string() + " (made by an older vgen, or it was removed)";
    return r;
  }
  Json got;
  try {
    got = read_json_file(side, ExitCode::kInput);
    r.fingerprint = got.at("fingerprint").get<std::string>();
  } catch (const std::exception&) {
    r.verdict = Verdict::kDamaged;
    r.why = fs::path(side).filename().string() + " is unreadable";
    return r;
  }
  if (r.fingerprint != expect.at("fingerprint").get<std::string>()) {
    r.verdict = Verdict::kChanged;
    r.why = "settings changed: " + changed_inputs(got.value("inputs", Json(nullptr)), expect.at("inputs"));
    return r;
  }
  const Json bytes = got.value("bytes", Json(nullptr));
  const std::string damage = video_damage(file, bytes.is_number_integer() ? bytes.get<int64_t>() : -1);
  r.verdict = damage.empty() ? Verdict::kReuse : Verdict::kDamaged;
  if (!damage.empty()) r.why = fs::path(file).filename().string() + ": " + damage;
  return r;
}

namespace {
constexpr size_t kListed = 20;  // videos named one by one in a log; the rest are counted
}  // namespace

void ResumeTally::replace(const std::string& name, Verdict v, const std::string& why) {
  if (v != Verdict::kReuse) count(v);  // a kept-alike video replaced anyway (skip_existing off) has its own reason
  replaced_.emplace_back(name, why);
}

void ResumeTally::log() const {
  for (size_t i = 0; i < replaced_.size() && i < kListed; ++i)
    log_info("{}: rendered again, {}", replaced_[i].first, replaced_[i].second);
  if (replaced_.size() > kListed) log_info("… and {} more videos rendered again", replaced_.size() - kListed);
  auto n = [this](Verdict v) { return counts_[size_t(v)]; };
  log_info("resume: {} reused, {} rendered again ({} settings changed, {} no sidecar, {} damaged), {} new",
           n(Verdict::kReuse), replaced_.size(), n(Verdict::kChanged), n(Verdict::kNoSidecar), n(Verdict::kDamaged),
           n(Verdict::kNew));
}

void ResumeTally::log_refusal() const {
  log_error("--no-overwrite: {} existing video(s) would be rendered again; nothing was rendered:", replaced_.size());
  for (size_t i = 0; i < replaced_.size() && i < kListed; ++i)
    log_error("  {}: {}", replaced_[i].first, replaced_[i].second);
  if (replaced_.size() > kListed) log_error("  … and {} more", replaced_.size() - kListed);
}

void write_sidecar(const std::string& mp4_path, const std::string& written_file, Json content) {
  content["video"] = fs::path(written_file).filename().string();
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(written_file, ec);
  VGEN_CHECK(!ec, ExitCode::kOutput, "cannot read the size of {}: {}", written_file, ec.message());
  content["bytes"] = bytes;
  write_text_file_atomic(sidecar_path(mp4_path), content.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

}  // namespace vgen
