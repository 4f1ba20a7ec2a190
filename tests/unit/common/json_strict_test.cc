// The strict JSON pre-pass: what two JSON readers could read differently is
// refused with the key, line and byte; everything a clustercert writer makes
// passes, in one linear pass.
#include "common/json_strict.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert {
namespace {

using ::testing::HasSubstr;

std::string Error(const std::string& json) {
  const absl::Status status = CheckStrictJson(json, "c.json");
  EXPECT_FALSE(status.ok()) << json;
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(JsonStrictTest, OrdinaryJsonPasses) {
  for (const char* json :
       {"{}", "[]", "0", "\"x\"", " {\"a\": [1, -2.5e+3, true, false, null, {\"a\": 1}]} \n",
        "{\"a\":{\"b\":1},\"b\":{\"b\":2}}", "[{\"a\":1},{\"a\":1}]",
        "{\"s\":\"caf\xC3\xA9 \\u00e9 \\ud83d\\ude00 \\\" \\\\ \\/ \\n\"}",
        "{\"v\":\"NaN\",\"w\":\"-Infinity\"}"}) {
    EXPECT_TRUE(CheckStrictJson(json, "c.json").ok()) << json;
  }
}

TEST(JsonStrictTest, ADuplicateKeyIsNamedWithBothPlaces) {
  const std::string message = Error("{\"verdict\":\"not-certified\",\n \"verdict\":\"certified\"}");
  EXPECT_THAT(message, HasSubstr("c.json has the key 'verdict' twice in one object"));
  EXPECT_THAT(message, HasSubstr("at line 2, byte 29, and first at line 1, byte 1"));
}

TEST(JsonStrictTest, NestedAliasedAndEscapedDuplicatesAreRefused) {
  EXPECT_THAT(Error("{\"pairs\":[{\"a\":1},{\"b\":{\"x\":1,\"x\":2}}]}"), HasSubstr("'x' twice"));
  EXPECT_THAT(Error("{\"avg_gbps\":1,\"avgGbps\":900}"),
              HasSubstr("the key 'avgGbps' twice in one object (at line 1, byte 14, and first at "
                        "line 1, byte 1 as 'avg_gbps')"));
  EXPECT_THAT(Error("{\"verdict\":1,\"verd\\u0069ct\":2}"), HasSubstr("'verdict' twice"));
}

TEST(JsonStrictTest, InvalidUtf8AndLoneSurrogatesAreRefused) {
  EXPECT_THAT(Error("{\"a\":\"\xFF\"}"), HasSubstr("invalid UTF-8"));
  EXPECT_THAT(Error("{\"a\":\"\xC0\xAF\"}"), HasSubstr("invalid UTF-8"));      // overlong '/'
  EXPECT_THAT(Error("{\"a\":\"\xED\xA0\x80\"}"), HasSubstr("invalid UTF-8"));  // a surrogate
  EXPECT_THAT(Error("{\"a\":\"\xE2\x82\"}"), HasSubstr("invalid UTF-8"));      // cut short
  EXPECT_THAT(Error("{\"a\":\"\\ud800\"}"), HasSubstr("lone high surrogate"));
  EXPECT_THAT(Error("{\"a\":\"\\udc00x\"}"), HasSubstr("lone low surrogate"));
}

TEST(JsonStrictTest, MalformedTextAndTrailingTextAreRefused) {
  EXPECT_THAT(Error("{\"a\":1} {}"), HasSubstr("text after the JSON value"));
  EXPECT_THAT(Error("{\"a\":1,}"), HasSubstr("expected a key"));
  EXPECT_THAT(Error("{\"a\" 1}"), HasSubstr("expected ':'"));
  EXPECT_THAT(Error("[1 2]"), HasSubstr("expected ',' or ']'"));
  EXPECT_THAT(Error("{\"a\":NaN}"), HasSubstr("expected a value"));
  EXPECT_THAT(Error("{\"a\":\"x\ny\"}"), HasSubstr("a control character"));
  EXPECT_THAT(Error(""), HasSubstr("ends where a value was expected"));
}

TEST(JsonStrictTest, NestingIsBoundedAndTheCostLinear) {
  EXPECT_TRUE(CheckStrictJson(std::string(100, '[') + std::string(100, ']'), "c.json").ok());
  EXPECT_THAT(Error(std::string(101, '[') + std::string(101, ']')),
              HasSubstr("nesting deeper than 100 levels"));
  // 100,000 deep is refused at the bound, without recursing further.
  EXPECT_THAT(Error(std::string(100000, '[')), HasSubstr("nesting deeper than 100"));

  // Many distinct keys in one object are all told apart (hash sets keep it
  // linear; bench-style timing does not belong in a unit test), and the
  // last one repeated is still found.
  std::string wide = "{";
  for (int i = 0; i < 20000; ++i) wide += "\"k" + std::to_string(i) + "\":" + "1,";
  EXPECT_TRUE(CheckStrictJson(wide.substr(0, wide.size() - 1) + "}", "c.json").ok());
  EXPECT_THAT(Error(wide + "\"k19999\":2}"), HasSubstr("k19999"));
}

}  // namespace
}  // namespace clustercert
