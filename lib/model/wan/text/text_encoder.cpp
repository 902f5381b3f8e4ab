#include "model/wan/text/text_encoder.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/hash.h"
#include "core/log.h"
#include "io/diffusers_dir.h"
#include "model/text/prompt_clean.h"

namespace vgen {

namespace {

Umt5Config load_umt5_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  return Umt5Config::from_json(read_json_file(path, ExitCode::kModel), path);
}

}  // namespace

TextEncoder::TextEncoder(const std::string& model_dir, const TextEncoderOptions& options) {
  DiffusersDir d(model_dir);
  *this = TextEncoder(d.component_path("text_encoder"), d.component_path("tokenizer"), options);
}

TextEncoder::TextEncoder(const std::string& text_encoder_dir, const std::string& tokenizer_dir,
                         const TextEncoderOptions& options)
    : text_encoder_dir_(text_encoder_dir), tokenizer_dir_(tokenizer_dir), options_(options) {
  tokenizer_ = std::make_unique<T5Tokenizer>(tokenizer_dir);
  Umt5Options opt{options.device, options.dtype};
  if (options.device == Device::kCUDA) {
#ifndef VGEN_WITH_CUDA
    VGEN_THROW(ExitCode::kUsage,
               "text encoder: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu");
#endif
  } else {
    options_.dtype = opt.dtype = DType::kF32;  // the host encoder computes in fp32
  }
  encoder_ = options.weights ? std::make_unique<Umt5Encoder>(load_umt5_config(text_encoder_dir), *options.weights,
                                                             opt, options.stream, options.stream_component)
                             : std::make_unique<Umt5Encoder>(Umt5Encoder::load(text_encoder_dir, opt));
  cfg_ = encoder_->config();
  const int64_t rows = encoder_->embedding_rows();
  if (tokenizer_->vocab_size() > rows)
    log_warn_job("tokenizer {} has {} ids but the text encoder embeds {}; prompts hitting the extra ids will fail",
                 tokenizer_dir, tokenizer_->vocab_size(), rows);
}

TextEncoder::~TextEncoder() = default;
TextEncoder::TextEncoder(TextEncoder&&) noexcept = default;
TextEncoder& TextEncoder::operator=(TextEncoder&&) noexcept = default;

std::string TextEncoder::normalize(const std::string& prompt) const { return prompt_clean(prompt); }

PromptEmbeddings TextEncoder::encode_normalized(const std::vector<std::string>& prompts, int max_len) const {
  TextEncoding e = encode_cleaned(prompts, max_len, /*with_padded_rows=*/false);
  return {e.prompt_embeds, e.lengths};
}

std::string TextEncoder::identity() const {
  return wan_text_identity(text_encoder_dir_, tokenizer_dir_) + ";backend=" + backend();
}

namespace fs = std::filesystem;

std::string wan_text_identity(const std::string& text_encoder_dir, const std::string& tokenizer_dir) {
  std::error_code ec;
  fs::path te = fs::weakly_canonical(text_encoder_dir, ec);
  if (ec) te = text_encoder_dir;
  std::string id = "text_encoder=" + te.string() + ";";
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(te, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (auto& p : files) {
    auto mt = fs::last_write_time(p, ec).time_since_epoch().count();
    id += fmt::format("{}:{}:{};", p.filename().string(), fs::file_size(p, ec), int64_t(mt));
  }
  fs::path tok(tokenizer_dir);
  id += "spiece=" + file_content_hash((tok / "spiece.model").string()) + ";tokenizer_config=" + file_content_hash((tok / "tokenizer_config.json").string()) +
        ";special_tokens_map=" + file_content_hash((tok / "special_tokens_map.json").string());
  return id;
}


std::string TextEncoder::backend() const {
  const char* dt = options_.device == Device::kCPU ? "f32" : dtype_name(options_.dtype);
  return fmt::format("{}-{}", device_name(options_.device), dt);
}

TextEncoding TextEncoder::encode(const std::vector<std::string>& prompts, int max_len, bool with_padded_rows) const {
  std::vector<std::string> cleaned;
  cleaned.reserve(prompts.size());
  for (auto& p : prompts) cleaned.push_back(prompt_clean(p));
  return encode_cleaned(cleaned, max_len, with_padded_rows);
}

TextEncoding TextEncoder::encode_cleaned(const std::vector<std::string>& cleaned, int max_len,
                                         bool with_padded_rows) const {
  TextEncoding out;
  out.cleaned_prompts = cleaned;
  TokenizedBatch tok = tokenizer_->tokenize(cleaned, max_len);
  out.input_ids = tok.input_ids;            // [B, L]
  out.attention_mask = tok.attention_mask;  // [B, L]
  out.lengths = tok.lengths;
  const int64_t B = int64_t(cleaned.size()), L = max_len, D = hidden_size();

  std::vector<Umt5Sequence> seqs(static_cast<size_t>(B));
  const int64_t* ids = tok.input_ids.data<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    int64_t rows = with_padded_rows ? L : tok.lengths[size_t(b)];
    seqs[size_t(b)].ids.assign(ids + b * L, ids + b * L + rows);
    seqs[size_t(b)].num_valid = tok.lengths[size_t(b)];
  }
  Tensor hidden = Tensor::empty({0, D}, DType::kF32);  // [Σ rows, D] host f32
  if (B > 0) hidden = encoder_->forward(seqs);

  out.prompt_embeds = Tensor::zeros({B, L, D}, DType::kF32);  // [B, L, D]
  int64_t r0 = 0;
  for (int64_t b = 0; b < B; ++b) {
    int64_t n = tok.lengths[size_t(b)];
    std::memcpy(out.prompt_embeds.f32() + b * L * D, hidden.f32() + r0 * D, size_t(n * D) * sizeof(float));
    r0 += int64_t(seqs[size_t(b)].ids.size());
  }
  if (with_padded_rows) out.last_hidden_state = hidden.reshape({B, L, D});  // [B, L, D]
  return out;
}

size_t TextEncoder::estimate_bytes(const Json& text_encoder_config, DType dt, int max_len) {
  Umt5Config c = Umt5Config::from_json(text_encoder_config, "text_encoder/config.json");
  size_t weights = size_t(c.num_params()) * dtype_size(dt);
  // fp32 activations of one prompt: residual, norm, q/k/v, attention out, FFN gate/linear/product,
  // plus one relative bias table.
  size_t L = size_t(std::max(max_len, 1));
  size_t act = L * size_t(3 * c.d_model + 4 * c.inner_dim() + 3 * c.d_ff) * 4 +
               size_t(c.num_heads) * (2 * L) * 4;
  return weights + act;
}

}  // namespace vgen
