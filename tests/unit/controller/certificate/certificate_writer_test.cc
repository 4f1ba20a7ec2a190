#include "controller/certificate/certificate_writer.h"

#include <fstream>
#include <sstream>
#include <string>

#include "controller/certificate/certificate_format.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/report/large_certificate.h"

namespace clustercert::controller {
namespace {

// What CertificateJson printed before it printed in parts: the whole
// message through protobuf's printer at once.
std::string WholeJson(const v1::Certificate& certificate) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(certificate, &json, options).ok());
  return json;
}

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(CLUSTERCERT_FIXTURES) + "/certificates/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CertificateJsonTest, PrintedInPartsIsTheWholePrintByteForByte) {
  for (const char* name : {"lab-healthy.json", "lab-slowed.json", "loopback-collectives.json"}) {
    SCOPED_TRACE(name);
    auto certificate = ParseCertificateOfAnyFormat(Fixture(name));
    ASSERT_TRUE(certificate.ok()) << certificate.status();
    ASSERT_GT(certificate->pairs_size() + certificate->collectives_size(), 0);
    auto json = CertificateJson(*certificate);
    ASSERT_TRUE(json.ok()) << json.status();
    EXPECT_EQ(*json, WholeJson(*certificate));
  }
}

TEST(CertificateJsonTest, LargeClusterAndEmptyArrays) {
  const v1::Certificate large = report::testing::LargeCertificate(40);
  auto json = CertificateJson(large);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, WholeJson(large));
  // Nothing repeated at all: the skeleton alone.
  v1::Certificate bare;
  bare.set_cluster("c");
  json = CertificateJson(bare);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, WholeJson(bare));
  EXPECT_NE(json->find("\"pairs\": []"), std::string::npos);
}

TEST(CertificateJsonTest, ReadsBackAsTheSameCertificate) {
  const v1::Certificate large = report::testing::LargeCertificate(40);
  auto json = CertificateJson(large);
  ASSERT_TRUE(json.ok());
  auto parsed = ParseCertificateOfAnyFormat(*json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->SerializeAsString(), large.SerializeAsString());
}

}  // namespace
}  // namespace clustercert::controller
