// The agent's answer to an IsolationQuery: bounds, data netdevs, routes and
// probes over fake sources; the socket prober and the route dump on this
// host's loopback.
#include "agent/inventory/fabric_isolation.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent/inventory/netlink_route_source.h"
#include "agent/inventory/socket_reach_prober.h"
#include "common/clock.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeRoutes : public RouteSource {
 public:
  absl::StatusOr<std::vector<KernelRoute>> Routes() override { return routes; }
  absl::StatusOr<std::vector<KernelRoute>> routes;
};

class FakeProber : public ReachProber {
 public:
  std::vector<ReachOutcome> Probe(const std::vector<ReachAttempt>& attempts,
                                  absl::Duration timeout) override {
    seen = attempts;
    seen_timeout = timeout;
    std::vector<ReachOutcome> outcomes;
    for (const ReachAttempt& attempt : attempts) {
      outcomes.push_back(
          attempt.netdev == "data1"
              ? ReachOutcome{ReachOutcome::kRefused, "Connection refused", absl::Microseconds(300)}
              : ReachOutcome{ReachOutcome::kTimeout, "no answer", timeout});
    }
    return outcomes;
  }
  std::vector<ReachAttempt> seen;
  absl::Duration seen_timeout;
};

v1::IsolationQuery Query() {
  v1::IsolationQuery query;
  auto* fabric = query.add_fabrics();
  fabric->set_name("storage");
  fabric->add_subnets("10.40.0.0/16");
  fabric->add_probe("10.40.0.5:2049");
  query.add_rails("mlx5_0");
  query.set_data_ip("10.10.2.1");
  query.set_probe_timeout_ms(500);
  return query;
}

v1::Inventory Inventory() {
  v1::Inventory inventory;
  v1::RdmaDevice* device = inventory.add_rdma_devices();
  device->set_name("mlx5_0");
  device->add_ports()->set_netdev("data0");
  v1::RdmaDevice* other = inventory.add_rdma_devices();  // not a rail: never probed from
  other->set_name("mlx5_9");
  other->add_ports()->set_netdev("stor0");
  v1::Netdev* data1 = inventory.add_netdevs();
  data1->set_name("data1");
  data1->add_cidrs("10.10.2.1/24");
  return inventory;
}

TEST(FabricIsolationTest, ProbesFromTheRailsAndTheDataIpNetdevOnly) {
  FakeRoutes routes;
  routes.routes = std::vector<KernelRoute>{{"10.40.0.0/16", "stor0", "", 254},
                                           {"0.0.0.0/0", "data1", "10.10.2.254", 254},
                                           {"10.50.0.0/16", "data0", "", 254}};
  FakeProber prober;
  FabricIsolationCollector collector(routes, prober);
  v1::FabricIsolation isolation = collector.Collect(Query(), Inventory());
  EXPECT_THAT(isolation.data_netdevs(), ElementsAre("data0", "data1"));
  EXPECT_EQ(isolation.routes_seen(), 3u);
  ASSERT_EQ(isolation.routes_size(), 2);  // 10.50/16 leads elsewhere
  EXPECT_EQ(isolation.routes(0).netdev(), "stor0");
  EXPECT_EQ(isolation.routes(1).destination(), "0.0.0.0/0");
  EXPECT_EQ(isolation.routes(1).fabric(), "storage");
  EXPECT_EQ(isolation.routes(1).fabric_subnet(), "10.40.0.0/16");
  ASSERT_EQ(prober.seen.size(), 2u);
  EXPECT_EQ(prober.seen[0].address, "10.40.0.5");
  EXPECT_EQ(prober.seen[0].port, 2049);
  EXPECT_EQ(prober.seen_timeout, absl::Milliseconds(500));
  ASSERT_EQ(isolation.probes_size(), 2);
  EXPECT_FALSE(isolation.probes(0).reached());
  EXPECT_EQ(isolation.probes(0).outcome(), "timeout");
  EXPECT_TRUE(isolation.probes(1).reached());
  EXPECT_EQ(isolation.probes(1).outcome(), "refused");
  EXPECT_EQ(isolation.probes(1).micros(), 300u);
}

