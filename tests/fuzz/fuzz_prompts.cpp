// Prompt files (io/prompts.cpp): the input is a prompt file, parsed as JSONL (by extension) and as a
// plain text file (JSONL again if its first prompt line starts with '{'). Bad lines never throw:
// they become failed items. Every item has consecutive indices, a line inside the file, a file
// name stem of ASCII [a-z0-9-]; an item that is not failed has a non-empty UTF-8 prompt (and
// negative prompt) and a frame count of the form 4k+1.
#include "core/utf8.h"
#include "fuzz_common.h"
#include "io/prompts.h"

using namespace vgen;

namespace {

void check_items(const std::vector<PromptItem>& items, const std::string& text) {
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (size_t i = 0; i < items.size(); ++i) {
    const PromptItem& it = items[i];
    fuzz::check(it.index == int(i), "prompt indices are not consecutive");
    fuzz::check(it.line >= 1 && size_t(it.line) <= lines, "prompt line outside the file");
    fuzz::check(!it.name.empty(), "empty slug");
    for (char c : it.name)
      fuzz::check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-', "slug character", it.name);
    fuzz::check(it.stem().size() == it.name.size() + 5 || it.index > 9999, "stem", it.stem());
    fuzz::check(first_invalid_utf8(it.prompt) == std::string::npos, "prompt is not UTF-8");
    if (!it.ok()) continue;
    fuzz::check(!it.prompt.empty(), "accepted prompt is empty");
    if (it.negative_prompt)
      fuzz::check(first_invalid_utf8(*it.negative_prompt) == std::string::npos, "negative prompt is not UTF-8");
    if (it.num_frames) fuzz::check(*it.num_frames >= 1 && *it.num_frames % 4 == 1, "num_frames is not 4k+1");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const char* path : {"prompts.jsonl", "prompts.txt"})
    fuzz::expect_documented({}, [&] { check_items(parse_prompts(text, path), text); });
  return 0;
}
