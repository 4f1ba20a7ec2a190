#include "agent/service/uplink_handlers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "common/completion.h"

namespace clustercert::agent {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class UplinkHandlersTest : public ::testing::Test {
 protected:
  UplinkHandlersTest()
      : handlers_({[this](const std::string& target, const uplink::FlowSpec& spec,
                          std::atomic<uint64_t>*) -> absl::StatusOr<uplink::FlowsResult> {
                     seen_target_ = "http " + target;
                     seen_spec_ = spec;
                     return result_;
                   },
                   [this](const std::string& target, const uplink::FlowSpec& spec,
                          std::atomic<uint64_t>*) -> absl::StatusOr<uplink::FlowsResult> {
                     seen_target_ = "tcp " + target;
                     seen_spec_ = spec;
                     return absl::UnavailableError("connection refused by 10.0.0.9:5201");
                   }},
                  [this] { return now_; }) {
    result_.flows = {{1000000000, 2.0, 3}, {500000000, 2.0, 2}};
    result_.total_bytes = 1500000000;
    result_.seconds = 2.0;
    result_.aggregate_gbps = 6.0;
    result_.object_bytes = 1 << 30;
    result_.detail = "http GET, 2 range flows";
  }

  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  uplink::FlowsResult result_;
  std::string seen_target_;
  uplink::FlowSpec seen_spec_;
  UplinkHandlers handlers_;
};

TEST_F(UplinkHandlersTest, HttpRequestBecomesAFlowSpecAndFiguresComeBack) {
  v1::RunUplinkFlowsRequest request;
  request.set_type("http");
  request.set_url("http://10.0.0.9/shard.tar");
  request.set_flows(2);
  request.set_duration_s(2);
  request.set_bind_ip("10.10.1.1");
  request.set_timeout_ms(20000);
  auto response = handlers_.Run(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(seen_target_, "http http://10.0.0.9/shard.tar");
  EXPECT_EQ(seen_spec_.flows, 2);
  EXPECT_EQ(seen_spec_.duration, absl::Seconds(2));
  EXPECT_EQ(seen_spec_.bind_ip, "10.10.1.1");
  EXPECT_EQ(seen_spec_.deadline, now_ + absl::Seconds(20));
  const v1::UplinkFlows& flows = response->result();
  ASSERT_EQ(flows.flows_size(), 2);
  EXPECT_DOUBLE_EQ(flows.flows(0).gbps(), 4.0);
  EXPECT_DOUBLE_EQ(flows.flows(1).gbps(), 2.0);
  EXPECT_EQ(flows.flows(0).requests(), 3u);
  EXPECT_DOUBLE_EQ(flows.aggregate_gbps(), 6.0);
  EXPECT_EQ(flows.detail(), "http GET, 2 range flows");
}

TEST_F(UplinkHandlersTest, RunnerErrorsComeBackAsTheyAre) {
  v1::RunUplinkFlowsRequest request;
  request.set_type("tcp");
  request.set_address("10.0.0.9:5201");
  request.set_flows(1);
  request.set_duration_s(1);
  auto response = handlers_.Run(request);
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(absl::IsUnavailable(response.status()));
  EXPECT_EQ(seen_target_, "tcp 10.0.0.9:5201");
}

TEST_F(UplinkHandlersTest, BadRequestsNameTheField) {
  v1::RunUplinkFlowsRequest request;
  request.set_type("agent");
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()),
              HasSubstr("'agent' is not one this agent runs"));
  request.set_type("http");
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()), HasSubstr("needs a url"));
  request.set_url("http://x/");
  request.set_flows(0);
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()),
              HasSubstr("flows 0 is outside 1..64"));
  request.set_flows(4);
  request.set_duration_s(0);
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()),
              HasSubstr("duration_s 0 is outside"));
}

