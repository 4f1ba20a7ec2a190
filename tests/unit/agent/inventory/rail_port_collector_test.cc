// RailPortCollector with fake sources: which ports a CablingQuery names,
// what each gets, the one shared LLDP wait, InfiniBand through a canned
// smpquery, and ValidateCablingQuery's bounds.
#include "agent/inventory/rail_port_collector.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/inventory/ib_neighbor.h"
#include "gtest/gtest.h"
#include "tests/support/fake_command_runner.h"
#include "tests/support/simulated_clock.h"

namespace clustercert::agent::inventory {
namespace {

class FakeNeighbors final : public NeighborSource {
 public:
  std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> Read(
      const std::vector<std::string>& netdevs, absl::Time started, absl::Duration wait) override {
    calls.push_back(netdevs);
    this->wait = wait;
    this->started = started;
    std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> result;
    for (const std::string& netdev : netdevs) {
      auto found = answers.find(netdev);
      if (found != answers.end()) result.emplace(netdev, found->second);
    }
    return result;
  }
  std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> answers;
  std::vector<std::vector<std::string>> calls;
  absl::Duration wait;
  absl::Time started;
};

class FakeModules final : public ModuleSource {
 public:
  absl::StatusOr<v1::CableModule> Read(const std::string& netdev) override {
    if (netdev == "eth1") return absl::NotFoundError("eth1 has no module plugged in");
    v1::CableModule module;
    module.set_serial(absl::StrCat("SN-", netdev));
    return module;
  }
};

v1::LinkNeighbor Neighbor(const std::string& switch_name, const std::string& port) {
  v1::LinkNeighbor neighbor;
  neighbor.set_switch_name(switch_name);
  neighbor.set_port(port);
  neighbor.set_source("lldpcli");
  return neighbor;
}

void AddDevice(v1::Inventory& inventory, const std::string& name, const std::string& link_layer,
               const std::string& netdev) {
  v1::RdmaDevice* device = inventory.add_rdma_devices();
  device->set_name(name);
  v1::RdmaPort* port = device->add_ports();
  port->set_port(1);
  port->set_link_layer(link_layer);
  port->set_netdev(netdev);
}

v1::Inventory Host() {
  v1::Inventory inventory;
  inventory.set_sysfs_root("/");
  AddDevice(inventory, "mlx5_0", "Ethernet", "eth0");
  AddDevice(inventory, "mlx5_1", "Ethernet", "eth1");
  AddDevice(inventory, "mlx5_2", "InfiniBand", "");
  v1::Netdev* data = inventory.add_netdevs();
  data->set_name("eth0");
  data->add_cidrs("10.0.0.5/24");
  return inventory;
}

v1::CablingQuery Query(std::vector<std::string> rails, std::string data_ip = "") {
  v1::CablingQuery query;
  for (auto& rail : rails) query.add_rails(std::move(rail));
  query.set_data_ip(std::move(data_ip));
  query.set_lldp_wait_ms(31000);
  return query;
}

std::string UnknownReason(const v1::RailPort& port, const std::string& field) {
  for (const v1::Unknown& unknown : port.unknowns()) {
    if (unknown.field() == field) return unknown.reason();
  }
  return "";
}

TEST(RailPortCollectorTest, EachRailGetsItsNeighbourAndModuleInOneWait) {
  FakeNeighbors neighbors;
  neighbors.answers.emplace("eth0", Neighbor("leaf1", "swp1"));
  neighbors.answers.emplace(
      "eth1", absl::NotFoundError("no LLDP frame on eth1 within 31 s: LLDP may be off"));
  FakeModules modules;
  testing::SimulatedClock clock;
  RailPortCollector collector({&neighbors, &modules, nullptr, ""}, clock);
  const std::vector<v1::RailPort> ports =
      collector.Collect(Query({"mlx5_0", "mlx5_1", "mlx5_0"}), Host());
  ASSERT_EQ(ports.size(), 2u);
  ASSERT_EQ(neighbors.calls.size(), 1u) << "one wait for every rail";
  EXPECT_EQ(neighbors.calls[0], (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(neighbors.wait, absl::Seconds(31));
  EXPECT_EQ(neighbors.started, clock.Now());

  EXPECT_EQ(ports[0].rail(), "mlx5_0");
  EXPECT_EQ(ports[0].device(), "mlx5_0");
  EXPECT_EQ(ports[0].port(), 1u);
  EXPECT_EQ(ports[0].netdev(), "eth0");
  EXPECT_EQ(ports[0].neighbor().switch_name(), "leaf1");
  EXPECT_EQ(ports[0].module().serial(), "SN-eth0");
  EXPECT_EQ(ports[0].unknowns_size(), 0);

  EXPECT_FALSE(ports[1].has_neighbor());
  EXPECT_EQ(UnknownReason(ports[1], "neighbor"),
            "no LLDP frame on eth1 within 31 s: LLDP may be off");
  EXPECT_FALSE(ports[1].has_module());
  EXPECT_EQ(UnknownReason(ports[1], "module"), "eth1 has no module plugged in");
}

TEST(RailPortCollectorTest, EthernetFabricTakesTheNetdevHoldingDataIp) {
  FakeNeighbors neighbors;
  neighbors.answers.emplace("eth0", Neighbor("leaf2", "swp7"));
  testing::SimulatedClock clock;
  RailPortCollector collector({&neighbors, nullptr, nullptr, ""}, clock);
  std::vector<v1::RailPort> ports = collector.Collect(Query({}, "10.0.0.5"), Host());
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].rail(), "eth0");
  EXPECT_EQ(ports[0].device(), "");
  EXPECT_EQ(ports[0].netdev(), "eth0");
  EXPECT_EQ(ports[0].neighbor().port(), "swp7");
  EXPECT_EQ(UnknownReason(ports[0], "module"), "this agent has no module-EEPROM reader");

  ports = collector.Collect(Query({}, "10.9.9.9"), Host());
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_NE(UnknownReason(ports[0], "neighbor")
                .find("no netdev of this host holds the data "
                      "address 10.9.9.9"),
            std::string::npos);
}

TEST(RailPortCollectorTest, UnknownRailAndMissingSourcesAreUnknownWithTheReason) {
  testing::SimulatedClock clock;
  RailPortCollector collector({}, clock);
  const std::vector<v1::RailPort> ports = collector.Collect(Query({"mlx5_9", "mlx5_0"}), Host());
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_NE(UnknownReason(ports[0], "neighbor").find("mlx5_9 is not an RDMA device of this host"),
            std::string::npos);
  EXPECT_NE(UnknownReason(ports[0], "module").find("mlx5_9 is not an RDMA device"),
            std::string::npos);
  EXPECT_EQ(UnknownReason(ports[1], "neighbor"), "this agent has no LLDP reader");
}

TEST(RailPortCollectorTest, CapturedTreeAnswersUnknownForEveryRail) {
  FakeNeighbors neighbors;
  testing::SimulatedClock clock;
  RailPortCollector collector({&neighbors, nullptr, nullptr, "a captured tree: not this host"},
                              clock);
  v1::Inventory inventory = Host();
  inventory.set_sysfs_root("/captures/node7");
  const std::vector<v1::RailPort> ports = collector.Collect(Query({"mlx5_0", "mlx5_2"}), inventory);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_TRUE(neighbors.calls.empty());
  for (const v1::RailPort& port : ports) {
    EXPECT_EQ(UnknownReason(port, "neighbor"), "a captured tree: not this host");
    EXPECT_EQ(UnknownReason(port, "module"), "a captured tree: not this host");
    EXPECT_EQ(port.unknowns(0).path(), "/captures/node7");
  }
}

constexpr char kNodeInfo[] =
    "# Node info: DR path slid 65535; dlid 65535; 0,1\n"
    "BaseVers:........................1\n"
    "NodeType:........................Switch\n"
    "NumPorts:........................41\n"
    "SystemGuid:......................0xb83fd20300a5a2c0\n"
    "Guid:............................0xb83fd20300a5a2c0\n"
    "PortGuid:........................0xb83fd20300a5a2c0\n"
    "LocalPort:.......................23\n";
constexpr char kNodeDesc[] =
    "# Node Description: DR path slid 65535; dlid 65535; 0,1\n"
    "Node Description:................MF0;leaf07:MQM8790/U1\n";

TEST(RailPortCollectorTest, InfiniBandPortAsksSmpqueryForTheFarEnd) {
  testing::FakeCommandRunner runner;
  runner.AnswerText("smpquery -C mlx5_2 -P 1 -D nodeinfo 0,1", kNodeInfo);
  runner.AnswerText("smpquery -C mlx5_2 -P 1 -D nodedesc 0,1", kNodeDesc);
  testing::SimulatedClock clock;
  RailPortCollector collector({nullptr, nullptr, &runner, ""}, clock);
  const std::vector<v1::RailPort> ports = collector.Collect(Query({"mlx5_2"}), Host());
  ASSERT_EQ(ports.size(), 1u);
  const v1::LinkNeighbor& neighbor = ports[0].neighbor();
  EXPECT_EQ(neighbor.switch_name(), "MF0;leaf07:MQM8790/U1");
  EXPECT_EQ(neighbor.chassis_id(), "0xb83fd20300a5a2c0");
  EXPECT_EQ(neighbor.remote_port_number(), 23u);
  EXPECT_EQ(neighbor.port(), "23");
  EXPECT_EQ(neighbor.source(), "smpquery");
  EXPECT_EQ(ports[0].netdev(), "");
  EXPECT_NE(UnknownReason(ports[0], "module").find("no netdev"), std::string::npos);
  for (absl::Duration timeout : runner.timeouts()) EXPECT_EQ(timeout, IbNeighborReader::kTimeout);
}

TEST(RailPortCollectorTest, InfiniBandWithoutInfinibandDiagsOrWithGarbage) {
  testing::FakeCommandRunner missing;  // every command NotFound
  testing::SimulatedClock clock;
  std::vector<v1::RailPort> ports =
      RailPortCollector({nullptr, nullptr, &missing, ""}, clock).Collect(Query({"mlx5_2"}), Host());
  EXPECT_NE(UnknownReason(ports[0], "neighbor").find("install infiniband-diags"),
            std::string::npos);

  testing::FakeCommandRunner garbage;
  garbage.AnswerText("smpquery -C mlx5_2 -P 1 -D nodeinfo 0,1",
                     std::string("Guid:....0xzz\0\nLocalPort:...999999\n", 36));
  ports =
      RailPortCollector({nullptr, nullptr, &garbage, ""}, clock).Collect(Query({"mlx5_2"}), Host());
  EXPECT_NE(UnknownReason(ports[0], "neighbor").find("printed no Guid and LocalPort"),
            std::string::npos);

  testing::FakeCommandRunner failing;
  failing.AnswerText("smpquery -C mlx5_2 -P 1 -D nodeinfo 0,1", "", 255,
                     "smpquery: iberror: failed: Failed to open 'mlx5_2' port '1'\n");
  ports =
      RailPortCollector({nullptr, nullptr, &failing, ""}, clock).Collect(Query({"mlx5_2"}), Host());
  EXPECT_NE(UnknownReason(ports[0], "neighbor").find("exited with status 255"), std::string::npos);
}

TEST(IbNeighborReaderTest, RefusesADeviceNameThatIsNotOne) {
  testing::FakeCommandRunner runner;
  IbNeighborReader reader(runner);
  EXPECT_TRUE(absl::IsInvalidArgument(reader.Read("-C", 1, absl::Seconds(1)).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(reader.Read("mlx5_0", 0, absl::Seconds(1)).status()));
  EXPECT_TRUE(runner.calls().empty());
}

TEST(CablingQueryTest, Bounds) {
  EXPECT_TRUE(ValidateCablingQuery(Query({"mlx5_0"})).ok());
  EXPECT_TRUE(ValidateCablingQuery(Query({}, "fd00::5")).ok());
  auto refused = [](const v1::CablingQuery& query, const std::string& words) {
    absl::Status status = ValidateCablingQuery(query);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << words;
    EXPECT_NE(status.message().find(words), std::string::npos) << status;
  };
  std::vector<std::string> many(65, "mlx5_0");
  refused(Query(many), "rails '65' is more than 64");
  refused(Query({"mlx5_0; reboot"}), "is not an RDMA device name");
  refused(Query({"-P"}), "is not an RDMA device name");
  refused(Query({std::string(65, 'a')}), "is not an RDMA device name");
  refused(Query({}, "node7.example"), "is not a literal IP address");
  refused(Query({}), "names no rail");
  v1::CablingQuery query = Query({"mlx5_0"});
  query.set_lldp_wait_ms(999);
  refused(query, "must be 1000 to 120000");
  query.set_lldp_wait_ms(120001);
  refused(query, "must be 1000 to 120000");
}

}  // namespace
}  // namespace clustercert::agent::inventory
