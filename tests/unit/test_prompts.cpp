// Prompt files: plain text and JSONL (with an invalid line that must not fail the file), slugs, names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/utf8.h"
#include "io/prompts.h"

using namespace vgen;
namespace fs = std::filesystem;

TEST(Prompts, PlainText) {
  auto items = parse_prompts("# header comment\n\nA cat walks on the grass.\n   \n  # indented comment\n"
                             "  Two dogs   play!  \r\nLast line without newline",
                             "p.txt");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].index, 0);
  EXPECT_EQ(items[0].line, 3);
  EXPECT_EQ(items[0].prompt, "A cat walks on the grass.");
  EXPECT_EQ(items[0].name, "a-cat-walks-on-the-grass");
  EXPECT_EQ(items[0].stem(), "0000-a-cat-walks-on-the-grass");
  EXPECT_EQ(items[1].prompt, "Two dogs   play!");
  EXPECT_EQ(items[1].stem(), "0001-two-dogs-play");
  EXPECT_EQ(items[2].index, 2);
  EXPECT_EQ(items[2].line, 7);
  for (auto& it : items) {
    EXPECT_TRUE(it.ok());
    EXPECT_FALSE(it.seed.has_value());
    EXPECT_FALSE(it.negative_prompt.has_value());
  }
}

TEST(Prompts, JsonlWithInvalidLine) {
  std::string text =
      "{\"prompt\": \"A red kite\", \"seed\": 7, \"negative_prompt\": \"blurry\", \"num_frames\": 33}\n"
      "\n"
      "{\"prompt\": \"broken\", \n"                       // malformed JSON
      "{\"prompt\": \"Sea\", \"name\": \"My Sea/Clip\"}\n"
      "{\"prompt\": 5}\n"                                 // wrong type
      "{\"prompt\": \"x\", \"sed\": 1}\n"                 // unknown key
      "{\"prompt\": \"frames\", \"num_frames\": 30}\n"    // rounded to 29
      "[1, 2]\n"                                          // not an object
      "{\"prompt\": \"y\", \"seed\": 1.5}\n";             // non-integer seed
  auto items = parse_prompts(text, "p.jsonl");
  ASSERT_EQ(items.size(), 8u);
  EXPECT_TRUE(items[0].ok());
  EXPECT_EQ(items[0].prompt, "A red kite");
  EXPECT_EQ(*items[0].seed, 7);
  EXPECT_EQ(*items[0].negative_prompt, "blurry");
  EXPECT_EQ(*items[0].num_frames, 33);
  EXPECT_EQ(items[0].stem(), "0000-a-red-kite");

  EXPECT_FALSE(items[1].ok());
  EXPECT_EQ(items[1].index, 1);
  EXPECT_NE(items[1].error.find("p.jsonl:3"), std::string::npos) << items[1].error;
  EXPECT_NE(items[1].error.find("malformed JSON"), std::string::npos) << items[1].error;

  EXPECT_TRUE(items[2].ok());
  EXPECT_EQ(items[2].index, 2);
  EXPECT_EQ(items[2].stem(), "0002-my-sea-clip");  // `name` overrides the slug (and is sanitised)

  EXPECT_FALSE(items[3].ok());
  EXPECT_NE(items[3].error.find("'prompt' must be a non-empty string"), std::string::npos);
  EXPECT_FALSE(items[4].ok());
  EXPECT_NE(items[4].error.find("unknown key 'sed'"), std::string::npos);
  EXPECT_TRUE(items[5].ok());
  EXPECT_EQ(*items[5].num_frames, 29);
  EXPECT_FALSE(items[6].ok());
  EXPECT_NE(items[6].error.find("JSON object"), std::string::npos);
  EXPECT_FALSE(items[7].ok());
  EXPECT_NE(items[7].error.find("'seed' must be an integer"), std::string::npos);
}

// A plain-text line that is not UTF-8 fails only its own prompt (named by file and line), keeps a
// printable text for the reports, and the next prompts stay usable.
TEST(Prompts, InvalidUtf8LineIsMarkedFailed) {
  auto items = parse_prompts("A caf\xE9 scene.\nA dog.\nNa\xC3\xAFve caf\xC3\xA9.\n", "p.txt");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_FALSE(items[0].ok());
  EXPECT_NE(items[0].error.find("p.txt:1"), std::string::npos) << items[0].error;
  EXPECT_NE(items[0].error.find("UTF-8"), std::string::npos) << items[0].error;
  EXPECT_EQ(items[0].prompt, "A caf\xEF\xBF\xBD scene.");
  EXPECT_TRUE(items[1].ok());
  EXPECT_EQ(items[1].prompt, "A dog.");
  EXPECT_TRUE(items[2].ok()) << items[2].error;  // well-formed two-byte sequences
  EXPECT_EQ(items[2].index, 2);
}

