// A 128-bit content hash as 32 hex digits (two independent 64-bit FNV-1a style lanes and a final
// avalanche): not cryptographic, for cache file names and identities.
#pragma once
#include <string>

namespace vgen {

std::string content_hash(const std::string& bytes);
// The hash of a file's bytes, or "absent" when it cannot be read.
std::string file_content_hash(const std::string& path);

}  // namespace vgen
