#include "core/json.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace vgen {

Json read_json_file(const std::string& path, ExitCode code) {
  std::ifstream f(path);
  VGEN_CHECK(f.good(), code, "cannot open JSON file {}", path);
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return Json::parse(ss.str());
  } catch (const std::exception& e) {
    VGEN_THROW(code, "malformed JSON in {}: {}", path, e.what());
  }
}

void write_text_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  VGEN_CHECK(f, ExitCode::kOutput, "cannot write {}: {}", tmp, std::strerror(errno));
  // The first failing call's errno names the reason (ENOSPC, EDQUOT, EIO...).
  int err = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) err = errno;
  if (fsync(fileno(f)) != 0 && !err) err = errno;
  if (std::fclose(f) != 0 && !err) err = errno;
  if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    std::remove(tmp.c_str());
    VGEN_THROW(ExitCode::kOutput, "failed to write {}: {}", path, std::strerror(err));
  }
}

}  // namespace vgen
