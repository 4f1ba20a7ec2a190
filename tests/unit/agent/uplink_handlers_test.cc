#include "agent/service/uplink_handlers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace clustercert::agent {
namespace {

using ::testing::HasSubstr;

class UplinkHandlersTest : public ::testing::Test {
 protected:
  UplinkHandlersTest()
      : handlers_(
            {[this](const std::string& target, const uplink::FlowSpec& spec,
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
              HasSubstr("flows 0 is outside 1..1024"));
  request.set_flows(4);
  request.set_duration_s(0);
  EXPECT_THAT(std::string(handlers_.Run(request).status().message()),
              HasSubstr("duration_s 0 is outside"));
}

}  // namespace
}  // namespace clustercert::agent
