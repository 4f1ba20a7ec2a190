#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/localisation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

v1::Finding Finding(const std::string& id, const std::string& status,
                    const std::string& node = "node3", const std::string& device = "mlx5_1") {
  v1::Finding finding;
  finding.set_id(id);
  v1::Finding::Status parsed = v1::Finding::unset_status;
  EXPECT_TRUE(v1::Finding::Status_Parse(status, &parsed)) << status;
  finding.set_status(parsed);
  finding.set_node(node);
  finding.set_device(device);
  return finding;
}

std::vector<std::string> Ids(const std::vector<v1::Finding>& findings) {
  std::vector<std::string> ids;
  for (const v1::Finding& f : findings)
    ids.push_back(absl::StrCat(f.id(), " ", v1::Finding::Status_Name(f.status())));
  return ids;
}

TEST(TriageFindingsTest, OrdersByTheSeedsTriageOrder) {
  std::vector<v1::Finding> inventory = {
      Finding("topology.gpu_nic", "fail"), Finding("clock.offset", "fail"),
      Finding("pcie.nic", "fail"),         Finding("port.rate", "fail"),
      Finding("qos.pfc", "unknown"),       Finding("qos.trust", "fail"),
      Finding("mtu.netdev", "fail"),       Finding("port.phys_state", "fail"),
      Finding("port.link_layer", "fail"),  Finding("mtu.active", "unknown"),
      Finding("port.state", "fail"),       Finding("pcie.gpu", "unknown"),
  };
  EXPECT_THAT(Ids(TriageFindings(inventory, "node3")),
              ElementsAre("mtu.netdev fail", "mtu.active unknown", "qos.trust fail",
                          "qos.pfc unknown", "port.rate fail", "port.phys_state fail",
                          "port.state fail", "pcie.nic fail", "pcie.gpu unknown",
                          "topology.gpu_nic fail", "clock.offset fail", "port.link_layer fail"));
}

TEST(TriageFindingsTest, KeepsOnlyThatNodesFailsAndUnknowns) {
  std::vector<v1::Finding> inventory = {
      Finding("mtu.netdev", "pass"),
      Finding("mtu.netdev", "fail", "node1"),
      Finding("qos.pfc", "skipped"),
      Finding("port.rate", "fail"),
  };
  EXPECT_THAT(Ids(TriageFindings(inventory, "node3")), ElementsAre("port.rate fail"));
  EXPECT_THAT(TriageFindings(inventory, "node9"), IsEmpty());
  EXPECT_THAT(TriageFindings({}, "node3"), IsEmpty());
}

}  // namespace
}  // namespace clustercert::controller::pairwise
