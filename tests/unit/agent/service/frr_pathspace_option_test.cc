// --frr-pathspace goes to vtysh as an argument and into FRR's paths
// (/var/run/frr/NAME, /etc/frr/NAME): only plain instance names pass.
#include <string>
#include <vector>

#include "agent/service/agent_options.h"
#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

AgentFlags LoopbackFlags(const std::string& pathspace) {
  AgentFlags flags;
  flags.listen = "127.0.0.1:7070";
  flags.insecure = true;
  flags.frr_pathspace = pathspace;
  return flags;
}

TEST(FrrPathspaceOptionTest, PlainNamesPassAndEmptyMeansTheHostsFrr) {
  for (const std::string& name :
       std::vector<std::string>{"", "lab1", "cf123host1", "rack-7_leaf", std::string(32, 'a')}) {
    auto options = ValidateAgentFlags(LoopbackFlags(name), "host");
    ASSERT_TRUE(options.ok()) << name << ": " << options.status();
    EXPECT_EQ(options->frr_pathspace, name);
  }
}

TEST(FrrPathspaceOptionTest, PathsOptionsAndOddCharactersAreRefusedWithTheFix) {
  for (const std::string& name : std::vector<std::string>{"../etc", "a/b", "-c", "lab 1", "lab;1",
                                                          "lab.1", "ü", std::string(33, 'a')}) {
    auto options = ValidateAgentFlags(LoopbackFlags(name), "host");
    ASSERT_FALSE(options.ok()) << name;
    EXPECT_NE(options.status().message().find("--frr-pathspace"), std::string::npos);
    EXPECT_NE(options.status().message().find("-N NAME"), std::string::npos);
  }
}

}  // namespace
}  // namespace clustercert::agent
