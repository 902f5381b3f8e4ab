// Inputs the parser fuzzers (tests/fuzz) found mishandled, now refused with the documented exit
// code and a message naming the key: config values that do not fit their type (silently wrapped or
// undefined before), sizes whose products overflow, a mesh past int, tokenizer configs that asked
// for a billion sentinels, safetensors headers of the wrong JSON types or with an overflowing shape.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/json.h"
#include "io/diffusers_dir.h"
#include "io/recipe.h"
#include "io/safetensors.h"
#include "model/text/tokenizer.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/text/umt5_config.h"
#include "model/wan/vae/vae_config.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

const std::string kTiny = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny";

// Expects f() to throw a vgen::Error with `code` and `fragment` in its message.
void expect_error(const std::function<void()>& f, ExitCode code, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error (expected '" << fragment << "')";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(code)) << e.message();
    EXPECT_NE(e.message().find(fragment), std::string::npos) << "'" << fragment << "' not in: " << e.message();
  }
}

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("vgen_test_limits_" + name + "_" + std::to_string(::getpid()));
}

// A safetensors file with this JSON header and `data_bytes` zero bytes of data.
std::string safetensors_with(const std::string& name, const std::string& header, size_t data_bytes) {
  std::string path = temp_path(name).string();
  std::string buf(8, '\0');
  uint64_t n = header.size();
  std::memcpy(buf.data(), &n, 8);
  buf += header + std::string(data_bytes, '\0');
  std::ofstream(path, std::ios::binary) << buf;
  return path;
}

}  // namespace

TEST(ParserLimits, JsonValuesMustFitTheirType) {
  int i = 0;
  int64_t l = 0;
  float f = 0;
  double d = 0;
  std::vector<int> v;
  EXPECT_TRUE(json_as(Json(40), &i) && i == 40);
  EXPECT_TRUE(json_as(Json(40.0), &i) && i == 40);  // an integral float
  EXPECT_FALSE(json_as(Json(40.5), &i));
  EXPECT_FALSE(json_as(Json(int64_t(1) << 32 | 40), &i));  // was 40 after the cast
  EXPECT_FALSE(json_as(Json(1.38e98), &i));                // undefined behaviour before
  EXPECT_FALSE(json_as(Json(2147483648.0), &i));
  EXPECT_TRUE(json_as(Json(-2147483648.0), &i) && i == std::numeric_limits<int>::min());
  EXPECT_FALSE(json_as(Json(uint64_t(1) << 63), &l));
  EXPECT_FALSE(json_as(Json(9223372036854775808.0), &l));
  EXPECT_TRUE(json_as(Json(-9223372036854775807LL - 1), &l) && l == std::numeric_limits<int64_t>::min());
  uint32_t u = 0;
  EXPECT_FALSE(json_as(Json(-1), &u));
  EXPECT_TRUE(json_as(Json(4294967295.0), &u) && u == 4294967295u);
  EXPECT_FALSE(json_as(Json(true), &i));
  EXPECT_FALSE(json_as(Json("40"), &i));
  EXPECT_FALSE(json_as(Json(1e39), &f));
  EXPECT_TRUE(json_as(Json(1e39), &d) && d == 1e39);
  EXPECT_FALSE(json_as(Json(std::numeric_limits<double>::infinity()), &d));
  EXPECT_TRUE(json_as(Json::parse("[1, 2.0, 3]"), &v) && v == std::vector<int>({1, 2, 3}));
  EXPECT_FALSE(json_as(Json::parse("[1, 2.5]"), &v));
  EXPECT_FALSE(json_as(Json::parse("{\"a\": 1}"), &v));
  EXPECT_EQ(json_get_or(Json::parse("{\"k\": null}"), "k", 7), 7);
  EXPECT_EQ(json_get_or(Json::parse("[1]"), "k", 7), 7);
  expect_error([] { json_get_or(Json::parse("{\"k\": 4294967336}"), "k", 7, "c.json"); }, ExitCode::kModel,
               "c.json: config key 'k' has the wrong type or is out of range: 4294967336");
}

