// The certificate as a product, end to end through the real binaries: four
// node-agents on loopback, a signed run (tcp pairwise matrix and gloo
// sweeps), its reports, `verify` on the file and on edited copies, `report`,
// `diff`, and a partial re-certification against it.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <thread>

#include "clustercert/v1/certificate.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"
#include "tests/integration/controller_output.h"
#include "tests/support/environment_skip.h"

namespace clustercert::testing {
namespace {

namespace fs = std::filesystem;

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' to edit";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class CertificateCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustercert_cert_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    key_ = (dir_ / "signing.key").string();
    CommandResult keygen = Run({CONTROLLER_BIN, "keygen", "--out", key_});
    ASSERT_EQ(keygen.exit_code, 0) << keygen.err;
    EXPECT_NE(keygen.out.find("fingerprint: SHA256:"), std::string::npos) << keygen.out;
    for (int n = 1; n <= 4; ++n) ports_.push_back(StartAgent("node" + std::to_string(n)));
  }
  void TearDown() override {
    agents_.clear();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  int StartAgent(const std::string& name) {
    return StartLoopbackAgent(agents_, name, dir_.string(), {"--insecure"});
  }

  std::string WritePlan(const std::string& name, const std::string& cluster = "it-certificate") {
    std::string plan = "cluster: " + cluster +
                       "\n"
                       "fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}\n"
                       "nodes:\n";
    for (int n = 1; n <= 4; ++n) {
      plan += "  - {name: node" + std::to_string(n) +
              ", agent: \"127.0.0.1:" + std::to_string(ports_[n - 1]) +
              "\", data_ip: 127.0.0.1, gpus: 0}\n";
    }
    plan +=
        "expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 250, "
        "management_separate: false}\n"
        "agents: {insecure: true, connect_timeout_s: 2, call_timeout_s: 20, retries: 0}\n"
        "pairwise: {engine: tcp, tests: [write_bw, write_lat], duration_s: 0.5, "
        "min_fraction_of_line_rate: 0.1, max_latency_us: 20000}\n"
        "collectives: {backend: gloo, transport: tcp, ranks_per_node: 1, sizes: {min: 1K, max: "
        "64K, factor: 8}, warmup_iters: 1, iters: 3, min_busbw_gbytes: 0.0001, timeout_s: 60}\n"
        "certificate: {out: " +
        (dir_ / "certs").string() + ", signing_key: " + key_ + "}\n";
    const fs::path path = dir_ / name;
    std::ofstream(path) << plan;
    return path.string();
  }

  CommandResult Run(std::vector<std::string> argv) {
    argv.push_back("--color=never");
    return RunCommand(argv, (dir_ / ("cmd" + std::to_string(++commands_))).string());
  }

  static std::string CertificatePath(const CommandResult& run) {
    return CertificatePathFromOutput(run.out);
  }

  // A copy of `path` with one textual edit, for verify to catch.
  std::string Edited(const std::string& path, const std::string& name, const std::string& from,
                     const std::string& to) {
    const fs::path out = dir_ / name;
    std::ofstream(out) << Replace(ReadFile(path), from, to);
    return out.string();
  }

  fs::path dir_;
  std::string key_;
  std::vector<int> ports_;
  int commands_ = 0;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(CertificateCliTest, SignedRunVerifiesAndEveryEditIsCaught) {
  CommandResult run = Run({CONTROLLER_BIN, "run", WritePlan("plan.yaml")});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string path = CertificatePath(run);
  ASSERT_FALSE(path.empty()) << run.out;
  for (const char* report : {"report.html", "report.md", "junit.xml"}) {
    EXPECT_TRUE(fs::exists(fs::path(path).parent_path() / report)) << report << "\n" << run.out;
  }
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.format_version(), 8u);
  EXPECT_EQ(certificate.signature().algorithm(), "ed25519");
  EXPECT_EQ(certificate.pairs_size(), 24);       // 12 ordered pairs x 2 tests
  EXPECT_EQ(certificate.collectives_size(), 6);  // 1-node on each of 4 nodes, 2-node, all-nodes
  EXPECT_FALSE(certificate.plan_yaml().empty());

  // Without a trusted key the signature shows only that the content is
  // unchanged: anyone can re-sign an edited copy with a fresh key (issue 15).
  CommandResult untrusted = Run({CONTROLLER_BIN, "verify", path});
  EXPECT_EQ(untrusted.exit_code, 1) << untrusted.out << untrusted.err;
  EXPECT_NE(untrusted.out.find("signature: intact, but the signer is NOT TRUSTED: Ed25519 key "
                               "SHA256:"),
            std::string::npos)
      << untrusted.out;
  EXPECT_NE(untrusted.out.find("pass the cluster's public key with --pubkey FILE or add it to"),
            std::string::npos)
      << untrusted.out;
  CommandResult pinned = Run({CONTROLLER_BIN, "verify", path, "--pubkey", key_ + ".pub"});
  EXPECT_EQ(pinned.exit_code, 0) << pinned.out << pinned.err;
  EXPECT_NE(pinned.out.find("24 pair cell(s), 6 sweep(s) recomputed"), std::string::npos)
      << pinned.out;
  EXPECT_NE(pinned.out.find("(trusted: " + key_ + ".pub)"), std::string::npos) << pinned.out;
  const fs::path trusted = dir_ / "trusted-keys";
  fs::create_directories(trusted);
  fs::copy_file(key_ + ".pub", trusted / "cluster.pub");
  CommandResult directory = Run({CONTROLLER_BIN, "verify", path, "--trust-dir", trusted.string()});
  EXPECT_EQ(directory.exit_code, 0) << directory.out << directory.err;

  const std::string other = (dir_ / "other.key").string();
  ASSERT_EQ(Run({CONTROLLER_BIN, "keygen", "--out", other}).exit_code, 0);
  CommandResult foreign = Run({CONTROLLER_BIN, "verify", path, "--pubkey", other + ".pub"});
  EXPECT_EQ(foreign.exit_code, 1) << foreign.out;
  EXPECT_NE(foreign.out.find("signed by another key"), std::string::npos) << foreign.out;

  struct Edit {
    const char* name;
    std::string from, to;
    const char* expect;  // a phrase verify must print
  };
  const std::vector<Edit> edits = {
      {"verdict.json", "\"verdict\": \"certified\"", "\"verdict\": \"not-certified\"",
       "header was edited"},
      {"plan.json", "min_busbw_gbytes: 0.0001", "min_busbw_gbytes: 9000",
       "the embedded plan was edited"},
      {"status.json", "\"status\": \"pass\"", "\"status\": \"fail\"", "was edited after signing"},
      {"signature.json", "\"value\": \"", "\"value\": \"AAAA", "signature does not match"},
      {"unknown.json", "\"tool\": \"clustercert\"", "\"tool\": \"clustercert\", \"extra\": 1",
       "is not a clustercert certificate"},
  };
  for (const Edit& edit : edits) {
    CommandResult edited =
        Run({CONTROLLER_BIN, "verify", Edited(path, edit.name, edit.from, edit.to), "--pubkey",
             key_ + ".pub"});
    EXPECT_NE(edited.exit_code, 0) << edit.name << "\n" << edited.out;
    EXPECT_NE((edited.out + edited.err).find(edit.expect), std::string::npos)
        << edit.name << ": expected '" << edit.expect << "' in\n"
        << edited.out << edited.err;
  }
  // A plan edit that moves a threshold also shows the verdicts it changes.
  CommandResult plan_edit =
      Run({CONTROLLER_BIN, "verify", (dir_ / "plan.json").string(), "--pubkey", key_ + ".pub"});
  EXPECT_NE(plan_edit.out.find("checks collectives.busbw@2-node: recorded pass"), std::string::npos)
      << plan_edit.out;

  CommandResult same = Run({CONTROLLER_BIN, "diff", path, path});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("no regression"), std::string::npos) << same.out;
}

