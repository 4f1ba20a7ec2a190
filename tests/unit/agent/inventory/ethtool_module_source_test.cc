// The live module source (agent/inventory/ethtool_module_source.cc) against
// this host's kernel.
#include "agent/inventory/ethtool_module_source.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::HasSubstr;

// Loopback has no module: the kernel answers ETHTOOL_GMODULEINFO with
// EOPNOTSUPP, which must read as a port without a pluggable module.
TEST(IoctlModuleSource, LoopbackHasNoPluggableModule) {
  auto module = IoctlModuleSource().Read("lo");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(module.status().message(),
              HasSubstr("lo has no pluggable module the kernel can read (EOPNOTSUPP): a virtual "
                        "or on-board port"));
}

TEST(IoctlModuleSource, UnknownNetdevIsNotFound) {
  auto module = IoctlModuleSource().Read("ccnosuch36");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(module.status().message(), HasSubstr("ccnosuch36: no such netdev"));
}

TEST(IoctlModuleSource, HostileNamesAreRefusedUnprinted) {
  const std::vector<std::string> names = {"", "../eth0", "eth0:1", std::string(64, 'a'), "a b"};
  for (const std::string& name : names) {
    auto module = IoctlModuleSource().Read(name);
    ASSERT_FALSE(module.ok()) << name;
    EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument) << name;
    if (!name.empty()) {
      EXPECT_THAT(std::string(module.status().message()), ::testing::Not(HasSubstr(name)));
    }
  }
}

}  // namespace
}  // namespace clustercert::agent::inventory