TEST(ParserLimits, ModelConfigs) {
  expect_error([] { WanTransformerConfig::from_json(Json::parse(R"({"num_attention_heads": 4294967336})"), "t.json"); },
               ExitCode::kModel, "'num_attention_heads' has the wrong type or is out of range");
  expect_error([] { WanTransformerConfig::from_json(Json::parse(R"({"ffn_dim": 1.38e98})"), "t.json"); },
               ExitCode::kModel, "'ffn_dim'");
  EXPECT_EQ(WanTransformerConfig::from_json(Json::parse(R"({"num_layers": 2.0})"), "t.json").num_layers, 2);

  Json vae = read_json_file(kTiny + "/vae/config.json", ExitCode::kModel);
  Json v = vae;
  v["dim_mult"] = std::vector<int>(40, 1);
  v["temperal_downsample"] = std::vector<bool>(39, false);
  expect_error([&] { parse_wan_vae_config(v, "vae.json"); }, ExitCode::kModel, "'dim_mult' has 40 entries");
  v = vae;
  v["base_dim"] = 2147483647;
  expect_error([&] { parse_wan_vae_config(v, "vae.json"); }, ExitCode::kModel, "VAE sizes out of range");
  v = vae;
  v["dim_mult"] = {65536, 2, 2, 2};
  expect_error([&] { parse_wan_vae_config(v, "vae.json"); }, ExitCode::kModel, "makes a VAE width above");
  v = vae;
  v["latents_mean"] = std::vector<double>(16, 1e39);
  expect_error([&] { parse_wan_vae_config(v, "vae.json"); }, ExitCode::kModel, "'latents_mean'");
  v = vae;
  v["latents_std"] = std::vector<double>(16, 1.0);
  v["latents_std"][3] = 0.0;
  expect_error([&] { parse_wan_vae_config(v, "vae.json"); }, ExitCode::kModel, "'latents_std' has a zero entry");
  v = vae;
  v["latents_std"] = std::vector<double>(48, 1.0);
  expect_error([&] { parse_wan_vae_config(v, "vae.json"); }, ExitCode::kModel, "'latents_std' has 48 entries");
  EXPECT_EQ(parse_wan_vae_config(vae, "vae.json").decoder_dims().size(), 5u);

  expect_error([] { Umt5Config::from_json(Json::parse("[]"), "te.json"); }, ExitCode::kModel, "must be a JSON object");
  expect_error([] { Umt5Config::from_json(Json::parse(R"({"d_model": 1099511627776})"), "te.json"); },
               ExitCode::kModel, "text encoder sizes out of range");
  expect_error([] { Umt5Config::from_json(Json::parse(R"({"num_heads": 1048576, "d_kv": 1048576})"), "te.json"); },
               ExitCode::kModel, "out of range");
  expect_error([] { Umt5Config::from_json(Json::parse(R"({"relative_attention_num_buckets": 1e98})"), "te.json"); },
               ExitCode::kModel, "'relative_attention_num_buckets'");
  Umt5Config xxl = Umt5Config::from_json(Json::parse(R"({"d_model": 4096, "d_kv": 64, "num_heads": 64, "d_ff": 10240,
      "num_layers": 24, "vocab_size": 256384})"), "te.json");
  EXPECT_EQ(xxl.num_params(), 5680910336);
}

