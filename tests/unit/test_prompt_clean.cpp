// prompt_clean vs Python's html.unescape(html.unescape(s)) → strip → re.sub(r"\s+", " ") → strip.
// Expected strings were produced by CPython 3.11 (the pipeline's own function on these inputs).
#include <gtest/gtest.h>

#include "model/text/html_entities.h"
#include "model/text/prompt_clean.h"

using namespace vgen;

TEST(PromptClean, DoubleUnescape) {
  EXPECT_EQ(prompt_clean("&amp;amp;"), "&");
  EXPECT_EQ(prompt_clean("&amp;lt;b&amp;gt;"), "<b>");
  EXPECT_EQ(prompt_clean("&#38;#65;"), "A");
  EXPECT_EQ(prompt_clean("&amp;nbsp;"), "");  // → U+00A0 → stripped
  // Single unescape keeps the second level.
  EXPECT_EQ(html_unescape(std::string("&amp;amp;")), "&amp;");
}

TEST(PromptClean, NamedEntities) {
  EXPECT_EQ(prompt_clean("a&nbsp;b"), "a b");
  EXPECT_EQ(prompt_clean("a &nbsp; b"), "a b");
  EXPECT_EQ(prompt_clean("&lt;&LT;&lt"), "<<<");
  EXPECT_EQ(prompt_clean("&AMP"), "&");
  EXPECT_EQ(prompt_clean("&amp"), "&");
  EXPECT_EQ(prompt_clean("&notin"), "\xc2\xacin");     // longest prefix "not" (accepted without ';')
  EXPECT_EQ(prompt_clean("&notit;"), "\xc2\xacit;");
  EXPECT_EQ(prompt_clean("&ampx;"), "&x;");
  EXPECT_EQ(prompt_clean("&copy2023"), "\xc2\xa9" "2023");
  EXPECT_EQ(prompt_clean("&acE;"), "\xe2\x88\xbe\xcc\xb3");        // two code points
  EXPECT_EQ(prompt_clean("&NotEqualTilde;"), "\xe2\x89\x82\xcc\xb8");
  EXPECT_EQ(prompt_clean("&unknown;"), "&unknown;");
  EXPECT_EQ(prompt_clean("&;"), "&;");
  std::string long_name = "a&" + std::string(40, 'b') + ";c";  // longer than 32: not a reference
  EXPECT_EQ(prompt_clean(long_name), long_name);
  EXPECT_EQ(html::kNumHtml5Entities, 2231u);
}

TEST(PromptClean, NumericReferences) {
  EXPECT_EQ(prompt_clean("&#65;&#x42;&#X43;"), "ABC");
  EXPECT_EQ(prompt_clean("&#128;&#x80;"), "\xe2\x82\xac\xe2\x82\xac");  // Windows-1252 fix-ups
  EXPECT_EQ(prompt_clean("&#0;x"), "\xef\xbf\xbdx");
  EXPECT_EQ(prompt_clean("&#xD800;"), "\xef\xbf\xbd");
  EXPECT_EQ(prompt_clean("&#1114112;"), "\xef\xbf\xbd");
  EXPECT_EQ(prompt_clean("&#99999999999999999999999;"), "\xef\xbf\xbd");
  EXPECT_EQ(prompt_clean("&#1;&#11;"), "");  // invalid code points vanish
  EXPECT_EQ(prompt_clean("&#65abc"), "Aabc");
  EXPECT_EQ(prompt_clean("&#x41g"), "Ag");
  EXPECT_EQ(prompt_clean("&#;"), "&#;");
  EXPECT_EQ(prompt_clean("&#x;"), "&#x;");
}

TEST(PromptClean, UnicodeWhitespace) {
  EXPECT_EQ(prompt_clean("\xe3\x80\x80\xe5\x85\xa8\xe8\xa7\x92\xe3\x80\x80\xe7\xa9\xba\xe6\xa0\xbc\xe3\x80\x80"),
            "\xe5\x85\xa8\xe8\xa7\x92 \xe7\xa9\xba\xe6\xa0\xbc");  // U+3000 ideographic space
  // U+2028, U+001C, U+0085, U+00A0 are all \s for a Python str regex.
  EXPECT_EQ(prompt_clean("x\xe2\x80\xa8y\x1cz\xc2\x85w\xc2\xa0v"), "x y z w v");
  EXPECT_EQ(prompt_clean("  \t\n spaced \r\n out \x0b\x0c "), "spaced out");
  // U+200B (zero width space) is not whitespace in Python.
  EXPECT_EQ(prompt_clean("\xe2\x80\x8bzero\xe2\x80\x8bwidth"), "\xe2\x80\x8bzero\xe2\x80\x8bwidth");
  EXPECT_TRUE(py_isspace(0x3000));
  EXPECT_TRUE(py_isspace(0x1f));
  EXPECT_FALSE(py_isspace(0x200b));
  EXPECT_FALSE(py_isspace(0x180e));
  EXPECT_EQ(html::kNumPyWhitespace, 29u);
}

TEST(PromptClean, CjkAndFixturePromptsUntouched) {
  const std::string neg =
      "\xe8\x89\xb2\xe8\xb0\x83\xe8\x89\xb3\xe4\xb8\xbd\xef\xbc\x8c\xe8\xbf\x87\xe6\x9b\x9d\xef\xbc\x8c\xe9\x9d\x99"
      "\xe6\x80\x81";  // 色调艳丽，过曝，静态
  EXPECT_EQ(prompt_clean(neg), neg);
  EXPECT_EQ(prompt_clean("dance monkey"), "dance monkey");
  EXPECT_EQ(prompt_clean("  \xc3\x9cn\xc3\xaf" "code &amp; spaces\t here  "), "\xc3\x9cn\xc3\xaf" "code & spaces here");
  EXPECT_EQ(prompt_clean(""), "");
}

TEST(PromptClean, Utf8RoundTripAndReplacement) {
  std::string s = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80z";
  EXPECT_EQ(utf8_encode(utf8_decode(s)), s);
  EXPECT_EQ(utf8_decode(s).size(), 5u);
  // Ill-formed input: one U+FFFD per maximal ill-formed subpart, as Python's errors="replace".
  EXPECT_EQ(utf8_decode("\xff"), std::u32string(U"\xfffd"));
  EXPECT_EQ(utf8_decode("\xe0\x80\x80"), std::u32string(U"\xfffd\xfffd\xfffd"));
  EXPECT_EQ(utf8_decode("\xe4\xb8" "a"), std::u32string(U"\xfffd" "a"));
  EXPECT_EQ(utf8_decode("\xed\xa0\x80"), std::u32string(U"\xfffd\xfffd\xfffd"));  // surrogate
}