// A line with a NUL byte, or longer than kMaxPromptLineBytes, fails only its own prompt (named by
// file and line; the report keeps a short, printable start); the other lines render.
TEST(Prompts, NulAndOverlongLinesAreMarkedFailed) {
  const std::string at_limit(kMaxPromptLineBytes, 'a'), over(kMaxPromptLineBytes + 1, 'b');
  const std::string text = std::string("A dog.\nbad \0 line\n", 18) + at_limit + "\n" + over + "\nA cat.\n";
  auto items = parse_prompts(text, "p.txt");
  ASSERT_EQ(items.size(), 5u);
  EXPECT_TRUE(items[0].ok());
  EXPECT_FALSE(items[1].ok());
  EXPECT_NE(items[1].error.find("p.txt:2: the line holds a NUL byte (byte 5 of the line)"), std::string::npos)
      << items[1].error;
  EXPECT_EQ(items[1].prompt.find('\0'), std::string::npos);
  EXPECT_TRUE(items[2].ok()) << items[2].error;  // exactly at the limit
  EXPECT_FALSE(items[3].ok());
  EXPECT_NE(items[3].error.find("p.txt:4: the line is 65537 bytes, longer than the 65536 bytes (64 KiB)"),
            std::string::npos)
      << items[3].error;
  EXPECT_LT(items[3].prompt.size(), 300u);
  EXPECT_TRUE(items[4].ok());
  EXPECT_EQ(items[4].index, 4);
  // JSONL: a raw NUL or an escaped one in a prompt; a negative seed.
  auto j = parse_prompts(std::string("{\"prompt\": \"a\0\"}\n", 17) +
                             "{\"prompt\": \"a\\u0000b\"}\n{\"prompt\": \"c\", \"negative_prompt\": \"\\u0000\"}\n"
                             "{\"prompt\": \"d\", \"seed\": -1}\n{\"prompt\": \"e\", \"seed\": 0}\n",
                         "p.jsonl");
  ASSERT_EQ(j.size(), 5u);
  EXPECT_NE(j[0].error.find("p.jsonl:1: the line holds a NUL byte"), std::string::npos) << j[0].error;
  EXPECT_NE(j[1].error.find("p.jsonl:2: 'prompt' holds a NUL byte"), std::string::npos) << j[1].error;
  EXPECT_NE(j[2].error.find("p.jsonl:3: 'negative_prompt' must be a string without NUL bytes"), std::string::npos)
      << j[2].error;
  EXPECT_NE(j[3].error.find("p.jsonl:4: 'seed' must be an integer >= 0, got -1"), std::string::npos) << j[3].error;
  EXPECT_TRUE(j[4].ok()) << j[4].error;
}

TEST(Prompts, Utf8Validation) {
  EXPECT_EQ(first_invalid_utf8(""), std::string::npos);
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::string::npos);
  EXPECT_EQ(first_invalid_utf8("\xE4\xB8\xAD\xF0\x9F\x98\x80"), std::string::npos);  // U+4E2D, U+1F600
  EXPECT_EQ(first_invalid_utf8("ab\x80"), 2u);                  // stray continuation byte
  EXPECT_EQ(first_invalid_utf8("a\xC3"), 1u);                   // truncated
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0u);               // overlong '/'
  EXPECT_EQ(first_invalid_utf8("\xE0\x80\xAF"), 0u);          // overlong
  EXPECT_EQ(first_invalid_utf8("x\xED\xA0\x80"), 1u);         // surrogate U+D800
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);     // past U+10FFFF
  EXPECT_EQ(replace_invalid_utf8("a\xFF\xFE" "b"), "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
  EXPECT_EQ(replace_invalid_utf8("\xE4\xB8\xAD"), "\xE4\xB8\xAD");
}

TEST(Prompts, JsonlDetectedByFirstLine) {
  auto items = parse_prompts("# comment\n{\"prompt\": \"hello world\"}\nplain line\n", "prompts.txt");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_TRUE(items[0].ok());
  EXPECT_EQ(items[0].prompt, "hello world");
  EXPECT_FALSE(items[1].ok());  // a JSONL file: a plain line is an invalid item, not a prompt
}

TEST(Prompts, Slugs) {
  EXPECT_EQ(slugify("A cat walks!"), "a-cat-walks");
  EXPECT_EQ(slugify("  --Hello,   World--  "), "hello-world");
  EXPECT_EQ(slugify("日本語の猫"), "prompt");
  EXPECT_EQ(slugify("Café au lait"), "caf-au-lait");
  std::string long_prompt(200, 'a');
  EXPECT_EQ(slugify(long_prompt).size(), 48u);
  std::string s = slugify("word word word word word word word word word word word word");
  EXPECT_LE(s.size(), 48u);
  EXPECT_NE(s.back(), '-');
  EXPECT_EQ(output_stem(3, "a-cat-walks"), "0003-a-cat-walks");
  EXPECT_EQ(output_stem(12345, "x"), "12345-x");
}

