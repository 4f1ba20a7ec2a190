// The uplink phase in the namespace lab: a storage host (its own management
// and data addresses) runs a real nginx and a node-agent as sink. nginx caps
// each connection (limit_rate), as a storage server's per-connection limit,
// so one flow must show the cap and parallel flows the aggregate. Then the
// data bridge goes down: inventory and the certificate still come over the
// management plane, and the data-plane tests report the outage instead of
// hanging. An agent whose clock really is 500 ms ahead (run under Debian's
// libfaketime, which shifts the clock_gettime its timestamps come from) fails
// clock.offset, named.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "clustercert/v1/certificate.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"
#include "tests/integration/controller_output.h"
#include "tests/integration/test_pki.h"
#include "tests/support/environment_skip.h"

namespace clustercert::testing {
namespace {

namespace fs = std::filesystem;

const std::string kLab = std::string(CLUSTERCERT_SOURCE_DIR) + "/tests/integration/netns_lab.sh";
const std::string kNginxConf = std::string(CLUSTERCERT_SOURCE_DIR) + "/tests/support/nginx_conf.sh";
constexpr char kNginx[] = "/usr/sbin/nginx";
constexpr char kFaketime[] = "/usr/bin/faketime";

const v1::Finding* FindCheck(const v1::Certificate& certificate, const std::string& id,
                             const std::string& node = "", const std::string& device = "") {
  for (const v1::Finding& finding : certificate.checks()) {
    if (finding.id() == id && (node.empty() || finding.node() == node) &&
        (device.empty() || finding.device() == device)) {
      return &finding;
    }
  }
  return nullptr;
}

class NetnsUplinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) SKIP_FOR_ENVIRONMENT("root") << "needs root to create network namespaces";
    if (!fs::exists(kNginx))
      SKIP_FOR_ENVIRONMENT("nginx") << "nginx is not installed (scripts/install-deps.sh)";
    prefix_ = "cu" + std::to_string(::getpid() % 100000);
    dir_ = fs::temp_directory_path() /
           ("clustercert_uplink_" + prefix_ + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    CommandResult up = RunCommand({"/bin/bash", kLab, "up", prefix_}, (dir_ / "lab").string());
    if (up.exit_code != 0)
      SKIP_FOR_ENVIRONMENT("netns") << "cannot build the namespace lab here: " << up.err;
    // Off loopback the agents serve mutual TLS only (--insecure is loopback-only).
    pki_ = TestPki::Make((dir_ / "pki").string(),
                         {"node1=10.201.1.1", "node2=10.201.1.2", "node3=10.201.1.3",
                          "node4=10.201.1.4", "storage1=10.201.1.50"});
    CommandResult storage =
        RunCommand({"/bin/bash", kLab, "storage", prefix_}, (dir_ / "storage").string());
    ASSERT_EQ(storage.exit_code, 0) << storage.err;
  }

  void TearDown() override {
    processes_.clear();
    if (prefix_.empty()) return;
    RunCommand({"/bin/bash", kLab, "down", prefix_}, (dir_ / "lab-down").string());
    CommandResult list = RunCommand({"/usr/sbin/ip", "netns", "list"}, (dir_ / "list").string());
    EXPECT_EQ(list.out.find(prefix_ + "-"), std::string::npos) << "namespaces left: " << list.out;
    if (!HasFailure()) fs::remove_all(dir_);
  }

  std::string Ns(const std::string& name) const { return prefix_ + "-" + name; }

  // The agent `name` in namespace `ns`, started through `wrapper` (a command
  // that runs the rest of its arguments, e.g. faketime) when one is given.
  void StartAgent(const std::string& ns, const std::string& name, const std::string& listen,
                  const std::vector<std::string>& wrapper = {}) {
    const std::string port_file = (dir_ / (name + ".port")).string();
    std::vector<std::string> argv = {"/usr/sbin/ip", "netns", "exec", Ns(ns)};
    argv.insert(argv.end(), wrapper.begin(), wrapper.end());
    for (const std::string& arg :
         {std::string(NODE_AGENT_BIN), std::string("--listen"), listen, std::string("--node-name"),
          name, std::string("--port-file"), port_file}) {
      argv.push_back(arg);
    }
    for (const std::string& flag : pki_.AgentFlags(name)) argv.push_back(flag);
    processes_[name] = std::make_unique<ChildProcess>(argv, (dir_ / name).string());
    ASSERT_NE(WaitForPortFile(port_file), 0) << name << ": " << processes_[name]->Stderr();
  }

