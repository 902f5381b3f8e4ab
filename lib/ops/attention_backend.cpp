#include "ops/attention_backend.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>

#include "ops/device_ops.h"

namespace vgen {

AttentionBackend parse_attention_backend(const std::string& name) {
  if (name == "auto") return AttentionBackend::kAuto;
  if (name == "native") return AttentionBackend::kNative;
  if (name == "cudnn") return AttentionBackend::kCudnn;
  VGEN_THROW(ExitCode::kUsage, "attention_config.backend: unknown backend '{}' (expected auto, native or cudnn)",
             name);
}

namespace {
constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();
std::atomic<int64_t> g_kv_chunk{kUnset};  // read VGEN_ATTN_KV_CHUNK on first use
}  // namespace

void set_attention_kv_chunk(int64_t tokens) { g_kv_chunk.store(tokens < 0 ? -1 : tokens); }

int64_t attention_kv_chunk() {
  int64_t v = g_kv_chunk.load();
  if (v == kUnset) {
    const char* e = std::getenv("VGEN_ATTN_KV_CHUNK");
    const std::string s = e ? e : "";
    if (s.empty() || s == "auto") {
      v = -1;
    } else {
      VGEN_CHECK(s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos, ExitCode::kUsage,
                 "VGEN_ATTN_KV_CHUNK={}: expected auto, 0 (no split) or a key count", s);
      v = std::stoll(s);
    }
    g_kv_chunk.store(v);
  }
  return v;
}

namespace {
std::atomic<int> g_tail_fold{-1};  // read VGEN_ATTN_TAIL on first use
}  // namespace

void set_attention_tail_fold(bool fold) { g_tail_fold.store(fold ? 1 : 0); }

bool attention_tail_fold() {
  int v = g_tail_fold.load();
  if (v < 0) {
    const char* e = std::getenv("VGEN_ATTN_TAIL");
    const std::string s = e ? e : "";
    VGEN_CHECK(s.empty() || s == "fold" || s == "cudnn", ExitCode::kUsage,
               "VGEN_ATTN_TAIL={}: expected fold (the remainder keys merged in one pass) or cudnn", s);
    v = s == "cudnn" ? 0 : 1;
    g_tail_fold.store(v);
  }
  return v == 1;
}

std::vector<std::pair<int64_t, int64_t>> attention_kv_plan(int64_t num_valid, int64_t chunk) {
  constexpr int64_t kAlign = 128, kMaxParts = 16;
  const int64_t main = num_valid / kAlign * kAlign, tail = num_valid - main;
  if (chunk == 0 || main == 0 || (chunk < 0 && (num_valid < kKvSplitMinKeys || tail == 0)) ||
      (chunk > 0 && num_valid <= chunk))
    return {{0, num_valid}};
  std::vector<std::pair<int64_t, int64_t>> plan;
  int64_t n = chunk > 0 ? std::min(kMaxParts - 1, (main + chunk - 1) / chunk) : 1;
  const int64_t step = ((main + n - 1) / n + kAlign - 1) / kAlign * kAlign;  // 128-multiple pieces
  for (int64_t c0 = 0; c0 < main; c0 += step) plan.emplace_back(c0, std::min(step, main - c0));
  if (tail > 0) plan.emplace_back(main, tail);
  return plan;
}


AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, const std::string& backend) {
  return cuda_attention_auto(q, k, v, out, lse, num_valid_kv, scale, parse_attention_backend(backend));
}

#ifndef VGEN_WITH_CUDA
bool cudnn_attention_available(std::string* why) {
  if (why) *why = "this vgen was built without the CUDA backend (VGEN_CUDA=OFF)";
  return false;
}

AttentionBackend cuda_attention_auto(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*, int64_t, float,
                                     AttentionBackend) {
  VGEN_THROW(ExitCode::kUsage,
             "cuda_attention_auto: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu");
}
#endif

}  // namespace vgen
