// LldpReceiver and HostNeighborSource on a real veth pair, as root: this
// thread enters a network namespace of its own, one end of the veth sends
// crafted LLDP frames through an AF_PACKET socket, the other receives.
#include "agent/inventory/lldp_receiver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/inventory/host_neighbor_source.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"
#include "tests/support/fake_command_runner.h"
#include "tests/support/fixture_file.h"

namespace clustercert::agent::inventory {
namespace {

std::string Fixture(const std::string& name) {
  return clustercert::testing::FixtureBytes("lldp/" + name);
}

// Namespace cclldp<pid> with veth sw0 (the "switch") - rx0 (the rail netdev).
class LldpReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      SKIP_FOR_ENVIRONMENT("root") << "needs root to create a network namespace and a veth";
    }
    const std::string script =
        absl::StrCat("set -e; exec >/dev/null 2>&1; ip netns add ", ns_, "; ip -n ", ns_,
                     " link add sw0 type veth peer name rx0; ip -n ", ns_,
                     " link set sw0 up; ip -n ", ns_, " link set rx0 up");
    if (std::system(script.c_str()) != 0) {
      SKIP_FOR_ENVIRONMENT("netns") << "cannot build the namespace with ip(8)";
    }
    home_ = UniqueFd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    UniqueFd inside(::open(absl::StrCat("/run/netns/", ns_).c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(home_.valid() && inside.valid());
    ASSERT_EQ(::setns(inside.get(), CLONE_NEWNET), 0);
    entered_ = true;
  }
  void TearDown() override {
    if (entered_) {
      EXPECT_EQ(::setns(home_.get(), CLONE_NEWNET), 0);
    }
    std::system(absl::StrCat("ip netns del ", ns_, " 2>/dev/null").c_str());
  }

  // Sends `frame` out of sw0, as the switch would.
  void Send(const std::string& frame) {
    UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(fd.valid());
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(ETH_P_LLDP);
    to.sll_ifindex = static_cast<int>(::if_nametoindex("sw0"));
    to.sll_halen = 6;
    std::memcpy(to.sll_addr, frame.data(), 6);
    ASSERT_EQ(::sendto(fd.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to),
                       sizeof(to)),
              static_cast<ssize_t>(frame.size()))
        << std::strerror(errno);
  }

  std::string ns_ = absl::StrCat("cclldp", ::getpid());
  UniqueFd home_;
  bool entered_ = false;
};

TEST_F(LldpReceiverTest, ReceivesTheSwitchFrameOnTheRail) {
  LldpReceiver receiver = LldpReceiver::Open({"rx0"});
  Send(Fixture("leaf1-local.bin"));
  const absl::Time started = absl::Now();
  auto heard = receiver.Receive({"rx0"}, started, absl::Seconds(5), RealClock());
  ASSERT_TRUE(heard.at("rx0").ok()) << heard.at("rx0").status();
  EXPECT_EQ(heard.at("rx0")->switch_name(), "leaf1");
  EXPECT_EQ(heard.at("rx0")->port(), "Ethernet1/2");
  EXPECT_EQ(heard.at("rx0")->source(), "LLDP frame on rx0");
  EXPECT_LT(absl::Now() - started, absl::Seconds(2)) << "returned only at the deadline";
}

TEST_F(LldpReceiverTest, SkipsGarbageAndShutdownFramesAndKeepsWaiting) {
  LldpReceiver receiver = LldpReceiver::Open({"rx0"});
  std::string garbage = Fixture("leaf1-ifname.bin");
  garbage[15] = '\x7f';  // the chassis ID TLV's length overruns the frame
  Send(garbage);
  Send(Fixture("leaf1-shutdown.bin"));
  std::thread late([this] {
    UniqueFd inside(::open(absl::StrCat("/run/netns/", ns_).c_str(), O_RDONLY | O_CLOEXEC));
    ::setns(inside.get(), CLONE_NEWNET);
    absl::SleepFor(absl::Milliseconds(300));
    Send(Fixture("leaf1-mac.bin"));
  });
  auto heard = receiver.Receive({"rx0"}, absl::Now(), absl::Seconds(5), RealClock());
  late.join();
  ASSERT_TRUE(heard.at("rx0").ok()) << heard.at("rx0").status();
  EXPECT_EQ(heard.at("rx0")->port_id_subtype(), "mac");
}