  // node1..node4, node4 through `node4_wrapper`; the storage sink agent.
  void StartAgents(const std::vector<std::string>& node4_wrapper = {}) {
    for (int n = 1; n <= 4; ++n) {
      const std::string i = std::to_string(n);
      StartAgent("n" + i, "node" + i, "10.201.1." + i + ":7070",
                 n == 4 ? node4_wrapper : std::vector<std::string>{});
    }
    StartAgent("st", "storage1", "10.201.1.50:7070");
  }

  // A real nginx on the storage host's data address, serving a 64 MiB
  // object, each connection capped at `limit_rate` bytes/s when given.
  void StartNginx(const std::string& limit_rate = "") {
    const fs::path root = dir_ / "nginx";
    std::vector<std::string> argv = {"/bin/bash", kNginxConf, root.string(), "10.201.2.50:8080"};
    if (!limit_rate.empty()) argv.push_back(limit_rate);
    CommandResult conf = RunCommand(argv, (dir_ / "nginx-conf").string());
    ASSERT_EQ(conf.exit_code, 0) << conf.err;
    {
      std::ofstream object(root / "www" / "shard-000.tar", std::ios::binary);
      std::string block(1 << 20, 'x');
      for (int i = 0; i < 64; ++i) object << block;
    }
    const std::string config = conf.out.substr(0, conf.out.find('\n'));
    processes_["nginx"] = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/usr/sbin/ip", "netns", "exec", Ns("st"), kNginx, "-p",
                                 root.string() + "/", "-e", (root / "error.log").string(), "-c",
                                 config},
        (dir_ / "nginx").string());
    // Up when the storage host's own curl-free probe connects.
    for (int i = 0; i < 100; ++i) {
      CommandResult probe = RunCommand({"/usr/sbin/ip", "netns", "exec", Ns("st"), "/bin/bash",
                                        "-c", "exec 3<>/dev/tcp/10.201.2.50/8080"},
                                       (dir_ / "probe").string(), 5);
      if (probe.exit_code == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "nginx did not start: " << ReadFile((root / "error.log").string())
           << processes_["nginx"]->Stderr();
  }

  std::string WritePlan(const std::string& name, const std::string& body,
                        const std::string& signing_key = "") {
    std::string plan =
        "cluster: netns-lab\n"
        "fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}\n"
        "nodes:\n";
    for (int n = 1; n <= 4; ++n) {
      const std::string i = std::to_string(n);
      plan += "  - {name: node" + i + ", agent: \"10.201.1." + i + ":7070\", data_ip: 10.201.2." +
              i + ", gpus: 0}\n";
    }
    plan +=
        "expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 50}\n"
        "agents: {" +
        pki_.PlanTls() + ", connect_timeout_s: 2, call_timeout_s: 20, retries: 0}\n" + body +
        "certificate: {out: " + (dir_ / "certs").string() +
        (signing_key.empty() ? std::string() : ", signing_key: " + signing_key) + "}\n";
    const fs::path path = dir_ / name;
    std::ofstream(path) << plan;
    return path.string();
  }

  static std::string Targets() {
    return "  targets:\n"
           "    - {type: agent, name: storage1, agent: \"10.201.1.50:7070\", data_ip: "
           "10.201.2.50}\n"
           "    - {type: http, name: nginx, url: \"http://10.201.2.50:8080/shard-000.tar\"}\n";
  }

  std::vector<std::string> ControllerArgv(const std::string& plan) const {
    return {"/usr/sbin/ip", "netns", "exec", Ns("ctl"),
            CONTROLLER_BIN, "run",   plan,   "--color=never"};
  }

  std::string prefix_;
  fs::path dir_;
  TestPki pki_;
  std::map<std::string, std::unique_ptr<ChildProcess>> processes_;
};

