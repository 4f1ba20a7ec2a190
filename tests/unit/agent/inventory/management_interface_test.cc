#include "agent/inventory/management_interface.h"

#include <algorithm>
#include <map>

#include "agent/inventory/ifaddrs_address_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::HasSubstr;

// A fixed interface list.
class FakeAddressSource : public AddressSource {
 public:
  explicit FakeAddressSource(absl::StatusOr<std::vector<InterfaceAddress>> addresses)
      : addresses_(std::move(addresses)) {}
  absl::StatusOr<std::vector<InterfaceAddress>> List() override { return addresses_; }

 private:
  absl::StatusOr<std::vector<InterfaceAddress>> addresses_;
};

// A fixed name table; unknown names are NotFound.
class FakeHostResolver : public HostResolver {
 public:
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) override {
    auto it = names_.find(host);
    if (it == names_.end())
      return absl::NotFoundError("cannot resolve '" + host + "': Name or service not known");
    return it->second;
  }

 private:
  std::map<std::string, std::vector<std::string>> names_ = {
      {"localhost", {"::1", "127.0.0.1"}},
      {"node01", {"10.0.0.5"}},
      {"elsewhere", {"10.9.9.9"}},
  };
};

class ManagementNetdevTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::string> Netdev(absl::string_view host) {
    return ManagementNetdev(host, addresses_, resolver_);
  }
  FakeAddressSource addresses_{std::vector<InterfaceAddress>{
      {"lo", "127.0.0.1"},
      {"lo", "::1"},
      {"eno1", "10.0.0.5", 24},
      {"eno1", "fe80::1e34:daff:fe5a:1b2c"},
      {"ib0", "192.168.100.11"},
  }};
  FakeHostResolver resolver_;
};

TEST_F(ManagementNetdevTest, ManagementAddressKeepsThePrefixLength) {
  absl::StatusOr<InterfaceAddress> address =
      ManagementAddress("10.0.0.5:7070", addresses_, resolver_);
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->netdev, "eno1");
  EXPECT_EQ(address->address, "10.0.0.5");
  EXPECT_EQ(address->prefix_length, 24);
}

TEST_F(ManagementNetdevTest, AddressLiterals) {
  EXPECT_EQ(*Netdev("127.0.0.1"), "lo");
  EXPECT_EQ(*Netdev("10.0.0.5"), "eno1");
  EXPECT_EQ(*Netdev("192.168.100.11"), "ib0");
  EXPECT_EQ(*Netdev("::1"), "lo");
  EXPECT_EQ(*Netdev("fe80::1e34:daff:fe5a:1b2c%eno1"), "eno1");
}

TEST_F(ManagementNetdevTest, PortsBracketsAndMappedAddresses) {
  EXPECT_EQ(*Netdev("10.0.0.5:7070"), "eno1");
  EXPECT_EQ(*Netdev("[::1]:7070"), "lo");
  EXPECT_EQ(*Netdev("[::1]"), "lo");
  EXPECT_EQ(*Netdev("::ffff:10.0.0.5"), "eno1");
  EXPECT_EQ(*Netdev(" 10.0.0.5 "), "eno1");
}

TEST_F(ManagementNetdevTest, NamesResolveThroughTheResolver) {
  EXPECT_EQ(*Netdev("localhost"), "lo");
  EXPECT_EQ(*Netdev("node01:7070"), "eno1");
}

TEST_F(ManagementNetdevTest, WildcardIsNotFound) {
  for (const char* wildcard : {"0.0.0.0", "::", "[::]:7070"}) {
    auto netdev = Netdev(wildcard);
    ASSERT_TRUE(absl::IsNotFound(netdev.status())) << wildcard << ": " << netdev.status();
    EXPECT_THAT(std::string(netdev.status().message()),
                HasSubstr("the agent listens on all interfaces and the controller dialed "));
  }
  EXPECT_THAT(std::string(Netdev("0.0.0.0").status().message()), HasSubstr("dialed 0.0.0.0:"));
}

TEST_F(ManagementNetdevTest, ForeignAddressIsNotFoundNamingIt) {
  auto netdev = Netdev("10.9.9.9");
  ASSERT_TRUE(absl::IsNotFound(netdev.status())) << netdev.status();
  std::string message(netdev.status().message());
  EXPECT_THAT(message, HasSubstr("10.9.9.9"));
  EXPECT_THAT(message, HasSubstr("eno1 10.0.0.5"));
  auto named = Netdev("elsewhere");
  ASSERT_TRUE(absl::IsNotFound(named.status()));
  EXPECT_THAT(std::string(named.status().message()), HasSubstr("elsewhere (10.9.9.9)"));
}

TEST_F(ManagementNetdevTest, UnresolvableNameAndEmptyHost) {
  auto netdev = Netdev("no-such-node");
  ASSERT_TRUE(absl::IsNotFound(netdev.status()));
  EXPECT_THAT(std::string(netdev.status().message()), HasSubstr("no-such-node"));
  EXPECT_TRUE(absl::IsInvalidArgument(Netdev("").status()));
}

TEST(ManagementNetdevErrorTest, AddressSourceFailurePropagates) {
  FakeAddressSource addresses(absl::UnavailableError("getifaddrs: Operation not permitted"));
  FakeHostResolver resolver;
  auto netdev = ManagementNetdev("10.0.0.5", addresses, resolver);
  EXPECT_TRUE(absl::IsUnavailable(netdev.status())) << netdev.status();
  EXPECT_THAT(std::string(netdev.status().message()), HasSubstr("10.0.0.5"));
}

TEST(IfaddrsAddressSourceTest, ListsLoopbackOnThisHost) {
  IfaddrsAddressSource addresses;
  auto list = addresses.List();
  ASSERT_TRUE(list.ok()) << list.status();
  bool has_loopback = std::any_of(list->begin(), list->end(), [](const InterfaceAddress& a) {
    return a.address == "127.0.0.1";
  });
  if (!has_loopback) SKIP_FOR_ENVIRONMENT("ipv4-loopback") << "no 127.0.0.1 on this host";
  GetaddrinfoHostResolver resolver;
  auto netdev = ManagementNetdev("127.0.0.1", addresses, resolver);
  ASSERT_TRUE(netdev.ok()) << netdev.status();
  EXPECT_FALSE(netdev->empty());
  auto by_name = ManagementNetdev("localhost", addresses, resolver);
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(*by_name, *netdev);
}

TEST(GetaddrinfoHostResolverTest, NumericAndUnknownNames) {
  GetaddrinfoHostResolver resolver;
  auto numeric = resolver.Resolve("10.0.0.5");
  ASSERT_TRUE(numeric.ok()) << numeric.status();
  EXPECT_EQ(*numeric, std::vector<std::string>{"10.0.0.5"});
  EXPECT_FALSE(resolver.Resolve("no-such-host.invalid").ok());
}

}  // namespace
}  // namespace clustercert::agent::inventory
