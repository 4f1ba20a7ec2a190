#pragma once

// Mutual TLS for the tests whose agents listen off loopback (the namespace
// labs): node-agent refuses --insecure there, so these tests run the
// cluster's real PKI, made by deploy/pki.sh, as a deployment would.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/child_process.h"

namespace clustercert::testing {

class TestPki {
 public:
  TestPki() = default;

  // Runs deploy/pki.sh into `dir` for `nodes` ("node1=10.201.1.1", ...); a
  // failure is a test failure.
  static TestPki Make(const std::string& dir, const std::vector<std::string>& nodes) {
    std::vector<std::string> argv = {"/bin/bash",
                                     std::string(CLUSTERCERT_SOURCE_DIR) + "/deploy/pki.sh", dir};
    argv.insert(argv.end(), nodes.begin(), nodes.end());
    CommandResult made = RunCommand(argv, dir + "-run");
    EXPECT_EQ(made.exit_code, 0) << made.out << made.err;
    TestPki pki;
    pki.dir_ = dir;
    return pki;
  }

  // node-agent's flags for `node`'s certificate.
  std::vector<std::string> AgentFlags(const std::string& node) const {
    return {"--tls-cert", dir_ + "/" + node + ".pem",
            "--tls-key",  dir_ + "/" + node + ".key",
            "--tls-ca",   dir_ + "/ca.pem"};
  }

  // The plan's agents.tls entry for the controller's certificate.
  std::string PlanTls() const {
    return "tls: {ca: " + dir_ + "/ca.pem, cert: " + dir_ + "/controller.pem, key: " + dir_ +
           "/controller.key}";
  }

 private:
  std::string dir_;
};

}  // namespace clustercert::testing
