// The Cosmos 3 prompt side behind the seam (model/cosmos3/prompt_encoder.h): the
// rendered conversation (the text cache's key) and the ids of the pipeline case, as diffusers'
// tokenize_prompt makes them, carried as one-column rows.
#include <gtest/gtest.h>

#include "core/error.h"
#include "io/safetensors.h"
#include "model/cosmos3/prompt_encoder.h"

using namespace vgen;

namespace {

const std::string kRoot = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3";
const std::string kTiny = kRoot + "/cosmos3-tiny";

std::vector<int64_t> case_ids(const std::string& name) {
  const WeightStore ws = WeightStore::open(kRoot + "/cases/pipeline_t2v.safetensors");
  const Tensor t = ws.get(name);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

// normalize_for renders the case's conversation for its video and role; encode_normalized gives its
// ids (then eos and <|vision_start|>), carried as id + 1 with zero rows after them.
TEST(Cosmos3PromptEncoder, RendersAndTokenizesAsThePipeline) {
  const Json p = read_json_file(kRoot + "/cases/pipeline_t2v.json", ExitCode::kInput);
  const Cosmos3PromptEncoder enc(kTiny, kTiny + "/text_tokenizer");
  PromptContext ctx{p["num_frames"].get<int>(), p["height"].get<int>(), p["width"].get<int>(),
                    p["fps"].get<double>(), false};
  const std::string cond = enc.normalize_for(p["prompt"].get<std::string>(), ctx);
  ctx.negative = true;
  const std::string uncond = enc.normalize_for(p["negative_prompt"].get<std::string>(), ctx);
  EXPECT_EQ(cond + "<|im_end|><|vision_start|>", p["prompt_text_cond"].get<std::string>());
  EXPECT_EQ(uncond + "<|im_end|><|vision_start|>", p["prompt_text_uncond"].get<std::string>());
  const int L = 128;
  const PromptEmbeddings e = enc.encode_normalized({cond, uncond}, L);
  ASSERT_EQ(e.embeds.shape(), Shape({2, L, 1}));
  const std::vector<int64_t> ref_cond = case_ids("input_ids_cond"), ref_uncond = case_ids("input_ids_uncond");
  EXPECT_EQ(e.lengths, (std::vector<int64_t>{int64_t(ref_cond.size()), int64_t(ref_uncond.size())}));
  EXPECT_EQ(cosmos3_rows_to_ids(e.embeds[0]), ref_cond);
  EXPECT_EQ(cosmos3_rows_to_ids(e.embeds[1]), ref_uncond);
  try {
    enc.encode_normalized({cond}, 8);
    ADD_FAILURE() << "a prompt longer than max_len was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInput);
    EXPECT_NE(e.message().find("max_sequence_length 8"), std::string::npos) << e.message();
  }
}

}  // namespace
