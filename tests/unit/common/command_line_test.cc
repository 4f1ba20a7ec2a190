#include "common/command_line.h"

#include "gtest/gtest.h"

namespace clustercert {
namespace {

CommandLine Make() {
  return CommandLine({{"listen", true, "HOST:PORT", "address", ""},
                      {"sysfs-root", true, "DIR", "root", "/"},
                      {"insecure", false, "", "plaintext", ""}});
}

TEST(CommandLineTest, DashedNamesBothValueFormsAndPositionals) {
  CommandLine cl = Make();
  const char* argv[] = {
      "prog", "run", "--listen", "127.0.0.1:1", "plan.yaml", "--sysfs-root=/x", "--insecure"};
  ASSERT_TRUE(cl.Parse(7, argv).ok());
  EXPECT_EQ(cl.Get("listen"), "127.0.0.1:1");
  EXPECT_EQ(cl.Get("sysfs-root"), "/x");
  EXPECT_TRUE(cl.GetBool("insecure"));
  EXPECT_EQ(cl.positional(), (std::vector<std::string>{"run", "plan.yaml"}));
}

TEST(CommandLineTest, DefaultsAndErrors) {
  CommandLine cl = Make();
  const char* none[] = {"prog"};
  ASSERT_TRUE(cl.Parse(1, none).ok());
  EXPECT_EQ(cl.Get("sysfs-root"), "/");
  EXPECT_FALSE(cl.Has("sysfs-root"));
  EXPECT_FALSE(cl.GetBool("insecure"));

  CommandLine unknown = Make();
  const char* bad[] = {"prog", "--sysfs_root", "/x"};
  auto status = unknown.Parse(3, bad);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("--sysfs-root"), absl::string_view::npos);

  CommandLine missing = Make();
  const char* tail[] = {"prog", "--listen"};
  EXPECT_FALSE(missing.Parse(2, tail).ok());
}

}  // namespace
}  // namespace clustercert
