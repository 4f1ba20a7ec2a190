// Authorisation by identity (issue 15): a real node-agent with mutual TLS on
// 127.0.0.1, the PKI from deploy/pki.sh plus a foreign CA, and a small gRPC
// client presenting each certificate. Only the controller's role drives the
// agent; a node's certificate, stolen or not, drives nothing.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clustercert/v1/node_agent.grpc.pb.h"
#include "common/tls_files.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"

namespace clustercert::testing {
namespace {

namespace fs = std::filesystem;

const std::string kPkiScript = std::string(CLUSTERCERT_SOURCE_DIR) + "/deploy/pki.sh";

class AgentAuthzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustercert_authz_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    pki_ = dir_ / "pki";
    Pki({"node1=127.0.0.1", "node2=127.0.0.2"});
    // The same script again, for another cluster: its CA is foreign here.
    CommandResult foreign =
        RunCommand({"/bin/bash", kPkiScript, (dir_ / "foreign").string(), "node1=127.0.0.1"},
                   (dir_ / "foreign-pki").string());
    ASSERT_EQ(foreign.exit_code, 0) << foreign.err;
  }
  void TearDown() override {
    agents_.clear();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  CommandResult Pki(std::vector<std::string> args) {
    args.insert(args.begin(), {"/bin/bash", kPkiScript, pki_.string()});
    CommandResult made = RunCommand(args, (dir_ / "pki-run").string());
    EXPECT_EQ(made.exit_code, 0) << made.out << made.err;
    return made;
  }

  // A certificate signed by the cluster CA the way an older deploy/pki.sh did
  // (EKU serverAuth and clientAuth) with the given SANs: what a node holds
  // today, before its PKI is re-issued.
  void IssueOldStyle(const std::string& name, const std::string& sans) {
    const std::string key = (pki_ / (name + ".key")).string();
    const std::string csr = (dir_ / (name + ".csr")).string();
    const std::string ext = (dir_ / (name + ".ext")).string();
    std::ofstream(ext) << "basicConstraints=CA:FALSE\n"
                          "keyUsage=critical,digitalSignature,keyEncipherment\n"
                          "extendedKeyUsage=serverAuth,clientAuth\n"
                          "subjectAltName="
                       << sans << "\n";
    CommandResult made = RunCommand(
        {"/bin/bash", "-c",
         "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '" + key +
             "' -out '" + csr + "' -subj /CN=" + name + " && openssl x509 -req -in '" + csr +
             "' -CA '" + (pki_ / "ca.pem").string() + "' -CAkey '" + (pki_ / "ca.key").string() +
             "' -CAcreateserial -days 2 -out '" + (pki_ / (name + ".pem")).string() +
             "' -extfile '" + ext + "'"},
        (dir_ / ("issue-" + name)).string());
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }

  int StartAgent(std::vector<std::string> extra = {}) {
    std::vector<std::string> flags = {
        "--sysfs-root", std::string(CLUSTERCERT_FIXTURES) + "/sysfs/no-rdma",
        "--tls-cert",   (pki_ / "node1.pem").string(),
        "--tls-key",    (pki_ / "node1.key").string(),
        "--tls-ca",     (pki_ / "ca.pem").string()};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return StartLoopbackAgent(agents_, "node1", dir_.string(), flags);
  }

  // A stub presenting `cert`/`key` from `pki` (and trusting that PKI's CA).
  std::unique_ptr<v1::NodeAgent::Stub> Stub(int port, const fs::path& pki,
                                            const std::string& cert) {
    auto material = LoadTlsMaterial({(pki_ / "ca.pem").string(), (pki / (cert + ".pem")).string(),
                                     (pki / (cert + ".key")).string()});
    EXPECT_TRUE(material.ok()) << material.status();
    if (!material.ok()) return nullptr;
    return v1::NodeAgent::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                      MutualTlsChannelCredentials(*material)));
  }

  static grpc::Status GetVersion(v1::NodeAgent::Stub& stub) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::GetVersionResponse response;
    return stub.GetVersion(&context, v1::GetVersionRequest(), &response);
  }

  static grpc::Status StartCollective(v1::NodeAgent::Stub& stub) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::StartCollectiveResponse response;
    return stub.StartCollective(&context, v1::StartCollectiveRequest(), &response);
  }

  std::string AgentLog() { return agents_["node1"]->Stderr(); }

  fs::path dir_;
  fs::path pki_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(AgentAuthzTest, PkiIssuesOneRolePerCertificate) {
  auto text = [&](const std::string& name) {
    return RunCommand({"/usr/bin/openssl", "x509", "-in", (pki_ / (name + ".pem")).string(),
                       "-noout", "-ext", "subjectAltName,extendedKeyUsage"},
                      (dir_ / ("x509-" + name)).string())
        .out;
  };
  const std::string controller = text("controller");
  EXPECT_NE(controller.find("URI:urn:clustercert:role:controller"), std::string::npos)
      << controller;
  EXPECT_NE(controller.find("TLS Web Client Authentication"), std::string::npos) << controller;
  EXPECT_EQ(controller.find("TLS Web Server Authentication"), std::string::npos) << controller;
  const std::string node = text("node2");
  EXPECT_NE(node.find("URI:urn:clustercert:role:node"), std::string::npos) << node;
  EXPECT_NE(node.find("IP Address:127.0.0.2"), std::string::npos) << node;
  EXPECT_NE(node.find("TLS Web Server Authentication"), std::string::npos) << node;
  EXPECT_EQ(node.find("TLS Web Client Authentication"), std::string::npos) << node;

  // Never overwritten; a rotated controller is a new name beside the old one.
  const std::string before = ReadFile((pki_ / "controller.pem").string());
  CommandResult again = Pki({"--controller", "controller-2027", "node1=127.0.0.1"});
  EXPECT_EQ(ReadFile((pki_ / "controller.pem").string()), before);
  EXPECT_NE(again.out.find("node1.pem exists, kept"), std::string::npos) << again.out;
  EXPECT_NE(text("controller-2027").find("URI:urn:clustercert:role:controller"), std::string::npos);

  // A name or address that would smuggle a SAN (a role) into the extension file.
  CommandResult smuggled = RunCommand({"/bin/bash", kPkiScript, pki_.string(),
                                       "evil=127.0.0.1,URI:urn:clustercert:role:controller"},
                                      (dir_ / "smuggled").string());
  EXPECT_EQ(smuggled.exit_code, 1);
  EXPECT_NE(smuggled.err.find("neither an IP address nor a DNS name"), std::string::npos)
      << smuggled.err;
  EXPECT_FALSE(fs::exists(pki_ / "evil.pem"));
}

