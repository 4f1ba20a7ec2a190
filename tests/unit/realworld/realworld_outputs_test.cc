// Verbatim outputs of the tools clustercert reads, published by other
// projects (../shared/realworld, sources in its SOURCES.md), read by the
// project's own parsers. The figures expected below were read off each file
// by eye and grep, not from the parsers, so each test proves the parser agrees
// with what the file shows. Every file in a directory the project has a parser
// for must have an expectation here: a new file with none fails
// EveryFileIsReadOrListed, so nothing there goes unread. Directories with no
// parser yet are listed on the test's output, not failed.
//
// The files live outside the tree. Where ../shared is absent (a clone outside
// this workspace) the tests skip with that reason, except under CI=true, where
// a missing corpus is a failure.

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "agent/inventory/captured_port_attribute_source.h"
#include "agent/inventory/frr_bgp_json.h"
#include "agent/inventory/lldpcli_json.h"
#include "agent/inventory/nvidia_smi_query.h"
#include "gtest/gtest.h"
#include "sweep/nccl_tests_output.h"
#include "sweep/nccl_transport_log.h"
#include "tests/support/environment_skip.h"

namespace clustercert {
namespace {

namespace fs = std::filesystem;

// CLUSTERCERT_REALWORLD names another copy (to try the test on a corpus
// with a file added or removed); by default the workspace's, beside the tree.
fs::path RealworldDir() {
  if (const char* other = std::getenv("CLUSTERCERT_REALWORLD"); other != nullptr) return other;
  return fs::path(CLUSTERCERT_SOURCE_DIR).parent_path() / "shared" / "realworld";
}

// Skips the test when the corpus is absent; under CI=true that is a failure
// (tests/support/environment_skip.h: "realworld-corpus" is no allowed skip).
#define REQUIRE_REALWORLD()                                                           \
  do {                                                                                \
    if (!fs::is_directory(RealworldDir())) {                                          \
      SKIP_FOR_ENVIRONMENT("realworld-corpus")                                        \
          << RealworldDir().string()                                                  \
          << " is absent (a clone outside the clustercert workspace): the real tool " \
             "outputs cannot be read";                                                \
    }                                                                                 \
  } while (false)

std::string ReadRealworld(const std::string& relative) {
  std::ifstream file(RealworldDir() / relative, std::ios::binary);
  EXPECT_TRUE(file.good()) << relative;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// ---------------------------------------------------------------- nccl-tests

struct NcclTestsRowFigures {
  int64_t bytes;
  int64_t count;
  std::string redop;
  double oop_time_us, oop_algbw, oop_busbw;
  double ip_time_us, ip_algbw, ip_busbw;
  int64_t wrong;  // both variants; -1: the check was off (N/A)
};

struct NcclTestsExpectation {
  std::string file;
  size_t rows;
  int ranks;
  int nodes;
  double average_busbw;  // "# Avg bus bandwidth"
  NcclTestsRowFigures last_row;
};

const std::vector<NcclTestsExpectation>& NcclTestsFiles() {
  static const auto* files = new std::vector<NcclTestsExpectation>{
      {"nccl-tests/new-format-2node-h100-gcp-a3mega-allreduce.txt",
       31,
       16,
       2,
       70.742,
       {8589934592, 2147483648, "sum", 47535, 180.71, 338.82, 47743, 179.92, 337.35, 0}},
      {"nccl-tests/old-format-1node-a100-sxm4-40gb-allgather.txt",
       34,
       8,
       1,
       58.2651,
       {8589934592, 268435456, "none", 33646, 255.31, 223.39, 32669, 262.94, 230.07, -1}},
      {"nccl-tests/old-format-1node-a100-sxm4-40gb-allreduce.txt",
       34,
       8,
       1,
       68.4048,
       {8589934592, 2147483648, "sum", 63896, 134.44, 235.26, 63959, 134.30, 235.03, -1}},
      {"nccl-tests/old-format-1node-a100-sxm4-40gb-alltoall.txt",
       34,
       8,
       1,
       58.6481,
       {8589934592, 268435456, "none", 33508, 256.36, 224.31, 33234, 258.47, 226.16, -1}},
      {"nccl-tests/old-format-1node-a100-sxm4-40gb-reducescatter.txt",
       34,
       8,
       1,
       60.168,
       {8589934592, 268435456, "sum", 32464, 264.60, 231.52, 32502, 264.29, 231.25, -1}},
  };
  return *files;
}

TEST(RealworldOutputsTest, NccltestsTablesReadWhole) {
  REQUIRE_REALWORLD();
  for (const NcclTestsExpectation& expected : NcclTestsFiles()) {
    SCOPED_TRACE(expected.file);
    const sweep::NcclTestsRun run = sweep::ParseNcclTestsOutput(ReadRealworld(expected.file));
    EXPECT_TRUE(run.errors.empty())
        << run.errors.size()
        << " rejected, first: " << (run.errors.empty() ? "" : run.errors.front());
    ASSERT_EQ(run.rows.size(), expected.rows);
    EXPECT_EQ(run.ranks, expected.ranks);
    EXPECT_EQ(run.nodes, expected.nodes);
    EXPECT_EQ(run.out_of_bounds, 0);
    ASSERT_TRUE(run.average_busbw_gbps.has_value());
    EXPECT_DOUBLE_EQ(*run.average_busbw_gbps, expected.average_busbw);
    // nccl-tests averages the unrounded busbw; the table prints it to 0.01,
    // so the rows' mean is within half a hundredth of the footer.
    const std::optional<double> mean = sweep::MeanBusBandwidthGbps(run.rows);
    ASSERT_TRUE(mean.has_value());
    EXPECT_NEAR(*mean, expected.average_busbw, 0.005);

    const sweep::SweepRow& last = run.rows.back();
    const NcclTestsRowFigures& want = expected.last_row;
    EXPECT_EQ(last.bytes, want.bytes);
    EXPECT_EQ(last.count, want.count);
    EXPECT_EQ(last.type, "float");
    EXPECT_EQ(last.redop, want.redop);
    EXPECT_EQ(last.root, -1);
    EXPECT_TRUE(last.has_in_place);
    EXPECT_DOUBLE_EQ(last.out_of_place.time_us, want.oop_time_us);
    EXPECT_DOUBLE_EQ(last.out_of_place.algbw_gbps, want.oop_algbw);
    EXPECT_DOUBLE_EQ(last.out_of_place.busbw_gbps, want.oop_busbw);
    EXPECT_DOUBLE_EQ(last.in_place.time_us, want.ip_time_us);
    EXPECT_DOUBLE_EQ(last.in_place.algbw_gbps, want.ip_algbw);
    EXPECT_DOUBLE_EQ(last.in_place.busbw_gbps, want.ip_busbw);
    EXPECT_EQ(last.out_of_place.wrong, want.wrong);
    EXPECT_EQ(last.in_place.wrong, want.wrong);
    for (const sweep::SweepRow& row : run.rows) EXPECT_EQ(row.redop, want.redop) << row.bytes;
  }
}

// ---------------------------------------------------------- NCCL INFO logs

struct NcclInfoExpectation {
  std::string file;
  std::string network;  // the first "Using network X"
  int net_ib;
  int net_ib_gdr;
  int net_socket;
  int intra_node;
  std::map<std::string, int> channels_by_via;  // the text after "via ", and how many lines
};

const std::vector<NcclInfoExpectation>& NcclInfoFiles() {
  static const auto* files = new std::vector<NcclInfoExpectation>{
      {"nccl-info/roce-2node-h-series-nccl2.29.3-8nic.txt",
       "IB",
       64,
       64,
       0,
       232,
       {{"NET/IB/0/GDRDMA", 8},
        {"NET/IB/1/GDRDMA", 8},
        {"NET/IB/2/GDRDMA", 8},
        {"NET/IB/3/GDRDMA", 8},
        {"NET/IB/4/GDRDMA", 8},
        {"NET/IB/5/GDRDMA", 8},
        {"NET/IB/6/GDRDMA", 8},
        {"NET/IB/7/GDRDMA", 8},
        {"P2P/IPC", 232}}},
      {"nccl-info/roce-2node-h100-nccl2.26.2-ib-no-gdr.txt",
       "IB",
       28,
       0,
       0,
       68,
       {{"NET/IB/4", 2}, {"NET/IB/5", 12}, {"NET/IB/6", 12}, {"NET/IB/7", 2}, {"P2P/CUMEM", 68}}},
      {"nccl-info/roce-2node-nccl2.27.5-ofi-plugin-fallback-ib.txt",
       "IB",
       64,
       64,
       0,
       240,
       {{"NET/IB/0/GDRDMA", 8},
        {"NET/IB/1/GDRDMA", 8},
        {"NET/IB/2/GDRDMA", 8},
        {"NET/IB/3/GDRDMA", 8},
        {"NET/IB/4/GDRDMA", 8},
        {"NET/IB/5/GDRDMA", 8},
        {"NET/IB/6/GDRDMA", 8},
        {"NET/IB/7/GDRDMA", 8},
        {"P2P/IPC", 240}}},
      {"nccl-info/roce-2node-nccl2.27.5-single-nic.txt",
       "IB",
       16,
       16,
       0,
       60,
       {{"NET/IB/0(8)/GDRDMA", 4}, {"NET/IB/0/GDRDMA", 12}, {"P2P/IPC", 60}}},
      {"nccl-info/roce-8node-h100-nccl2.26.2-gdrdma.txt",
       "IB",
       64,
       64,
       0,
       116,
       {{"NET/IB/4(1)/GDRDMA", 4},
        {"NET/IB/4/GDRDMA", 12},
        {"NET/IB/5(0)/GDRDMA", 4},
        {"NET/IB/5/GDRDMA", 12},
        {"NET/IB/6(3)/GDRDMA", 4},
        {"NET/IB/6/GDRDMA", 12},
        {"NET/IB/7(2)/GDRDMA", 4},
        {"NET/IB/7/GDRDMA", 12},
        {"P2P/CUMEM", 116}}},
      {"nccl-info/socket-2node-h100-nccl2.26.2-tcp-fallback.txt",
       "Socket",
       0,
       0,
       28,
       68,
       {{"NET/Socket/0", 2},
        {"NET/Socket/1", 12},
        {"NET/Socket/2", 12},
        {"NET/Socket/3", 2},
        {"P2P/CUMEM", 68}}},
  };
  return *files;
}

TEST(RealworldOutputsTest, NcclInfoLogsTransportPerChannel) {
  REQUIRE_REALWORLD();
  for (const NcclInfoExpectation& expected : NcclInfoFiles()) {
    SCOPED_TRACE(expected.file);
    const std::vector<std::string> lines = absl::StrSplit(ReadRealworld(expected.file), '\n');
    const sweep::TransportSummary summary = sweep::SummariseTransportLog(lines);
    EXPECT_EQ(summary.network, expected.network);
    EXPECT_EQ(summary.net_ib, expected.net_ib);
    EXPECT_EQ(summary.net_ib_gdr, expected.net_ib_gdr);
    EXPECT_EQ(summary.net_socket, expected.net_socket);
    EXPECT_EQ(summary.intra_node, expected.intra_node);
    std::map<std::string, int> by_via;
    for (const sweep::ChannelTransport& channel : summary.channels) {
      ++by_via[channel.detail];
      // The PXN form "NET/IB/4(1)/GDRDMA" is NET/IB with GDRDMA like any other.
      if (channel.detail.rfind("NET/IB/", 0) == 0) {
        EXPECT_EQ(channel.transport, "NET/IB") << channel.detail;
        EXPECT_EQ(channel.gdrdma, channel.detail.find("/GDRDMA") != std::string::npos);
        EXPECT_FALSE(channel.direction.empty()) << channel.detail;
      }
      if (channel.detail.rfind("P2P/", 0) == 0) {
        EXPECT_EQ(channel.transport, "P2P");
      }
    }
    EXPECT_EQ(by_via, expected.channels_by_via);
  }
}

// ------------------------------------------------------------- ibv_devinfo

TEST(RealworldOutputsTest, IbvDevinfoPlainTwelveConnectX7Ports) {
  REQUIRE_REALWORLD();
  const std::string file = "ibv_devinfo/cx7-12dev-roce-ethernet-nonverbose.txt";
  const auto ports = agent::inventory::ParseIbvDevinfo(ReadRealworld(file));
  ASSERT_TRUE(ports.ok()) << ports.status();
  ASSERT_EQ(ports->size(), 12u);
  for (int index = 0; index < 12; ++index) {
    const std::string device = "mlx5_" + std::to_string(index);
    SCOPED_TRACE(device);
    const auto port = ports->find({device, 1});
    ASSERT_NE(port, ports->end());
    EXPECT_EQ(port->second.link_layer, "Ethernet");
    EXPECT_EQ(port->second.max_mtu_bytes, 4096u);
    // mlx5_8..11 run at 1024; mlx5_9 and mlx5_11 are down.
    EXPECT_EQ(port->second.active_mtu_bytes, index < 8 ? 4096u : 1024u);
    EXPECT_EQ(port->second.state, index == 9 || index == 11 ? 1u : 4u);
    EXPECT_EQ(port->second.sm_lid, 0u);
    EXPECT_EQ(port->second.lid, 0u);
  }
}

// ------------------------------------------------------------ nvidia-smi -q

TEST(RealworldOutputsTest, NvidiaSmiPageRetirementEightGpus) {
  REQUIRE_REALWORLD();
  const std::string file = "nvidia-smi-q/page-retirement-8gpu-driver535.txt";
  const auto gpus = agent::inventory::ParseNvidiaSmiQuery(ReadRealworld(file));
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 8u);
  for (size_t index = 0; index < gpus->size(); ++index) {
    const agent::inventory::NvidiaSmiGpu& gpu = (*gpus)[index];
    // "GPU 0000000N:00:00.0": Azure's PCI domains 1..8.
    EXPECT_EQ(gpu.pci_address, "000" + std::to_string(index + 1) + ":00:00.0");
    // `-d PAGE_RETIREMENT` prints no identity lines: nothing is invented.
    EXPECT_EQ(gpu.product_name, "");
    EXPECT_EQ(gpu.serial_number, "");
    EXPECT_EQ(gpu.uuid, "");
  }
}

// ------------------------------------------------------------------ vtysh

// The agent runs `show bgp vrf default summary json` (ParseBgpSummary). The
// published FRR files are `show bgp vrf all neighbors json`, a command the
// agent does not run: they are listed as not read. Read as a summary, they
// must not yield peers (the neighbors form has no "peers" object).
const std::map<std::string, std::string>& VtyshNeighborsFiles() {
  static const auto* files = new std::map<std::string, std::string>{
      {"vtysh/cumulus-frr-show-bgp-vrf-all-neighbors-json-swp-peers.txt",
       "show bgp vrf all neighbors json"},
      {"vtysh/frr-leaf01-bgp-unnumbered-neighbors-json.txt", "net show bgp vrf all neighbor json"},
      {"vtysh/frr-linux-edge01-vtysh-neighbors-json.txt", "show ip bgp vrf all neighbors json"},
  };
  return *files;
}

TEST(RealworldOutputsTest, FrrNeighborsFormIsNotMistakenForASummary) {
  REQUIRE_REALWORLD();
  for (const auto& [file, form] : VtyshNeighborsFiles()) {
    SCOPED_TRACE(file + " (" + form + ")");
    const auto summary = agent::inventory::ParseBgpSummary(ReadRealworld(file));
    if (summary.ok()) {
      EXPECT_TRUE(summary->neighbors.empty());
    }
  }
}

// ------------------------------------------------------------------ lldp

// The agent runs `lldpcli -f json show neighbors details` (ParseLldpcliJson
// reads -f json and -f json0). The plain-text `lldpctl` capture is a form the
// agent never asks for: listed as not read, and never mistaken for JSON.
const std::map<std::string, std::string>& LldpPlainFiles() {
  static const auto* files = new std::map<std::string, std::string>{
      {"lldp/linux-edge01-lldpctl-plain-cumulus-neighbors.txt", "lldpctl (plain text)"},
  };
  return *files;
}

TEST(RealworldOutputsTest, LldpctlJson0OfACumulusHostNamesItsAristaLeaves) {
  REQUIRE_REALWORLD();
  const auto parsed = agent::inventory::ParseLldpcliJson(
      ReadRealworld("lldp/cumulus-lldpctl-json0-arista-neighbors.txt"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->rejected.empty());
  ASSERT_EQ(parsed->by_netdev.size(), 2u);
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"swp3", {"leaf03", "44:38:39:3d:d7:91"}}, {"swp4", {"leaf04", "44:38:39:c7:6b:83"}}};
  for (const auto& [netdev, leaf] : expected) {
    SCOPED_TRACE(netdev);
    ASSERT_EQ(parsed->by_netdev.count(netdev), 1u);
    const v1::LinkNeighbor& neighbor = parsed->by_netdev.at(netdev);
    EXPECT_EQ(neighbor.switch_name(), leaf.first);
    EXPECT_EQ(neighbor.chassis_id(), leaf.second);
    EXPECT_EQ(neighbor.chassis_id_subtype(), "mac");
    EXPECT_EQ(neighbor.port(), "Ethernet5");
    EXPECT_EQ(neighbor.port_id_subtype(), "ifname");
    EXPECT_EQ(neighbor.ttl_s(), 120u);
    EXPECT_EQ(neighbor.max_frame_size(), 9236u);
  }
}

TEST(RealworldOutputsTest, LldpctlPlainTextIsNotMistakenForJson) {
  REQUIRE_REALWORLD();
  for (const auto& [file, form] : LldpPlainFiles()) {
    SCOPED_TRACE(file + " (" + form + ")");
    EXPECT_FALSE(agent::inventory::ParseLldpcliJson(ReadRealworld(file)).ok());
  }
}

// ---------------------------------------------------------------- coverage

// Every directory of the corpus and what reads it; an empty parser: none yet.
struct DirectoryReader {
  std::string parser;
  std::string why_none;
};

const std::map<std::string, DirectoryReader>& Directories() {
  static const auto* directories = new std::map<std::string, DirectoryReader>{
      {"nccl-tests", {"sweep::ParseNcclTestsOutput", ""}},
      {"nccl-info", {"sweep::SummariseTransportLog", ""}},
      {"ibv_devinfo", {"agent::inventory::ParseIbvDevinfo", ""}},
      {"nvidia-smi-q", {"agent::inventory::ParseNvidiaSmiQuery", ""}},
      {"vtysh", {"agent::inventory::ParseBgpSummary (summary json only)", ""}},
      {"perftest",
       {"",
        "no C++ parser: perftest's tables are read only in shell, by "
        "bench/verbs_vs_perftest.sh and deploy/lab/softroce-lab.sh calibrate"}},
      {"lldp", {"agent::inventory::ParseLldpcliJson (json and json0 only)", ""}},
  };
  return *directories;
}

std::set<std::string> ExpectedFiles() {
  std::set<std::string> files;
  for (const auto& expected : NcclTestsFiles()) files.insert(expected.file);
  for (const auto& expected : NcclInfoFiles()) files.insert(expected.file);
  files.insert("ibv_devinfo/cx7-12dev-roce-ethernet-nonverbose.txt");
  files.insert("nvidia-smi-q/page-retirement-8gpu-driver535.txt");
  for (const auto& [file, form] : VtyshNeighborsFiles()) files.insert(file);
  files.insert("lldp/cumulus-lldpctl-json0-arista-neighbors.txt");
  for (const auto& [file, form] : LldpPlainFiles()) files.insert(file);
  return files;
}

TEST(RealworldOutputsTest, EveryFileIsReadOrListed) {
  REQUIRE_REALWORLD();
  const std::set<std::string> expected = ExpectedFiles();
  std::set<std::string> seen;
  for (const fs::directory_entry& directory : fs::directory_iterator(RealworldDir())) {
    if (!directory.is_directory()) continue;
    const std::string name = directory.path().filename().string();
    const auto reader = Directories().find(name);
    std::vector<std::string> files;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(directory.path())) {
      if (entry.is_regular_file()) {
        files.push_back(fs::relative(entry.path(), RealworldDir()).string());
      }
    }
    if (reader == Directories().end() || reader->second.parser.empty()) {
      const std::string why = reader == Directories().end()
                                  ? "a new directory: no parser in the project reads it"
                                  : reader->second.why_none;
      std::cout << "[ NOT READ ] realworld/" << name << ": " << files.size()
                << " file(s), no parser (" << why << ")\n";
      continue;
    }
    for (const std::string& file : files) {
      seen.insert(file);
      if (const auto unread = VtyshNeighborsFiles().find(file);
          unread != VtyshNeighborsFiles().end()) {
        std::cout << "[ NOT READ ] realworld/" << file << ": `" << unread->second
                  << "`, a command the agent does not run (it reads `summary json`)\n";
      }
      if (const auto unread = LldpPlainFiles().find(file); unread != LldpPlainFiles().end()) {
        std::cout << "[ NOT READ ] realworld/" << file << ": " << unread->second
                  << ", a form the agent does not ask for (it runs lldpcli -f json)\n";
      }
      EXPECT_TRUE(expected.count(file) > 0)
          << "../shared/realworld/" << file << " is in a directory " << reader->second.parser
          << " reads, but tests/unit/realworld/realworld_outputs_test.cc has no expectation "
             "for it: read the file and add what it shows";
    }
  }
  for (const std::string& file : expected) {
    EXPECT_TRUE(seen.count(file) > 0)
        << "expected ../shared/realworld/" << file << " is gone: update the test with SOURCES.md";
  }
}

}  // namespace
}  // namespace clustercert
