// other_fabrics: the fabrics the training data plane must not reach.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kCertificateLine[] = "certificate: {out: certs/, signing_key: /pki/signing.key}\n";

std::string WithOtherFabrics(const std::string& section) {
  return Replace(BasePlan(), kCertificateLine, section + kCertificateLine);
}

absl::StatusOr<Plan> Parse(const std::string& section) {
  return ParsePlan(WithOtherFabrics(section), kFile);
}

TEST(OtherFabricsTest, FabricsWithSubnetsAndProbesParse) {
  auto plan = Parse(
      "other_fabrics:\n"
      "  - {name: inference, subnets: [10.30.0.5/16, \"fd30::/48\"], probe: "
      "[\"10.30.0.10:8000\"]}\n"
      "  - {name: storage, subnets: [10.40.0.0/24]}\n");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->other_fabrics.size(), 2u);
  EXPECT_EQ(plan->other_fabrics[0].name, "inference");
  // Host bits cleared: the subnet is what the check compares.
  EXPECT_THAT(plan->other_fabrics[0].subnets, ElementsAre("10.30.0.0/16", "fd30::/48"));
  EXPECT_THAT(plan->other_fabrics[0].probe, ElementsAre("10.30.0.10:8000"));
  EXPECT_TRUE(plan->other_fabrics[1].probe.empty());
}

TEST(OtherFabricsTest, AbsentSectionDeclaresNone) {
  auto plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->other_fabrics.empty());
}

TEST(OtherFabricsTest, DataIpInsideAnotherFabricIsAPlanError) {
  auto plan = Parse("other_fabrics: [{name: inference, subnets: [10.10.0.0/16]}]\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("other_fabrics[0] (inference: 10.10.0.0/16) holds node1's data_ip "
                        "10.10.1.1; a fabric kept apart cannot share the training fabric's "
                        "addresses: fix the subnet or the node's data_ip."));
}

TEST(OtherFabricsTest, ProbeOutsideItsFabricIsAPlanError) {
  auto plan = Parse(
      "other_fabrics: [{name: inference, subnets: [10.30.0.0/16], probe: [\"10.99.0.1:80\"]}]\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("other_fabrics[0].probe[0] is 10.99.0.1:80, outside inference's subnets "
                        "(10.30.0.0/16)"));
}

TEST(OtherFabricsTest, ProbeByHostNameIsRefused) {
  auto plan = Parse(
      "other_fabrics: [{name: inference, subnets: [10.30.0.0/16], probe: [\"nfs.lan:2049\"]}]\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("a host name would make the agents resolve it"));
}

TEST(OtherFabricsTest, SubnetThatIsNotACidrNamesItsPosition) {
  const std::string text =
      WithOtherFabrics("other_fabrics: [{name: inference, subnets: [10.30.0.0]}]\n");
  auto plan = ParsePlan(text, kFile);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr(absl::StrCat(kFile, ":", PositionOf(text, "10.30.0.0]"),
                                     ": other_fabrics[0].subnets[0] is \"10.30.0.0\"; it must be "
                                     "a subnet in CIDR form (e.g. 10.30.0.0/16).")));
}

TEST(OtherFabricsTest, DuplicateNamesAndUnknownKeysAreRefused) {
  auto plan = Parse(
      "other_fabrics:\n"
      "  - {name: inference, subnets: [10.30.0.0/16]}\n"
      "  - {name: inference, subnets: [10.31.0.0/16], probes: []}\n");
  ASSERT_FALSE(plan.ok());
  const std::string message(plan.status().message());
  EXPECT_THAT(message, HasSubstr("is named inference like an earlier entry"));
  EXPECT_THAT(message, HasSubstr("did you mean probe?"));
}

}  // namespace
}  // namespace clustercert::controller::plan::testing
