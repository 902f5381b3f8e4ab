// JSON through nlohmann::json, with file helpers that raise vgen::Error naming the file.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"

namespace vgen {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

Json read_json_file(const std::string& path, ExitCode code_on_error);
// Writes atomically: a temporary file in the same directory, then rename.
void write_text_file_atomic(const std::string& path, const std::string& text);

}  // namespace vgen
