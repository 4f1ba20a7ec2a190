// Format 5 made four certificate fields enums: the JSON must read as
// before, older certificates must load, and their signatures must still be
// checked against the bytes they were signed as.
#include "controller/certificate/certificate_format.h"

#include <string>

#include "controller/certificate/certificate_builder.h"
#include "controller/certificate/certificate_writer.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

v1::Certificate WithEveryEnum() {
  v1::Certificate certificate;
  certificate.set_format_version(kCertificateFormatVersion);
  certificate.set_tool("clustercert");
  certificate.set_verdict("not-certified");
  v1::Finding* finding = certificate.add_checks();
  finding->set_id("port.rate");
  finding->set_status(v1::Finding::unknown);
  finding->set_severity(v1::Finding::warning);
  v1::PhaseResult* phase = certificate.add_phases();
  phase->set_name("pairwise");
  phase->set_status(v1::PhaseResult::interrupted);
  certificate.mutable_uplink()->mutable_sizing()->set_verdict(v1::UplinkSizing::undersized);
  return certificate;
}

TEST(CertificateFormatTest, EnumsAreSpelledAsTheStringsEarlierFormatsWrote) {
  auto printed = CertificateJson(WithEveryEnum());
  ASSERT_TRUE(printed.ok()) << printed.status();
  const std::string& json = *printed;
  EXPECT_NE(json.find("\"status\": \"unknown\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"severity\": \"warning\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"status\": \"interrupted\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"verdict\": \"undersized\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"verdict\": \"not-certified\""), std::string::npos) << json;

  auto parsed = ParseCertificateOfAnyFormat(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->checks(0).status(), v1::Finding::unknown);
  EXPECT_EQ(parsed->phases(0).status(), v1::PhaseResult::interrupted);
  EXPECT_EQ(parsed->uplink().sizing().verdict(), v1::UplinkSizing::undersized);
}

TEST(CertificateFormatTest, AFormat4CertificateWithAnEmptyStatusLoadsThroughTheOldSchema) {
  // Format 4 printed every scalar, so a sizing never computed read "".
  const std::string json = R"({"format_version": 4, "tool": "clustercert",
      "checks": [{"id": "port.rate", "status": "pass", "severity": "error"}],
      "uplink": {"sizing": {"verdict": "", "capacity_gbps": 100}}})";
  auto parsed = ParseCertificateOfAnyFormat(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->checks(0).status(), v1::Finding::pass);
  EXPECT_EQ(parsed->uplink().sizing().verdict(), v1::UplinkSizing::unknown);
  EXPECT_EQ(parsed->uplink().sizing().capacity_gbps(), 100);
}

TEST(CertificateFormatTest, AStatusNoFormatKnowsIsRefused) {
  for (const std::string version : {"4", "5"}) {
    const std::string json = R"({"format_version": )" + version +
                             R"(, "checks": [{"id": "port.rate", "status": "passed"}]})";
    EXPECT_FALSE(ParseCertificateOfAnyFormat(json).ok()) << json;
  }
  // An empty status is format 4's; format 5 never writes one.
  EXPECT_FALSE(
      ParseCertificateOfAnyFormat(R"({"format_version": 5, "checks": [{"id": "x", "status": ""}]})")
          .ok());
  EXPECT_FALSE(ParseCertificateOfAnyFormat(R"({"format_version": 4, "bogus": 1})").ok());
}

TEST(CertificateFormatTest, OlderFormatsAreEncodedWithTheStatusAsAString) {
  v1::Finding finding;
  finding.set_id("x");
  finding.set_status(v1::Finding::pass);
  // Field 5 as a length-delimited string (tag 0x2a) holding "pass" before
  // format 5, as a varint (tag 0x28) of value 1 from format 5 on.
  const std::string legacy = EncodingForFormat(finding, 4);
  EXPECT_NE(legacy.find(std::string("\x2a\x04pass", 6)), std::string::npos);
  const std::string current = EncodingForFormat(finding, 5);
  EXPECT_NE(current.find(std::string("\x28\x01", 2)), std::string::npos);
  EXPECT_EQ(current.find("pass"), std::string::npos);
  // Messages the format left alone encode the same under both.
  v1::SkippedTest skipped;
  skipped.set_kind("pair");
  skipped.set_reason("no route");
  EXPECT_EQ(EncodingForFormat(skipped, 4), EncodingForFormat(skipped, 5));
}

TEST(CertificateFormatTest, AnUnsetStatusIsLeftOutOfTheOldEncodingAsAnEmptyStringWas) {
  v1::Finding finding;
  finding.set_id("x");
  // Format 4 did not encode an empty status string; format 5 does not
  // encode the zero enum: the two encodings agree.
  EXPECT_EQ(EncodingForFormat(finding, 4), EncodingForFormat(finding, 5));
}

}  // namespace
}  // namespace clustercert::controller