TEST(ParserLimits, RecipeMeshFitsInt) {
  expect_error([] { parse_recipe("parallel_config: {dp_size: 2000000000, ulysses_size: 2000000000}\n", "r.yaml", {}); },
               ExitCode::kRecipe, "r.yaml:1: parallel_config: the mesh (dp 2000000000 x cfg 1 x cp 1 x ulysses 2000000000)");
  expect_error([] { parse_recipe("parallel_config: {attn2d_size: [65536, 65536]}\n", "r.yaml", {}); },
               ExitCode::kRecipe, "needs more than 16777216 ranks");
  expect_error([] { parse_recipe("", "r.yaml", {"parallel_config.ring_size=2000000000", "parallel_config.cfg_size=2",
                                                "parallel_config.ulysses_size=3"}); },
               ExitCode::kRecipe, "(dp 1 x cfg 2 x cp 2000000000 x ulysses 3) needs more than");
  Recipe r = parse_recipe("parallel_config: {dp_size: 4096, cfg_size: 2, ulysses_size: 64, attn2d_size: [8, 4]}\n",
                          "r.yaml", {});
  EXPECT_EQ(r.parallel.world_size(), 4096 * 2 * 64 * 32);
}

TEST(ParserLimits, TokenizerConfig) {
  auto dir_with = [](const std::string& name, const std::string& config) {
    fs::path d = temp_path("tok_" + name);
    fs::create_directories(d);
    fs::copy_file(kTiny + "/tokenizer/spiece.model", d / "spiece.model", fs::copy_options::overwrite_existing);
    std::ofstream(d / "tokenizer_config.json") << config;
    return d;
  };
  for (auto& [name, config, fragment] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"many_ids", R"({"extra_ids": 1000000000})", "1000000000 sentinel tokens (extra_ids) is outside [0, 65536]"},
           {"wrapping_ids", R"({"extra_ids": 4294967297})", "extra_ids 4294967297 is out of range"},
           {"listed_ids", R"({"additional_special_tokens": ["<extra_id_999999999>"]})", "sentinel tokens"},
           {"huge_id", R"({"added_tokens_decoder": {"9223372036854775807": "<x>"}})", "bad added_tokens_decoder"},
           {"id_suffix", R"({"added_tokens_decoder": {"12abc": "<x>"}})", "bad added_tokens_decoder entry '12abc'"}}) {
    SCOPED_TRACE(name);
    fs::path d = dir_with(name, config);
    expect_error([&] { T5Tokenizer t(d.string()); }, ExitCode::kModel, fragment);
    fs::remove_all(d);
  }
  fs::path d = dir_with("hundred", R"({"extra_ids": 100})");
  EXPECT_EQ(T5Tokenizer(d.string()).extra_ids(), 100);
  fs::remove_all(d);
}

TEST(ParserLimits, SafetensorsHeaderTypes) {
  for (auto& [name, header, data, fragment] : std::vector<std::tuple<std::string, std::string, size_t, std::string>>{
           {"dtype_number", R"({"a": {"dtype": 5, "shape": [1], "data_offsets": [0, 4]}})", 4, "lacks dtype (a string)"},
           {"shape_object", R"({"a": {"dtype": "F32", "shape": {"x": 1}, "data_offsets": [0, 4]}})", 4, "shape (a list)"},
           {"shape_number", R"({"a": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})", 4, "shape (a list)"},
           {"offset_string", R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": ["0", 4]}})", 4, "bad data_offsets"},
           {"offset_negative", R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 4, "bad data_offsets"},
           {"offset_float", R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0.5, 4]}})", 4, "bad data_offsets"},
           {"shape_overflow", R"({"a": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 0]}})",
            4, "shape [4611686018427387904,4] is too large"},
           {"shape_overflow2", R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})",
            4, "is too large"}}) {
    SCOPED_TRACE(name);
    std::string path = safetensors_with(name, header, data);
    expect_error([&] { SafeTensorsFile f(path); }, ExitCode::kModel, fragment);
    fs::remove(path);
  }
  fs::path dir = temp_path("index");
  fs::create_directories(dir);
  save_safetensors((dir / "m.safetensors").string(), {{"a", Tensor::zeros({2}, DType::kF32)}});
  std::ofstream(dir / "m.safetensors.index.json") << R"({"weight_map": {"a": 5}})";
  expect_error([&] { WeightStore::open(dir.string()); }, ExitCode::kModel, "weight_map entry 'a' is not a file name");
  fs::remove_all(dir);
}