// The SSRF requests seen against RunUplinkFlows: each is refused before a
// runner (and so libcurl or a socket) sees it.
TEST_F(UplinkHandlersTest, OtherSchemesAndUnreachableAddressesNeverReachARunner) {
  v1::RunUplinkFlowsRequest request;
  request.set_type("http");
  request.set_flows(1);
  request.set_duration_s(1);
  for (const char* url : {"file:///etc/shadow", "gopher://127.0.0.1:6379/_CONFIG%20SET",
                          "dict://127.0.0.1:11211/stat", "ftp://10.0.0.9/x", "http://0.0.0.0:6379/",
                          "http://root:pw@10.0.0.9/x", "http://10.0.0.9/x\r\nInjected: 1"}) {
    request.set_url(url);
    absl::StatusOr<v1::RunUplinkFlowsResponse> response = handlers_.Run(request);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument) << url;
    EXPECT_THAT(std::string(response.status().message()),
                AllOf(HasSubstr("is refused"), HasSubstr("uplink.targets[].url")))
        << url;
    EXPECT_THAT(std::string(response.status().message()), Not(HasSubstr("\r"))) << url;
  }
  request.set_type("tcp");
  for (const char* address : {"0.0.0.0:22", "224.0.0.1:5201", "255.255.255.255:9", "[::]:22",
                              "storage1:5201", "10.0.0.9:0"}) {
    request.set_address(address);
    absl::StatusOr<v1::RunUplinkFlowsResponse> response = handlers_.Run(request);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(std::string(response.status().message()), HasSubstr("uplink.targets[].address"))
        << address;
  }
  EXPECT_EQ(seen_target_, "");
}

TEST_F(UplinkHandlersTest, FlowsDurationAndTimeoutAreCapped) {
  v1::RunUplinkFlowsRequest request;
  request.set_type("tcp");
  request.set_address("10.0.0.9:5201");
  request.set_flows(1024);  // ran the agent out of file descriptors
  request.set_duration_s(1);
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()),
              HasSubstr("flows 1024 is outside 1..64"));
  request.set_flows(64);
  request.set_duration_s(86400);
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()),
              HasSubstr("duration_s 86400 is outside (0, 120]"));
  request.set_duration_s(std::nan(""));
  EXPECT_EQ(handlers_.Run(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_duration_s(120);
  request.set_timeout_ms(4'000'000'000u);
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()),
              HasSubstr("timeout_ms 4000000000 is more than 180000"));
  EXPECT_EQ(seen_target_, "");
  request.set_timeout_ms(180'000);
  EXPECT_TRUE(absl::IsUnavailable(handlers_.Run(request).status()));  // the fake's answer
  EXPECT_EQ(seen_spec_.flows, 64);
  EXPECT_EQ(seen_spec_.deadline, now_ + absl::Seconds(180));
}

TEST(UplinkHandlersConcurrencyTest, ASecondRunWhileOneRunsIsRefused) {
  Completion started;
  Completion release;
  auto blocking = [&](const std::string&, const uplink::FlowSpec&,
                      std::atomic<uint64_t>*) -> absl::StatusOr<uplink::FlowsResult> {
    if (!started.HasBeenNotified()) started.Notify();
    release.Wait();
    return uplink::FlowsResult();
  };
  UplinkHandlers handlers({blocking, blocking}, [] { return absl::Now(); });
  v1::RunUplinkFlowsRequest request;
  request.set_type("tcp");
  request.set_address("10.0.0.9:5201");
  request.set_flows(64);
  request.set_duration_s(1);
  absl::StatusOr<v1::RunUplinkFlowsResponse> first;
  std::thread runner([&] { first = handlers.Run(request); });
  started.Wait();
  absl::StatusOr<v1::RunUplinkFlowsResponse> second = handlers.Run(request);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("one at a time"));
  release.Notify();
  runner.join();
  EXPECT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(handlers.Run(request).ok());  // free again once the first ended
}

}  // namespace
}  // namespace clustercert::agent
