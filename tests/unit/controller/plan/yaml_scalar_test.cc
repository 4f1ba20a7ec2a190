#include "controller/plan/yaml_scalar.h"

#include <map>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace clustercert::controller::plan {
namespace {

TEST(YamlScalarTest, Integers) {
  EXPECT_EQ(ParseIntText("42"), 42);
  EXPECT_EQ(ParseIntText("-3"), -3);
  EXPECT_EQ(ParseIntText("+7"), 7);
  EXPECT_EQ(ParseIntText("4.0"), std::nullopt);
  EXPECT_EQ(ParseIntText("0x10"), std::nullopt);
  EXPECT_EQ(ParseIntText(""), std::nullopt);
  EXPECT_EQ(ParseIntText("99999999999999999999"), std::nullopt);
}

TEST(YamlScalarTest, Numbers) {
  EXPECT_EQ(ParseNumberText("0.8"), 0.8);
  EXPECT_EQ(ParseNumberText("200"), 200);
  EXPECT_EQ(ParseNumberText("-1e3"), -1000);
  EXPECT_EQ(ParseNumberText(".5"), 0.5);
  EXPECT_EQ(ParseNumberText(".inf"), std::nullopt);
  EXPECT_EQ(ParseNumberText("inf"), std::nullopt);
  EXPECT_EQ(ParseNumberText("nan"), std::nullopt);
  EXPECT_EQ(ParseNumberText("1e999"), std::nullopt);
  EXPECT_EQ(ParseNumberText("1.2.3"), std::nullopt);
  EXPECT_EQ(ParseNumberText("200G"), std::nullopt);
}

TEST(YamlScalarTest, Booleans) {
  EXPECT_EQ(ParseBoolText("true"), true);
  EXPECT_EQ(ParseBoolText("False"), false);
  EXPECT_EQ(ParseBoolText("yes"), std::nullopt);
  EXPECT_EQ(ParseBoolText("1"), std::nullopt);
}

TEST(YamlScalarTest, DescribesValuesTheWayTheFileShowsThem) {
  YamlError error;
  const std::unique_ptr<YamlDocument> document = YamlDocument::Parse(
      "{a: -200, b: fast, c: \"200\", d: {x: 1}, e: [1], f: [], g: , h: true, i: 'say \"hi\"'}",
      YamlLimits(), &error);
  ASSERT_NE(document, nullptr) << error.message;
  ASSERT_EQ(document->documents().size(), 1u);
  std::map<std::string, YamlNode> node;
  for (const auto& entry : document->documents()[0]) node[entry.first.Scalar()] = entry.second;
  EXPECT_EQ(DescribeValue(node["a"]), "-200");
  EXPECT_EQ(DescribeValue(node["b"]), "\"fast\"");
  EXPECT_EQ(DescribeValue(node["c"]), "\"200\"");
  EXPECT_EQ(DescribeValue(node["d"]), "a map");
  EXPECT_EQ(DescribeValue(node["e"]), "a list");
  EXPECT_EQ(DescribeValue(node["f"]), "an empty list");
  EXPECT_EQ(DescribeValue(node["g"]), "empty");
  EXPECT_EQ(DescribeValue(node["h"]), "true");
  EXPECT_EQ(DescribeValue(node["i"]), "\"say \\\"hi\\\"\"");
  EXPECT_TRUE(IsPlainScalar(node["b"]));
  EXPECT_FALSE(IsPlainScalar(node["c"]));
}

}  // namespace
}  // namespace clustercert::controller::plan
