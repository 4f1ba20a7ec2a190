#include "tests/unit/controller/checks/fixture_collection.h"

#include <vector>

#include "agent/inventory/captured_port_attribute_source.h"
#include "agent/inventory/dcb_capture_source.h"
#include "agent/inventory/inventory_collector.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"

namespace clustercert::controller::checks::testing {
namespace {

class SyncedClock final : public agent::inventory::ClockSource {
 public:
  absl::StatusOr<agent::inventory::ClockReading> Read() override {
    agent::inventory::ClockReading reading;
    reading.synchronized = true;
    reading.est_error_us = 120;
    reading.max_error_us = 800;
    reading.unix_time_us = 1'800'000'000'000'000;
    reading.source = "fake";
    return reading;
  }
};

class ManagementAddresses final : public agent::inventory::AddressSource,
                                  public agent::inventory::HostResolver {
 public:
  explicit ManagementAddresses(std::string address) : address_(std::move(address)) {}
  absl::StatusOr<std::vector<agent::inventory::InterfaceAddress>> List() override {
    return std::vector<agent::inventory::InterfaceAddress>{{"lo", "127.0.0.1", 8},
                                                           {"eno1", address_, 24}};
  }
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) override {
    return std::vector<std::string>{host};
  }

 private:
  std::string address_;
};

class NoCommands final : public process::CommandRunner {
 public:
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration) override {
    return absl::NotFoundError(argv[0] + " must not run on a fixture");
  }
};

}  // namespace

v1::Inventory CollectFixtureHost(const std::string& root, const std::string& management_ip) {
  const std::string path = !root.empty() && root.front() == '/'
                               ? root
                               : std::string(CLUSTERCERT_FIXTURES) + "/sysfs/" + root;
  SysfsView view(path);
  agent::inventory::CapturedPortAttributeSource ports(view);
  agent::inventory::DcbCaptureSource dcb(view);
  SyncedClock clock;
  ManagementAddresses addresses(management_ip);
  NoCommands commands;
  agent::inventory::InventoryCollector collector(
      view,
      agent::inventory::InventoryProbes{&ports, &dcb, &clock, nullptr, &addresses, &addresses,
                                        &commands},
      management_ip);
  auto collected = collector.Collect(management_ip);
  EXPECT_TRUE(collected.ok()) << path << ": " << collected.status();
  return collected.ok() ? *collected : v1::Inventory();
}

}  // namespace clustercert::controller::checks::testing