// `image` and `last_image` (docs/batch.md "Image inputs"): paths relative to the prompt file's
// directory become absolute, absolute ones stay; a last frame alone, a wrong type or an empty path
// fails its line alone, as the other keys do; a plain-text line has no image.
TEST(Prompts, ImageFieldsResolveAgainstThePromptFile) {
  const std::string text =
      "{\"prompt\": \"a\", \"image\": \"in/first.png\", \"last_image\": \"../last.jpg\"}\n"
      "{\"prompt\": \"b\", \"image\": \"/abs/x.png\"}\n"
      "{\"prompt\": \"c\", \"last_image\": \"l.png\"}\n"
      "{\"prompt\": \"d\", \"image\": 5}\n"
      "{\"prompt\": \"e\", \"image\": \"\"}\n"
      "{\"prompt\": \"f\", \"image\": null, \"last_image\": null}\n"
      "{\"prompt\": \"g\", \"imag\": \"x.png\"}\n"
      "{\"prompt\": \"h\"}\n";
  auto items = parse_prompts(text, "/data/set/p.jsonl");
  ASSERT_EQ(items.size(), 8u);
  ASSERT_TRUE(items[0].ok()) << items[0].error;
  ASSERT_TRUE(items[0].image && items[0].last_image);
  EXPECT_EQ(items[0].image->path, "/data/set/in/first.png");
  EXPECT_EQ(items[0].last_image->path, "/data/last.jpg");
  EXPECT_TRUE(items[0].image->content_hash.empty());  // the preflight hashes the file
  ASSERT_TRUE(items[1].ok()) << items[1].error;
  EXPECT_EQ(items[1].image->path, "/abs/x.png");
  EXPECT_FALSE(items[1].last_image);
  EXPECT_FALSE(items[2].ok());
  EXPECT_NE(items[2].error.find("/data/set/p.jsonl:3: 'last_image' (/data/set/l.png) needs 'image' (the first frame)"),
            std::string::npos)
      << items[2].error;
  EXPECT_NE(items[3].error.find("p.jsonl:4: 'image' must be a non-empty string"), std::string::npos) << items[3].error;
  EXPECT_NE(items[3].error.find("got 5"), std::string::npos) << items[3].error;
  EXPECT_NE(items[4].error.find("p.jsonl:5: 'image' must be a non-empty string"), std::string::npos) << items[4].error;
  EXPECT_TRUE(items[5].ok()) << items[5].error;  // null: no image, as for the other keys
  EXPECT_FALSE(items[5].image || items[5].last_image);
  EXPECT_NE(items[6].error.find("unknown key 'imag' (known: prompt, negative_prompt, seed, num_frames, name, image, "
                                "last_image)"),
            std::string::npos)
      << items[6].error;
  EXPECT_TRUE(items[7].ok() && !items[7].image);

  // A relative prompt file: against the current directory. A plain-text line has no image.
  auto rel = parse_prompts("{\"prompt\": \"a\", \"image\": \"i.png\"}\n", "sub/p.jsonl");
  ASSERT_TRUE(rel[0].ok()) << rel[0].error;
  EXPECT_EQ(rel[0].image->path, (fs::current_path() / "sub" / "i.png").lexically_normal().string());
  auto plain = parse_prompts("a cat with image: x.png\n", "/data/p.txt");
  EXPECT_TRUE(plain[0].ok() && !plain[0].image && !plain[0].last_image);
}

TEST(Prompts, Files) {
  fs::path dir = fs::temp_directory_path() / ("vgen_prompts_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string txt = (dir / "p.txt").string();
  std::ofstream(txt) << "\xEF\xBB\xBF" << "first\nsecond\n";
  auto items = load_prompts(txt);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].prompt, "first");  // BOM stripped
  std::string jsonl = (dir / "p.jsonl").string();
  std::ofstream(jsonl) << "{\"prompt\": \"ok\"}\nnot json\n";
  items = load_prompts(jsonl);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_TRUE(items[0].ok());
  EXPECT_FALSE(items[1].ok());
  for (const std::string& bad : {(dir / "missing.txt").string(), dir.string()}) {
    try {
      load_prompts(bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kInput);
      EXPECT_NE(e.message().find(bad), std::string::npos) << e.message();
    }
  }
  std::string empty = (dir / "empty.txt").string();
  std::ofstream(empty) << "# only a comment\n\n";
  EXPECT_THROW(load_prompts(empty), Error);
  fs::remove_all(dir);
}