TEST_F(NetnsUplinkTest, OneFlowShowsThePerFlowCapAndFourFlowsTheAggregate) {
  StartNginx("5m");  // 5 MB/s = 40 Mb/s per connection
  // node4's agent runs with its clock 500 ms ahead: libfaketime shifts
  // CLOCK_REALTIME (clock_gettime, which absl::Now() reads for the agent's
  // receive and transmit stamps) and leaves CLOCK_MONOTONIC alone, so gRPC's
  // deadlines and the agent's timers are untouched.
  if (!fs::exists(kFaketime)) {
    SKIP_FOR_ENVIRONMENT("faketime") << "faketime is not installed (scripts/install-deps.sh)";
  }
  StartAgents({kFaketime, "--exclude-monotonic", "-f", "+0.5s"});
  const std::string key = (dir_ / "signing.key").string();
  CommandResult keygen =
      RunCommand({CONTROLLER_BIN, "keygen", "--out", key}, (dir_ / "keygen").string());
  ASSERT_EQ(keygen.exit_code, 0) << keygen.err;
  const std::string plan =
      WritePlan("uplink.yaml",
                "uplink:\n"
                "  capacity_gbps: 25\n"
                "  workload: {profile: image-video, gpus_per_node: 4, checkpoint_gbytes: 280}\n" +
                    Targets() + "  flows: [1, 4]\n  duration_s: 1\n",
                key);
  CommandResult run = RunCommand(ControllerArgv(plan), (dir_ / "controller").string(), 240);
  // Not certified: 128 Gb/s of image/video reads on a 25 Gb/s uplink, the
  // lab's 40 Mb/s flows below each node's 32 Gb/s share, node4's clock.
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);

  const v1::UplinkSizing& sizing = certificate.uplink().sizing();
  EXPECT_DOUBLE_EQ(sizing.required_gbps(), 128);
  EXPECT_DOUBLE_EQ(sizing.required_gbytes_s(), 16);
  EXPECT_EQ(sizing.verdict(), v1::UplinkSizing::undersized);
  EXPECT_NEAR(sizing.checkpoint_seconds(), 89.6, 1e-9);
  const v1::Finding* sizing_check = FindCheck(certificate, "uplink.sizing");
  ASSERT_NE(sizing_check, nullptr);
  EXPECT_EQ(sizing_check->status(), v1::Finding::fail);

  // 4 nodes x 2 targets x 2 flow counts, every one completed.
  ASSERT_EQ(certificate.uplink().throughput_size(), 16) << run.err;
  std::map<std::string, double> single, parallel;
  for (const v1::UplinkThroughput& entry : certificate.uplink().throughput()) {
    const std::string key = entry.node() + "->" + entry.target();
    ASSERT_TRUE(entry.ok()) << key << ": " << entry.error();
    ASSERT_EQ(entry.flow_gbps_size(), entry.flows()) << key;
    double sum = 0;
    for (double gbps : entry.flow_gbps()) {
      EXPECT_GT(gbps, 0.005) << key;
      if (entry.target() == "nginx") {
        // 40 Mb/s plus what the socket buffer takes at once in a 1 s run.
        EXPECT_LT(gbps, 0.1) << key << ": a flow beat nginx's 40 Mb/s per-connection cap";
      }
      sum += gbps;
    }
    // The flows together carry the aggregate (each over its own window).
    EXPECT_GE(sum, 0.8 * entry.aggregate_gbps()) << key;
    EXPECT_GT(entry.bytes(), 0u) << key;
    (entry.flows() == 1 ? single : parallel)[key] = entry.aggregate_gbps();
    EXPECT_DOUBLE_EQ(entry.need_gbps(), 32) << key;
  }
  // One flow is held at the per-connection cap; four reach about four times it.
  for (int n = 1; n <= 4; ++n) {
    const std::string key = "node" + std::to_string(n) + "->nginx";
    EXPECT_GT(parallel[key], 2.5 * single[key])
        << key << ": 4 flows " << parallel[key] << " Gb/s against one flow " << single[key];
  }
  const v1::Finding* throughput = FindCheck(certificate, "uplink.throughput", "node2", "nginx");
  ASSERT_NE(throughput, nullptr);
  EXPECT_EQ(throughput->status(), v1::Finding::fail);
  EXPECT_NE(throughput->message().find("4 flows reach"), std::string::npos)
      << throughput->message();

  // The planes are apart: management 10.201.1.0/24 on mgmt0, data on data0.
  for (int n = 1; n <= 4; ++n) {
    const std::string node = "node" + std::to_string(n);
    const v1::Finding* subnet = FindCheck(certificate, "mgmt.subnet", node);
    ASSERT_NE(subnet, nullptr) << node;
    EXPECT_EQ(subnet->status(), v1::Finding::pass) << subnet->message();
    EXPECT_EQ(subnet->observed(), "10.201.1.0/24");
    const v1::Finding* separate = FindCheck(certificate, "mgmt.separate", node);
    ASSERT_NE(separate, nullptr);
    EXPECT_EQ(separate->status(), v1::Finding::pass) << separate->message();
  }

  // The clock: node4 500 ms ahead, measured within a few ms, named. Nothing
  // is injected any more: the field stays in the format for old certificates.
  for (const v1::NodeResult& node : certificate.nodes()) {
    ASSERT_TRUE(node.clock_measured()) << node.name();
    EXPECT_EQ(node.clock_exchanges(), 8) << node.name();
    const double expected = node.name() == "node4" ? 500 : 0;
    EXPECT_NEAR(node.clock_offset_ms(), expected, 20) << node.name();
    EXPECT_LT(node.clock_uncertainty_ms(), 20) << node.name();
    EXPECT_EQ(node.clock_injected_offset_ms(), 0) << node.name();
  }
  const v1::Finding* clock = FindCheck(certificate, "clock.offset");
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->status(), v1::Finding::fail) << clock->message();
  EXPECT_NE(clock->device().find("node4"), std::string::npos) << clock->device();
  EXPECT_EQ(run.err.find("test-only clock offset"), std::string::npos) << run.err;

  // verify recomputes the uplink verdicts from the record.
  CommandResult verify = RunCommand(
      {CONTROLLER_BIN, "verify", CertificatePathFromOutput(run.out), "--pubkey", key + ".pub"},
      (dir_ / "verify").string());
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // The uplink section is in the committed JSON Schema.
  CommandResult schema = RunCommand(
      {"/usr/bin/python3",
       std::string(CLUSTERCERT_SOURCE_DIR) + "/tests/certificate/validate_certificate_schema.py",
       std::string(CLUSTERCERT_SOURCE_DIR) + "/docs/certificate.schema.json",
       CertificatePathFromOutput(run.out)},
      (dir_ / "schema").string());
  if (schema.exit_code != 77) {  // 77: python3-jsonschema is missing
    EXPECT_EQ(schema.exit_code, 0) << schema.out << schema.err;
  }

  // The reports carry the uplink section; report.html links to nothing.
  const fs::path out = fs::path(CertificatePathFromOutput(run.out)).parent_path();
  const std::string html = ReadFile((out / "report.html").string());
  EXPECT_NE(html.find("<section id=\"uplink\">"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_NE(ReadFile((out / "report.md").string()).find("## Uplink"), std::string::npos);
}

TEST_F(NetnsUplinkTest, DataBridgeDownLeavesTheManagementPlaneWorking) {
  StartNginx();
  StartAgents();
  CommandResult outage =
      RunCommand({"/bin/bash", kLab, "databr", prefix_, "down"}, (dir_ / "outage").string());
  ASSERT_EQ(outage.exit_code, 0) << outage.err;
  const std::string plan = WritePlan(
      "outage.yaml",
      "pairwise: {engine: tcp, pattern: ring, tests: [write_bw], memory: [host], duration_s: 1, "
      "min_fraction_of_line_rate: 0.5}\n"
      "uplink:\n"
      "  capacity_gbps: 25\n"
      "  workload: {profile: llm-pretrain}\n" +
          Targets() + "  flows: [1]\n  duration_s: 1\n");
  const auto start = std::chrono::steady_clock::now();
  CommandResult run = RunCommand(ControllerArgv(plan), (dir_ / "controller").string(), 280);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_LT(seconds, 240) << "the outage made the run crawl";
  v1::Certificate certificate = CertificateFromOutput(run.out);

  // Every node answered and returned its inventory over the management plane.
  for (const v1::NodeResult& node : certificate.nodes()) {
    EXPECT_TRUE(node.reachable()) << node.name() << ": " << node.error();
    EXPECT_TRUE(node.has_inventory()) << node.name();
  }
  for (const v1::PhaseResult& phase : certificate.phases()) {
    if (phase.name() == "connect" || phase.name() == "inventory") {
      EXPECT_EQ(phase.status(), v1::PhaseResult::pass) << phase.name() << ": " << phase.detail();
    }
  }
  // Each data-plane test failed with its reason, none hung.
  ASSERT_GT(certificate.pairs_size(), 0);
  for (const v1::PairResult& pair : certificate.pairs()) {
    EXPECT_FALSE(pair.ok());
    EXPECT_FALSE(pair.error().empty());
  }
  ASSERT_EQ(certificate.uplink().throughput_size(), 8);
  for (const v1::UplinkThroughput& entry : certificate.uplink().throughput()) {
    EXPECT_FALSE(entry.ok()) << entry.node() << "->" << entry.target();
    EXPECT_FALSE(entry.error().empty());
  }
  const v1::Finding* throughput = FindCheck(certificate, "uplink.throughput", "node1", "nginx");
  ASSERT_NE(throughput, nullptr);
  EXPECT_EQ(throughput->status(), v1::Finding::fail);
  EXPECT_EQ(throughput->observed(), "unreachable");
  // The sizing needs no data plane: LLM tokens fit 25 GbE.
  EXPECT_EQ(certificate.uplink().sizing().verdict(), v1::UplinkSizing::fits);
  EXPECT_TRUE(fs::exists(CertificatePathFromOutput(run.out)));
}

}  // namespace
}  // namespace clustercert::testing