TEST(FabricIsolationTest, UnreadableRoutesAndAbsentRailBecomeUnknowns) {
  FakeRoutes routes;
  routes.routes = absl::PermissionDeniedError("cannot open an rtnetlink socket");
  FakeProber prober;
  FabricIsolationCollector collector(routes, prober);
  v1::IsolationQuery query = Query();
  query.add_rails("mlx5_7");
  v1::FabricIsolation isolation = collector.Collect(query, Inventory());
  ASSERT_EQ(isolation.unknowns_size(), 2);
  EXPECT_EQ(isolation.unknowns(0).path(), "mlx5_7");
  EXPECT_EQ(isolation.unknowns(1).field(), "routes");
  EXPECT_THAT(isolation.unknowns(1).reason(), HasSubstr("rtnetlink"));
  EXPECT_EQ(isolation.probes_size(), 2);  // the probes still ran
}

TEST(FabricIsolationTest, QueryOutsideTheBoundsIsRefused) {
  EXPECT_TRUE(ValidateIsolationQuery(Query()).ok());
  auto refused = [](auto edit) {
    v1::IsolationQuery query = Query();
    edit(query);
    return ValidateIsolationQuery(query);
  };
  EXPECT_THAT(refused([](auto& q) { q.mutable_fabrics(0)->set_name("../etc"); }).message(),
              HasSubstr("is not a name"));
  EXPECT_THAT(
      refused([](auto& q) { q.mutable_fabrics(0)->set_probe(0, "nfs.example:2049"); }).message(),
      HasSubstr("not a literal IP:port"));
  EXPECT_THAT(refused([](auto& q) { q.mutable_fabrics(0)->set_subnets(0, "10.40.0.0"); }).message(),
              HasSubstr("not a CIDR"));
  EXPECT_THAT(refused([](auto& q) { q.set_probe_timeout_ms(60000); }).message(),
              HasSubstr("must be 1 to 2000"));
  EXPECT_THAT(refused([](auto& q) { q.set_data_ip("10.0.0.1; reboot"); }).message(),
              HasSubstr("not a literal IP"));
  EXPECT_THAT(refused([](auto& q) {
                for (int i = 0; i < 20; ++i) q.mutable_fabrics(0)->add_probe("10.40.0.6:22");
              }).message(),
              HasSubstr("more than 16"));
  EXPECT_THAT(refused([](auto& q) {
                for (int i = 0; i < 9; ++i) *q.add_fabrics() = q.fabrics(0);
              }).message(),
              HasSubstr("more than 8"));
}

// A listener on 127.0.0.1 bound to lo: connected; a closed port: refused (a
// RST is an answer); an address lo has no route to: not reached (the kernel
// takes it as on-link and asks for it on lo, where no one answers; no packet
// leaves the host).
TEST(SocketReachProberTest, TellsConnectedRefusedAndUnreachableOnLoopback) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  socklen_t size = sizeof(address);
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &size);
  const int open_port = ntohs(address.sin_port);
  UniqueFd closed(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  address.sin_port = 0;
  ::bind(closed.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address));
  size = sizeof(address);
  ::getsockname(closed.get(), reinterpret_cast<sockaddr*>(&address), &size);
  const int closed_port = ntohs(address.sin_port);  // bound, never listening

  SocketReachProber prober(RealClock());
  std::vector<ReachOutcome> outcomes = prober.Probe(
      {{"lo", "127.0.0.1", open_port}, {"lo", "127.0.0.1", closed_port}, {"lo", "192.0.2.1", 9}},
      absl::Milliseconds(300));
  ASSERT_EQ(outcomes.size(), 3u);
  if (outcomes[0].kind == ReachOutcome::kError &&
      absl::StrContains(outcomes[0].detail, "cannot bind")) {
    SKIP_FOR_ENVIRONMENT("cap-net-raw")
        << "SO_BINDTODEVICE needs CAP_NET_RAW here: " << outcomes[0].detail;
  }
  EXPECT_EQ(outcomes[0].kind, ReachOutcome::kConnected) << outcomes[0].detail;
  EXPECT_EQ(outcomes[1].kind, ReachOutcome::kRefused) << outcomes[1].detail;
  EXPECT_TRUE(outcomes[2].kind == ReachOutcome::kTimeout ||
              outcomes[2].kind == ReachOutcome::kUnreachable)
      << outcomes[2].kind << " " << outcomes[2].detail;
}

TEST(NetlinkRouteSourceTest, ReadsThisHostsTablesWithoutTheLocalOne) {
  NetlinkRouteSource source;
  auto routes = source.Routes();
  ASSERT_TRUE(routes.ok()) << routes.status();
  for (const KernelRoute& route : *routes) {
    EXPECT_NE(route.table, 255u) << route.destination;
    EXPECT_NE(route.destination.find('/'), std::string::npos);
  }
}

}  // namespace
}  // namespace clustercert::agent::inventory
