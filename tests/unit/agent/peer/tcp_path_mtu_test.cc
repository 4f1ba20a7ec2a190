// ProbePathMtu on real sockets: loopback everywhere, and, as root, network
// namespaces with a veth at 1500 behind a router (the hop answers the DF
// probe with ICMP fragmentation-needed) and a route with mtu 1500.
#include "agent/peer/tcp_path_mtu.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::peer {
namespace {

SocketAddress Address(const std::string& ip, uint16_t port) {
  absl::StatusOr<SocketAddress> address = SocketAddress::FromLiteral(ip, port);
  EXPECT_TRUE(address.ok()) << address.status();
  return *address;
}

TEST(TcpPathMtuTest, LoopbackRouteIsTheLoopbackMtu) {
  const v1::PathMtu mtu = ProbePathMtu(Address("127.0.0.1", 0), Address("127.0.0.1", kDiscardPort));
  ASSERT_TRUE(mtu.has_local_route_mtu()) << mtu.note();
  // lo's MTU is 65536; the kernel caps an IPv4 route's at IP_MAX_MTU, 65535.
  EXPECT_EQ(mtu.local_route_mtu(), 65535u);
  EXPECT_EQ(mtu.route_mtu(), 65535u);
  EXPECT_EQ(mtu.peer_address(), "127.0.0.1");
  EXPECT_EQ(PathMtuStallClause(mtu, 4156), "");
}

TEST(TcpPathMtuTest, UnroutableLocalAddressIsANoteNotAFigure) {
  // 192.0.2.1 (TEST-NET-1) is on no interface here: bind fails.
  const v1::PathMtu mtu = ProbePathMtu(Address("192.0.2.1", 0), Address("127.0.0.1", 9));
  EXPECT_FALSE(mtu.has_local_route_mtu());
  EXPECT_NE(mtu.note(), "");
}

TEST(TcpPathMtuTest, StallClauseNamesTheRoute) {
  v1::PathMtu mtu;
  mtu.set_peer_address("10.0.0.2");
  mtu.set_local_route_mtu(9000);
  mtu.set_route_mtu(1500);
  const std::string clause = PathMtuStallClause(mtu, 4156);
  EXPECT_NE(clause.find("sends 4156-byte packets but the route to 10.0.0.2 carries only 1500"),
            std::string::npos)
      << clause;
  EXPECT_NE(clause.find("ICMP fragmentation-needed"), std::string::npos);
  EXPECT_EQ(PathMtuStallClause(mtu, 1400), "");
}

TEST(TcpPathMtuTest, OnlyAHopThatAnsweredShortRefusesATest) {
  v1::PathMtu mtu;
  mtu.set_peer_address("10.0.0.2");
  mtu.set_local_route_mtu(9000);
  mtu.set_route_mtu(1500);
  const std::string refusal = ShortHopRefusal(mtu, 4154);
  EXPECT_NE(refusal.find("the route to 10.0.0.2 carries only 1500-byte packets (a routed hop"),
            std::string::npos)
      << refusal;
  EXPECT_NE(refusal.find("sends 4154-byte packets, which that hop drops"), std::string::npos)
      << refusal;
  // Packets the hop carries (a 2-byte latency test's): the test runs.
  EXPECT_EQ(ShortHopRefusal(mtu, 74), "");
  // This node's own short route: no hop answered, mtu.path judges it and a
  // NIC that sizes frames from its port may still cross.
  mtu.set_local_route_mtu(1500);
  EXPECT_EQ(ShortHopRefusal(mtu, 4154), "");
  // No probe figure: nothing to refuse on.
  EXPECT_EQ(ShortHopRefusal(v1::PathMtu(), 4154), "");
}

// Namespaces ccmtu<pid>a - ccmtu<pid>r - ccmtu<pid>b: a at 9000 on
// 10.77.1.0/24, the router's far side at 1500 on 10.77.2.0/24, b behind it.
class NamespacePathMtuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      SKIP_FOR_ENVIRONMENT("root") << "needs root to create network namespaces";
    }
    if (!Run(Script())) {
      SKIP_FOR_ENVIRONMENT("netns")
          << "cannot build the namespaces with ip(8) (iproute2 missing or no netns support)";
    }
  }
  void TearDown() override {
    for (const char* side : {"a", "r", "b"}) {
      Run(absl::StrCat("ip netns del ", prefix_, side, " 2>/dev/null"));
    }
  }

  bool Run(const std::string& command) { return std::system(command.c_str()) == 0; }

  std::string Script() const {
    const std::string a = prefix_ + "a", r = prefix_ + "r", b = prefix_ + "b";
    return absl::StrCat(
        "set -e; exec >/dev/null 2>&1; ip netns add ", a, "; ip netns add ", r, "; ip netns add ",
        b, "; ip link add va netns ", a, " type veth peer name ra netns ", r,
        "; ip link add vb netns ", b, " type veth peer name rb netns ", r, "; ip -n ", a,
        " link set va mtu 9000 up; ip -n ", a, " link set lo up", "; ip -n ", r,
        " link set ra mtu 9000 up; ip -n ", r, " link set rb mtu 1500 up", "; ip -n ", b,
        " link set vb mtu 9000 up", "; ip -n ", a, " addr add 10.77.1.1/24 dev va; ip -n ", r,
        " addr add 10.77.1.2/24 dev ra; ip -n ", r, " addr add 10.77.2.2/24 dev rb; ip -n ", b,
        " addr add 10.77.2.1/24 dev vb; ip -n ", a, " route add 10.77.2.0/24 via 10.77.1.2",
        "; ip -n ", b, " route add 10.77.1.0/24 via 10.77.2.2", "; ip -n ", a,
        " route add 10.77.9.0/24 via 10.77.1.2 mtu 1500", "; ip netns exec ", r,
        " sysctl -w net.ipv4.ip_forward=1");
  }

  // Probes from namespace `a` (this thread enters it and comes back).
  v1::PathMtu ProbeFromA(const std::string& to) {
    const int home = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    const int inside =
        ::open(absl::StrCat("/run/netns/", prefix_, "a").c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(home, 0);
    EXPECT_GE(inside, 0);
    EXPECT_EQ(::setns(inside, CLONE_NEWNET), 0);
    v1::PathMtu mtu = ProbePathMtu(Address("10.77.1.1", 0), Address(to, kDiscardPort));
    EXPECT_EQ(::setns(home, CLONE_NEWNET), 0);
    ::close(inside);
    ::close(home);
    return mtu;
  }

  std::string prefix_ = absl::StrCat("ccmtu", ::getpid());
};