TEST_F(LldpReceiverTest, NoFrameWithinTheWaitSaysWhy) {
  LldpReceiver receiver = LldpReceiver::Open({"rx0", "nosuch0"});
  Send(Fixture("leaf1-shutdown.bin"));
  const absl::Time started = absl::Now();
  auto heard = receiver.Receive({"rx0", "nosuch0"}, started, absl::Seconds(1), RealClock());
  const absl::Duration took = absl::Now() - started;
  EXPECT_GE(took, absl::Milliseconds(950));
  EXPECT_LT(took, absl::Seconds(2));
  ASSERT_FALSE(heard.at("rx0").ok());
  EXPECT_NE(
      heard.at("rx0").status().message().find("no LLDP frame on rx0 within 1 s that this agent "
                                              "could use: the switch at chassis 42:19:7e:cb:cd:02 "
                                              "sent a shutdown LLDPDU"),
      std::string::npos)
      << heard.at("rx0").status();
  EXPECT_NE(heard.at("nosuch0").status().message().find("this host has no such netdev"),
            std::string::npos);
}

TEST_F(LldpReceiverTest, OwnOutgoingFramesAreNotTheNeighbour) {
  // The rail's own lldpd sends on rx0: those frames leave, they are not heard.
  LldpReceiver receiver = LldpReceiver::Open({"rx0"});
  UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_protocol = htons(ETH_P_LLDP);
  to.sll_ifindex = static_cast<int>(::if_nametoindex("rx0"));
  to.sll_halen = 6;
  const std::string own = Fixture("leaf1-ifname.bin");
  std::memcpy(to.sll_addr, own.data(), 6);
  ASSERT_GT(
      ::sendto(fd.get(), own.data(), own.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)),
      0);
  auto heard = receiver.Receive({"rx0"}, absl::Now(), absl::Seconds(1), RealClock());
  EXPECT_FALSE(heard.at("rx0").ok());
}

TEST_F(LldpReceiverTest, HostSourceFallsBackFromLldpcliToTheFrame) {
  clustercert::testing::FakeCommandRunner lldpcli;
  lldpcli.Answer(
      "lldpcli -f json show neighbors details",
      process::CommandResult{
          0, R"({"lldp": {"interface": {"other0": {"chassis": {"s": {"id": {"type": "mac",
         "value": "aa:bb:cc:dd:ee:ff"}}}, "port": {"id": {"type": "ifname", "value": "swp2"}}}}}})",
          ""});
  HostNeighborSource source(&lldpcli, RealClock());
  std::thread late([this] {
    UniqueFd inside(::open(absl::StrCat("/run/netns/", ns_).c_str(), O_RDONLY | O_CLOEXEC));
    ::setns(inside.get(), CLONE_NEWNET);
    absl::SleepFor(absl::Milliseconds(200));
    Send(Fixture("leaf1-ifname.bin"));
  });
  auto heard = source.Read({"rx0", "other0"}, absl::Now(), absl::Seconds(3));
  late.join();
  ASSERT_TRUE(heard.at("rx0").ok()) << heard.at("rx0").status();
  EXPECT_EQ(heard.at("rx0")->source(), "LLDP frame on rx0");
  ASSERT_TRUE(heard.at("other0").ok());
  EXPECT_EQ(heard.at("other0")->source(), "lldpcli");
  EXPECT_EQ(heard.at("other0")->port(), "swp2");
}

TEST_F(LldpReceiverTest, HostSourceNamesBothMissingSources) {
  clustercert::testing::FakeCommandRunner lldpcli;  // no answer: not installed
  HostNeighborSource source(&lldpcli, RealClock());
  auto heard = source.Read({"rx0"}, absl::Now(), absl::Seconds(1));
  ASSERT_FALSE(heard.at("rx0").ok());
  const std::string why(heard.at("rx0").status().message());
  EXPECT_NE(why.find("no LLDP frame on rx0 within 1 s: LLDP may be off on the switch port, or "
                     "lldpd is not running there; on this host, lldpcli not found"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace clustercert::agent::inventory
