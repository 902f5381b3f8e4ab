#include "core/json.h"

#include <unistd.h>

#include <cstdio>
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
  VGEN_CHECK(f, ExitCode::kOutput, "cannot write {} (is the output directory writable?)", tmp);
  size_t n = std::fwrite(text.data(), 1, text.size(), f);
  bool ok = n == text.size() && std::fflush(f) == 0;
  ok = (fsync(fileno(f)) == 0) && ok;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    VGEN_THROW(ExitCode::kOutput, "failed to write {}", path);
  }
}

}  // namespace vgen
