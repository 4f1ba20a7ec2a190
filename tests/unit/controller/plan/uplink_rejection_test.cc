// The uplink's reach at `controller plan check` (issue 15): the targets and
// sizes the agent refuses are refused here first, with file:line:col, by the
// same rules (common/uplink_target.h).

#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

constexpr char kUrlRule[] =
    "it must be a URL starting with http:// or https://, with no user@, one host (a DNS name or "
    "an IP address) and a port from 1 to 65535 (e.g. http://10.10.9.1:9000/bucket/shard.tar). ";
constexpr char kAddressRule[] =
    "it must be a literal IP address and port of a TCP sink, the port from 1 to 65535 (e.g. "
    "10.10.9.1:5201 or [fd00::9]:5201). ";
constexpr char kHttpTarget[] = "url: \"http://10.10.9.1:9000/bucket/shard-000.tar\"";
constexpr char kTcpTarget[] = "address: \"10.10.9.1:5201\"";

RejectCase Url(const char* name, const std::string& url, const std::string& why) {
  return {name,
          {{kHttpTarget, absl::StrCat("url: \"", url, "\"")}},
          absl::StrCat("\"", url, "\""),
          absl::StrCat("uplink.targets[1].url is \"", url, "\"; ", kUrlRule, why)};
}

RejectCase Address(const char* name, const std::string& address, const std::string& why) {
  return {name,
          {{kTcpTarget, absl::StrCat("address: \"", address, "\"")}},
          absl::StrCat("\"", address, "\""),
          absl::StrCat("uplink.targets[2].address is \"", address, "\"; ", kAddressRule, why)};
}

const std::vector<RejectCase> kCases = {
    Url("FileScheme", "file:///etc/passwd",
        "The scheme file is not http or https; the agent fetches nothing else."),
    Url("GopherScheme", "gopher://127.0.0.1:6379/_FLUSHALL", "The scheme gopher is not http"),
    Url("DictScheme", "dict://127.0.0.1:11211/stat", "The scheme dict is not http"),
    Url("UserInfo", "http://admin:pw@10.10.9.1/shard", "The URL has user information before '@'"),
    Url("UnspecifiedHost", "http://0.0.0.0:6379/",
        "The address 0.0.0.0 is an unspecified (0.0.0.0/8) address, which Linux connects to this "
        "host "
        "itself; give the storage server's address."),
    Url("MulticastHost", "http://[ff02::1]/x",
        "The address ff02::1 is a multicast address (ff00::/8)"),
    Url("NumericHost", "http://2130706433/x",
        "The host 2130706433 is not a dotted-quad IPv4 address (such as 10.10.9.1)."),
    Url("PortZero", "http://10.10.9.1:0/x", "The port '0' is not a number from 1 to 65535."),
    Url("BadHostName", "http://storage_1/x", "The host storage_1 is not a DNS name"),
    Address("TcpHostName", "storage1:5201",
            "The host storage1 is not a literal IP address (the agent resolves no names for tcp "
            "targets)."),
    Address("TcpUnspecified", "0.0.0.0:22",
            "The address 0.0.0.0 is an unspecified (0.0.0.0/8) address"),
    Address("TcpMulticast", "224.0.0.1:5201",
            "The address 224.0.0.1 is a multicast address (224.0.0.0/4)"),
    Address("TcpBroadcast", "255.255.255.255:5201",
            "The address 255.255.255.255 is the broadcast address"),
    Address("TcpIpv6Unspecified", "[::]:5201", "The address :: is the unspecified address (::)"),
    {"FlowsAboveTheCap",
     {{"flows: [1, 8]", "flows: [1, 65]"}},
     "65",
     "uplink.flows[1] is 65; it must be an integer from 1 to 64 (parallel flows in one run; the "
     "agent opens no more)."},
    {"FlowsThousand",
     {{"flows: [1, 8]", "flows: [1024]"}},
     "1024",
     "uplink.flows[0] is 1024; it must be an integer from 1 to 64"},
    {"TooManyFlowCounts",
     {{"flows: [1, 8]", "flows: [1, 2, 3, 4, 5, 6, 7, 8, 9]"}},
     "flows: |[1, 2",
     "uplink.flows is a list; it must be a non-empty list of flow counts (at most 8), each an "
     "integer from 1 to 64 (e.g. [1, 8]). It has 9 entries."},
    {"DurationAboveTheCap",
     {{"flows: [1, 8]\n", "flows: [1, 8]\n  duration_s: 121\n"}},
     "duration_s: |121",
     "uplink.duration_s is 121; it must be a positive number of seconds, at most 120 (per node, "
     "target and flow count; the agent runs no longer; e.g. 5)."},
};

class UplinkReachRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(UplinkReachRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(UplinkReach, UplinkReachRejectionTest, ::testing::ValuesIn(kCases),
                         CaseName);

TEST(UplinkReachTest, TheLimitsThemselvesPass) {
  std::string text = Replace(BasePlan(), "flows: [1, 8]\n",
                             "flows: [1, 2, 4, 8, 16, 32, 48, 64]\n  duration_s: 120\n");
  text = Replace(text, kHttpTarget, "url: \"https://[fd00::9]:65535/a?b=c\"");
  text = Replace(text, kTcpTarget, "address: \"127.0.0.1:5201\"");
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->uplink.flows.size(), 8u);
  EXPECT_EQ(plan->uplink.duration, absl::Seconds(120));
}

}  // namespace
}  // namespace clustercert::controller::plan::testing
