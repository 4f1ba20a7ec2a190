#include "controller/phases/progress_bar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "controller/phases/progress.h"

namespace clustercert::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A FILE* whose bytes the test can read (open_memstream), and a clock it sets.
class ProgressBarTest : public ::testing::Test {
 protected:
  ProgressBarTest() : file_(open_memstream(&buffer_, &size_)) {}
  ~ProgressBarTest() override {
    std::fclose(file_);
    std::free(buffer_);
  }

  Progress MakeProgress(bool tty, bool quiet = false) {
    return Progress(file_, quiet, tty, [this] { return now_; });
  }
  std::string Output() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }
  void Wait(absl::Duration duration) { now_ += duration; }

  std::FILE* file_;
  char* buffer_ = nullptr;
  size_t size_ = 0;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
};

TEST(FormatShortDurationTest, ShowsTwoUnitsAtMost) {
  EXPECT_EQ(FormatShortDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatShortDuration(absl::Milliseconds(45'900)), "45s");
  EXPECT_EQ(FormatShortDuration(absl::Seconds(59)), "59s");
  EXPECT_EQ(FormatShortDuration(absl::Seconds(60)), "1m00s");
  EXPECT_EQ(FormatShortDuration(absl::Seconds(125)), "2m05s");
  EXPECT_EQ(FormatShortDuration(absl::Seconds(3599)), "59m59s");
  EXPECT_EQ(FormatShortDuration(absl::Minutes(62) + absl::Seconds(30)), "1h02m");
  EXPECT_EQ(FormatShortDuration(absl::Hours(27)), "27h00m");
  EXPECT_EQ(FormatShortDuration(absl::Seconds(-5)), "0s");  // a clock that stepped back
}

TEST_F(ProgressBarTest, TerminalRedrawsOneLineWithTheEta) {
  Progress progress = MakeProgress(/*tty=*/true);
  progress.StartBar("pairwise", 24, "cells");
  EXPECT_EQ(Output(), "\r\033[2K[pairwise] [....................] 0/24 cells  0s elapsed  ETA --");

  Wait(absl::Seconds(125));
  progress.Advance("pairwise", 12, 24, "node1->node3 write_bw");
  // 125 s for 12 cells: 125 s more for the other 12.
  EXPECT_THAT(Output(), HasSubstr("\r\033[2K[pairwise] [##########..........] 12/24 cells  "
                                  "2m05s elapsed  ETA 2m05s  node1->node3 write_bw"));
  EXPECT_THAT(Output(), Not(HasSubstr("\n")));

  Wait(absl::Seconds(5));
  progress.Advance("pairwise", 18, 24, "node2->node4 write_bw");
  EXPECT_THAT(Output(), HasSubstr("18/24 cells  2m10s elapsed  ETA 43s  node2->node4 write_bw"));

  Wait(absl::Seconds(50));
  progress.Advance("pairwise", 24, 24, "node4->node1 send_lat");
  const std::string output = Output();
  EXPECT_THAT(output, HasSubstr("[####################] 24/24 cells  3m00s elapsed  done  "
                                "node4->node1 send_lat\n"));
  EXPECT_EQ(output.back(), '\n');

  // The bar is gone: a line after it is just a line.
  progress.Line("pairwise", "0 failing");
  EXPECT_TRUE(Output().ends_with("send_lat\n[pairwise] 0 failing\n")) << Output();
}

TEST_F(ProgressBarTest, LineWhileABarShowsClearsItAndDrawsItAgain) {
  Progress progress = MakeProgress(/*tty=*/true);
  progress.StartBar("pairwise", 4, "cells");
  Wait(absl::Seconds(10));
  progress.Advance("pairwise", 1, 4, "node1->node2 write_bw");
  Wait(absl::Seconds(5));
  progress.Line("pairwise", "round 2/2: 2 cell(s)");
  EXPECT_TRUE(Output().ends_with(
      "node1->node2 write_bw"
      "\r\033[2K[pairwise] round 2/2: 2 cell(s)\n"
      "[pairwise] [#####...............] 1/4 cells  15s elapsed  ETA 45s  node1->node2 write_bw"))
      << Output();

  progress.Block("# a table\n# of rows\n");
  EXPECT_THAT(Output(), HasSubstr("\r\033[2K# a table\n# of rows\n[pairwise] [#####"));
}

TEST_F(ProgressBarTest, EndBarLeavesAStoppedBarOnItsOwnLine) {
  Progress progress = MakeProgress(/*tty=*/true);
  progress.StartBar("collectives", 10, "sizes");
  progress.Advance("collectives", 3, 10, "1 MiB");
  progress.EndBar();
  progress.Line("collectives", "sweep failed");
  EXPECT_TRUE(Output().ends_with("ETA 0s  1 MiB\n[collectives] sweep failed\n")) << Output();
  progress.EndBar();  // nothing left to end
  EXPECT_TRUE(Output().ends_with("sweep failed\n"));
}

TEST_F(ProgressBarTest, LogGetsAPlainLinePerTenPercentStep) {
  Progress progress = MakeProgress(/*tty=*/false);
  progress.StartBar("pairwise", 24, "cells");
  for (int done = 1; done <= 24; ++done) {
    Wait(absl::Seconds(10));
    progress.Advance("pairwise", done, 24, "cell");
  }
  const std::string output = Output();
  EXPECT_THAT(output, Not(HasSubstr("\r")));
  EXPECT_THAT(output, Not(HasSubstr("\033")));
  const std::vector<std::string> lines = absl::StrSplit(output, '\n', absl::SkipEmpty());
  // The start, each step a cell crosses (3, 5, 8, 10, 12, 15, 17, 20, 22 of 24), the end.
  EXPECT_EQ(lines.size(), 11u) << output;
  EXPECT_EQ(lines.front(), "[pairwise] 0/24 cells, 0s elapsed, ETA --");
  EXPECT_THAT(output, HasSubstr("\n[pairwise] 12/24 cells, 2m00s elapsed, ETA 2m00s\n"));
  EXPECT_EQ(lines.back(), "[pairwise] 24/24 cells, 4m00s elapsed, done");
}

TEST_F(ProgressBarTest, LogGetsAPlainLineEveryThirtySecondsOfSlowProgress) {
  Progress progress = MakeProgress(/*tty=*/false);
  progress.StartBar("collectives", 100, "sizes");
  for (int done = 1; done <= 4; ++done) {
    Wait(absl::Seconds(40));  // each size slower than the period, none a new 10% step
    progress.Advance("collectives", done, 100, "");
  }
  Wait(absl::Seconds(10));
  progress.Advance("collectives", 5, 100, "");  // 10 s after the last line: not yet
  progress.Advance("collectives", 5, 100, "");  // no progress: never a repeat
  const std::vector<std::string> lines = absl::StrSplit(Output(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << Output();
  EXPECT_EQ(lines[4], "[collectives] 4/100 sizes, 2m40s elapsed, ETA 1h04m");
}

TEST_F(ProgressBarTest, LogSaysWhereAnEndedBarStopped) {
  Progress progress = MakeProgress(/*tty=*/false);
  progress.StartBar("collectives", 10, "sizes");
  Wait(absl::Seconds(7));
  progress.Advance("collectives", 1, 10, "");
  Wait(absl::Seconds(3));
  progress.EndBar();
  EXPECT_TRUE(Output().ends_with("\n[collectives] stopped at 1/10 sizes, 10s elapsed\n"))
      << Output();
}

TEST_F(ProgressBarTest, AdvanceWithoutStartBarStartsOne) {
  Progress progress = MakeProgress(/*tty=*/false);
  progress.Advance("pairwise", 1, 2, "node1->node2 write_bw");
  Wait(absl::Seconds(4));
  progress.Advance("pairwise", 2, 2, "node2->node1 write_bw");
  EXPECT_EQ(Output(),
            "[pairwise] 1/2, 0s elapsed, ETA 0s\n"
            "[pairwise] 2/2, 4s elapsed, done\n");
}

TEST_F(ProgressBarTest, AReportOutOfOrderDoesNotGoBackwards) {
  Progress progress = MakeProgress(/*tty=*/true);
  progress.StartBar("pairwise", 10, "cells");
  progress.Advance("pairwise", 5, 10, "fifth");
  progress.Advance("pairwise", 4, 10, "fourth");  // a slower thread's report
  EXPECT_TRUE(Output().ends_with("5/10 cells  0s elapsed  ETA 0s  fourth")) << Output();
}

TEST_F(ProgressBarTest, QuietPrintsNothing) {
  for (bool tty : {true, false}) {
    Progress progress = MakeProgress(tty, /*quiet=*/true);
    progress.StartBar("pairwise", 2, "cells");
    progress.Advance("pairwise", 1, 2, "a");
    progress.Line("pairwise", "text");
    progress.Block("block\n");
    progress.EndBar();
  }
  EXPECT_EQ(Output(), "");
}

TEST_F(ProgressBarTest, DefaultConstructorWritesPlainLinesOffATerminal) {
  Progress progress(file_);  // a memory stream is no terminal
  progress.StartBar("pairwise", 2, "cells");
  progress.Line("pairwise", "round 1/1");
  EXPECT_THAT(Output(), HasSubstr("[pairwise] 0/2 cells, 0s elapsed, ETA --\n"
                                  "[pairwise] round 1/1\n"));
  EXPECT_THAT(Output(), Not(HasSubstr("\r")));
}

}  // namespace
}  // namespace clustercert::controller
