// Issue 34, item 6: the plan is opened non-blocking and read only when it is
// a regular file, so a FIFO named as the plan cannot block `plan check` or
// `run` in open(2), and a device is refused rather than read.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "controller/plan/plan_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/finishes_within.h"
#include "tests/support/special_files.h"
#include "tests/support/temp_tree.h"

namespace clustercert::controller::plan {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Plan> LoadWithin(const std::string& path) {
  absl::StatusOr<Plan> plan = absl::UnknownError("did not finish");
  EXPECT_TRUE(clustercert::testing::FinishesWithin(
      clustercert::testing::kSpecialFileDeadline, [&] { plan = LoadPlan(path); },
      [path] { clustercert::testing::ReleaseFifoReader(path); }))
      << "loading " << path << " blocked";
  return plan;
}

TEST(PlanSpecialFilesTest, AFifoAsThePlanIsRefusedAtOnceNamingIt) {
  clustercert::testing::TempTree tree("plan_fifo");
  const std::string fifo = (tree.root() / "plan.yaml").string();
  ASSERT_TRUE(clustercert::testing::MakeFifo(fifo));
  const absl::StatusOr<Plan> plan = LoadWithin(fifo);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition) << plan.status();
  EXPECT_EQ(plan.status().message(),
            absl::StrCat(fifo,
                         ": cannot read plan: it is a FIFO, not a regular file; give the "
                         "path of the plan's YAML file"));
}

TEST(PlanSpecialFilesTest, ADeviceAsThePlanIsRefusedNotRead) {
  const absl::StatusOr<Plan> plan = LoadWithin("/dev/zero");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition) << plan.status();
  EXPECT_THAT(plan.status().message(),
              HasSubstr("/dev/zero: cannot read plan: it is a character device"));
}

TEST(PlanSpecialFilesTest, AFileOverTheLimitIsRefusedByItsSizeWithoutReadingItAll) {
  clustercert::testing::TempTree tree("plan_big");
  tree.Write("big.yaml", std::string(4096, '#'));
  PlanLimits limits;
  limits.max_bytes = 100;
  const absl::StatusOr<Plan> plan = LoadPlan((tree.root() / "big.yaml").string(), limits);
  EXPECT_THAT(plan.status().message(), HasSubstr("a plan may be at most 100 bytes"));
}

}  // namespace
}  // namespace clustercert::controller::plan
