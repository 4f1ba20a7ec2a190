#include "common/log_setup.h"

#include <memory>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"

namespace clustercert {
namespace {

using ::testing::ContainsRegex;
using ::testing::EndsWith;
using ::testing::HasSubstr;

std::string LogOneLine(LogFormat format, const std::string& message) {
  std::ostringstream out;
  spdlog::logger logger("node-agent", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  ApplyLogFormat(logger, format);
  logger.warn("{}", message);
  return out.str();
}

TEST(LogSetupTest, JsonLinesEscapeWhatACallerPutInTheMessage) {
  const std::string line = LogOneLine(LogFormat::kJson, "say \"hi\" \\ then\nforge a line");
  EXPECT_THAT(line, ContainsRegex(R"(^\{"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z",)"));
  EXPECT_THAT(line, EndsWith(R"("level":"warning","logger":"node-agent",)"
                             R"("msg":"say \"hi\" \\ then\u000aforge a line"})"
                             "\n"));
}

TEST(LogSetupTest, TextLinesKeepSpdlogsDefaultLook) {
  EXPECT_THAT(LogOneLine(LogFormat::kText, "agent up"),
              HasSubstr("[node-agent] [warning] agent up"));
}

TEST(LogSetupTest, FlagsAreCheckedAndNamedWhenWrong) {
  EXPECT_EQ(*ParseLogLevel("debug"), spdlog::level::debug);
  EXPECT_EQ(*ParseLogLevel("warn"), spdlog::level::warn);
  EXPECT_EQ(*ParseLogLevel("error"), spdlog::level::err);
  EXPECT_EQ(ParseLogLevel("loud").status().message(),
            "--log-level is 'loud'; it must be trace, debug, info, warn or error");
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  EXPECT_EQ(ParseLogFormat("xml").status().message(),
            "--log-format is 'xml'; it must be text or json");
}

// A command-line program's diagnostics: the program's name, "warning: " for
// warnings, the sentence; on stderr, flushed with each line.
TEST(LogSetupTest, CommandLineDiagnosticsReadLikeTheProgramsOwnLines) {
  ::testing::internal::CaptureStderr();
  CommandLineLogger("clitest").error("the plan has errors; nothing ran");
  CommandLineLogger("clitest").warn("{} is older than {}", "a.json", "b.json");
  CommandLineLogger("clitest").info("SIGINT: stopping");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "clitest: the plan has errors; nothing ran\n"
            "clitest: warning: a.json is older than b.json\n"
            "clitest: SIGINT: stopping\n");
  EXPECT_EQ(&CommandLineLogger("clitest"), &CommandLineLogger("clitest"));
}

}  // namespace
}  // namespace clustercert
