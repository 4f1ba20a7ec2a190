// verify and the cable plan (format 8): the certificate carries fabric.cabling's
// bytes, and the recomputation reads those, never the file the path names
// now (gone, or edited since the run).
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_join.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/certificate/verdict_recompute.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/certificate/matrix_certificate.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kPlan[] = R"(cluster: cabled-pair
fabric:
  type: ethernet
  min_netdev_mtu: 1500
  cabling: cables.csv
nodes:
  - {name: node1, agent: "127.0.0.1:17071", data_ip: 10.0.0.1}
  - {name: node2, agent: "127.0.0.1:17072", data_ip: 10.0.0.2}
)";

constexpr char kCables[] =
    "node,device,switch,port\n"
    "node1,data0,leaf1,swp1\n"
    "node2,data0,leaf1,swp2\n";

class CablingRecomputeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("cabling_recompute_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "cables.csv") << kCables;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // What the run wrote: the plan and, as format 8 does, the CSV's bytes.
  v1::Certificate Written() const {
    v1::Certificate certificate = testing::MatrixCertificate(
        kPlan, (dir_ / "plan.yaml").string(), "cabled-pair", {}, kCertificateFormatVersion);
    certificate.set_cabling_csv(kCables);
    return certificate;
  }

  fs::path dir_;
};

TEST_F(CablingRecomputeTest, TheEmbeddedCablePlanIsReadNotTheFile) {
  const v1::Certificate certificate = Written();
  // The CSV is gone (the certificate was copied to the customer's auditor):
  // the recomputation still has the plan the run judged against.
  fs::remove(dir_ / "cables.csv");
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  EXPECT_TRUE(recheck.differences.empty()) << absl::StrJoin(recheck.differences, "\n");
}

TEST_F(CablingRecomputeTest, AnEditedEmbeddedCablePlanIsJudgedAsEdited) {
  v1::Certificate certificate = Written();
  // The file on disk stays right; the bytes in the certificate name a node
  // the plan does not have, and that is what verify must read.
  certificate.set_cabling_csv("node,device,switch,port\nnode9,data0,leaf1,swp1\n");
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  ASSERT_FALSE(recheck.differences.empty());
  EXPECT_THAT(absl::StrJoin(recheck.differences, "\n"), HasSubstr("node9"));
}

}  // namespace
}  // namespace clustercert::controller