TEST_F(CertificateCliTest, ReportRerendersFromTheCertificateAndTheSchemaValidatesIt) {
  CommandResult run = Run({CONTROLLER_BIN, "run", WritePlan("plan.yaml")});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string path = CertificatePath(run);
  const fs::path out = dir_ / "rerendered";
  CommandResult report = Run({CONTROLLER_BIN, "report", path, "--out", out.string()});
  ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
  const std::string html = ReadFile((out / "report.html").string());
  EXPECT_NE(html.find("data-cell"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos) << "report.html must not fetch anything";
  EXPECT_NE(ReadFile((out / "junit.xml").string()).find("<testsuites"), std::string::npos);

  CommandResult schema = RunCommand(
      {"/usr/bin/python3",
       std::string(CLUSTERCERT_SOURCE_DIR) + "/tests/certificate/validate_certificate_schema.py",
       std::string(CLUSTERCERT_SOURCE_DIR) + "/docs/certificate.schema.json", path},
      (dir_ / "schema").string());
  if (schema.exit_code == 77) SKIP_FOR_ENVIRONMENT("jsonschema") << schema.out;
  EXPECT_EQ(schema.exit_code, 0) << schema.out << schema.err;

  CommandResult printed = Run({CONTROLLER_BIN, "schema"});
  EXPECT_EQ(printed.exit_code, 0);
  EXPECT_EQ(printed.out,
            ReadFile(std::string(CLUSTERCERT_SOURCE_DIR) + "/docs/certificate.schema.json"));
}

TEST_F(CertificateCliTest, PartialRerunCarriesTheRestAndVerifies) {
  const std::string plan = WritePlan("plan.yaml");
  CommandResult first = Run({CONTROLLER_BIN, "run", plan});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string baseline = CertificatePath(first);

  CommandResult rerun =
      Run({CONTROLLER_BIN, "run", plan, "--baseline", baseline, "--only", "node2"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  EXPECT_NE(rerun.err.find("re-measuring node2"), std::string::npos) << rerun.err;
  v1::Certificate certificate = CertificateFromOutput(rerun.out);
  int carried_pairs = 0;
  for (const auto& pair : certificate.pairs()) {
    const bool touches = pair.client() == "node2" || pair.server() == "node2";
    EXPECT_EQ(pair.has_carried(), !touches) << pair.client() << "->" << pair.server();
    carried_pairs += pair.has_carried() ? 1 : 0;
  }
  EXPECT_EQ(carried_pairs, 12);  // 3 pairs without node2 x 2 directions x 2 tests
  for (const auto& sweep : certificate.collectives()) {
    // Every sweep without node2 is carried: the other nodes' 1-node sweeps;
    // node2's own, 2-node and all-nodes are measured again.
    bool has_node2 = false;
    for (const auto& node : sweep.nodes()) has_node2 = has_node2 || node == "node2";
    EXPECT_EQ(sweep.has_carried(), !has_node2) << sweep.scope() << " " << sweep.nodes(0);
  }
  for (const auto& node : certificate.nodes()) {
    EXPECT_EQ(node.has_carried(), node.name() != "node2") << node.name();
  }
  EXPECT_EQ(certificate.baseline().path(), baseline);
  CommandResult verify =
      Run({CONTROLLER_BIN, "verify", CertificatePath(rerun), "--pubkey", key_ + ".pub"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  EXPECT_NE(verify.out.find("re-measured 1 node(s) (node2)"), std::string::npos) << verify.out;

  CommandResult no_only = Run({CONTROLLER_BIN, "run", plan, "--baseline", baseline});
  EXPECT_EQ(no_only.exit_code, 2);
  EXPECT_NE(no_only.err.find("--baseline needs --only"), std::string::npos) << no_only.err;
  CommandResult unknown =
      Run({CONTROLLER_BIN, "run", plan, "--baseline", baseline, "--only", "node9"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("'node9', which is not a node of"), std::string::npos) << unknown.err;
  CommandResult other_plan = Run({CONTROLLER_BIN, "run", WritePlan("other.yaml", "it-other"),
                                  "--baseline", baseline, "--only", "node2"});
  EXPECT_EQ(other_plan.exit_code, 2);
  EXPECT_NE(other_plan.err.find("was made from another plan"), std::string::npos) << other_plan.err;
  CommandResult edited =
      Run({CONTROLLER_BIN, "run", plan, "--baseline",
           Edited(baseline, "edited.json", "\"status\": \"pass\"", "\"status\": \"fail\""),
           "--only", "node2"});
  EXPECT_EQ(edited.exit_code, 2);
  EXPECT_NE(edited.err.find("does not verify"), std::string::npos) << edited.err;
}

}  // namespace
}  // namespace clustercert::testing