TEST_F(AgentAuthzTest, ControllerCertificateDrivesTheAgentOnEveryCall) {
  const int port = StartAgent();
  ASSERT_NE(port, 0);
  auto stub = Stub(port, pki_, "controller");
  for (int call = 0; call < 3; ++call) {
    grpc::Status status = GetVersion(*stub);
    EXPECT_TRUE(status.ok()) << call << ": " << status.error_message() << "\n" << AgentLog();
  }
  // The rotated controller's certificate is as good as the first.
  Pki({"--controller", "controller-2027"});
  auto rotated = Stub(port, pki_, "controller-2027");
  EXPECT_TRUE(GetVersion(*rotated).ok()) << AgentLog();
  EXPECT_EQ(AgentLog().find("refused"), std::string::npos) << AgentLog();
}

TEST_F(AgentAuthzTest, NodeCertificateIsRefusedAtTheHandshake) {
  // deploy/pki.sh's node certificates are server-only (EKU serverAuth): the
  // agent's TLS stack refuses one offered as a client certificate.
  const int port = StartAgent();
  ASSERT_NE(port, 0);
  auto stub = Stub(port, pki_, "node2");
  grpc::Status status = GetVersion(*stub);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(AgentAuthzTest, DualUseNodeCertificateIsPermissionDeniedBeforeAnyHandler) {
  // The attack of issue 15: node2's certificate from an older PKI is also a
  // client certificate and passes the handshake; the role decides.
  IssueOldStyle("node2-old", "IP:127.0.0.2,DNS:node2,URI:urn:clustercert:role:node");
  const int port = StartAgent();
  ASSERT_NE(port, 0);
  auto stub = Stub(port, pki_, "node2-old");
  grpc::Status version = GetVersion(*stub);
  EXPECT_EQ(version.error_code(), grpc::StatusCode::PERMISSION_DENIED) << version.error_message();
  EXPECT_EQ(version.error_message(),
            "the client certificate CN=node2-old carries role node; this agent admits only role "
            "controller: run the controller with the certificate deploy/pki.sh made for it");
  // The same connection again, and the RPC that runs processes as root: an
  // empty request would be INVALID_ARGUMENT had it reached the handler.
  EXPECT_EQ(GetVersion(*stub).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  grpc::Status collective = StartCollective(*stub);
  EXPECT_EQ(collective.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << collective.error_message();

  const std::string log = AgentLog();
  EXPECT_NE(log.find("refused /clustercert.v1.NodeAgent/GetVersion (PERMISSION_DENIED) to "
                     "CN=[node2-old] URI SANs [urn:clustercert:role:node]; admitted: role "
                     "controller"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("refused /clustercert.v1.NodeAgent/StartCollective"), std::string::npos)
      << log;
}

TEST_F(AgentAuthzTest, OlderControllerCertificateIsDeniedWithTheFix) {
  IssueOldStyle("controller-old", "DNS:controller");
  const int port = StartAgent();
  ASSERT_NE(port, 0);
  auto stub = Stub(port, pki_, "controller-old");
  grpc::Status status = GetVersion(*stub);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(status.error_message().find("CN=controller-old carries no role"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("re-issue it with deploy/pki.sh"), std::string::npos);
}

TEST_F(AgentAuthzTest, ForeignCaIsRefusedAtTheHandshake) {
  const int port = StartAgent();
  ASSERT_NE(port, 0);
  auto stub = Stub(port, dir_ / "foreign", "controller");
  grpc::Status status = GetVersion(*stub);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  // Refused by TLS, so the authoriser never saw it.
  EXPECT_EQ(AgentLog().find("refused"), std::string::npos) << AgentLog();
}

TEST_F(AgentAuthzTest, AllowRolesAdmitsTheRolesNamed) {
  IssueOldStyle("node2-old", "IP:127.0.0.2,DNS:node2,URI:urn:clustercert:role:node");
  const int port = StartAgent({"--allow-roles", "controller,node"});
  ASSERT_NE(port, 0);
  EXPECT_TRUE(GetVersion(*Stub(port, pki_, "node2-old")).ok()) << AgentLog();
  EXPECT_TRUE(GetVersion(*Stub(port, pki_, "controller")).ok()) << AgentLog();
  EXPECT_NE(AgentLog().find("admitting controller, node"), std::string::npos) << AgentLog();
}

TEST_F(AgentAuthzTest, BadAllowRolesAndOffLoopbackInsecureAreRefused) {
  CommandResult roles =
      RunCommand({NODE_AGENT_BIN, "--listen", "127.0.0.1:0", "--tls-cert",
                  (pki_ / "node1.pem").string(), "--tls-key", (pki_ / "node1.key").string(),
                  "--tls-ca", (pki_ / "ca.pem").string(), "--allow-roles", "controller,ROOT"},
                 (dir_ / "roles").string(), 10);
  EXPECT_EQ(roles.exit_code, 2);
  EXPECT_NE(roles.err.find("--allow-roles controller,ROOT"), std::string::npos) << roles.err;

  for (const std::string listen : {"0.0.0.0:0", "[::]:0"}) {
    CommandResult insecure = RunCommand({NODE_AGENT_BIN, "--listen", listen, "--insecure"},
                                        (dir_ / "insecure").string(), 10);
    EXPECT_EQ(insecure.exit_code, 2) << listen;
    EXPECT_NE(insecure.err.find("--insecure serves plaintext gRPC with no caller identity, so it "
                                "only listens on loopback"),
              std::string::npos)
        << insecure.err;
  }
}

}  // namespace
}  // namespace clustercert::testing
