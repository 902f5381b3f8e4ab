#include "core/hash.h"

#include <cstdint>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace vgen {

std::string content_hash(const std::string& bytes) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char c : bytes) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ (c + 0x9e)) * 0x9e3779b97f4a7c15ull;
    b ^= b >> 29;
  }
  // Final avalanche so that short keys spread over all bits.
  auto mix = [](uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
  };
  return fmt::format("{:016x}{:016x}", mix(a ^ bytes.size()), mix(b + bytes.size()));
}

std::string file_content_hash(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "absent";
  std::stringstream ss;
  ss << f.rdbuf();
  return content_hash(ss.str());
}

}  // namespace vgen