TEST_F(NamespacePathMtuTest, RoutedHopAt1500AnswersTheProbe) {
  const v1::PathMtu mtu = ProbeFromA("10.77.2.1");
  ASSERT_TRUE(mtu.has_local_route_mtu()) << mtu.note();
  EXPECT_EQ(mtu.local_route_mtu(), 9000u);
  EXPECT_EQ(mtu.route_mtu(), 1500u) << "the router's ICMP fragmentation-needed was not seen";
}

TEST_F(NamespacePathMtuTest, RouteWithMtu1500IsTheLocalRoute) {
  const v1::PathMtu mtu = ProbeFromA("10.77.9.1");
  ASSERT_TRUE(mtu.has_local_route_mtu()) << mtu.note();
  EXPECT_EQ(mtu.local_route_mtu(), 1500u);
  EXPECT_EQ(mtu.route_mtu(), 1500u);
}

TEST_F(NamespacePathMtuTest, JumboPathEndToEnd) {
  // 10.77.1.2 is the router itself, on a's 9000 link: nothing short.
  const v1::PathMtu mtu = ProbeFromA("10.77.1.2");
  ASSERT_TRUE(mtu.has_local_route_mtu()) << mtu.note();
  EXPECT_EQ(mtu.local_route_mtu(), 9000u);
  EXPECT_EQ(mtu.route_mtu(), 9000u);
}

}  // namespace
}  // namespace clustercert::agent::peer
