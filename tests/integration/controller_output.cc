#include "tests/integration/controller_output.h"

#include <regex>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"

namespace clustercert::testing {

std::string CertificatePathFromOutput(const std::string& out) {
  std::smatch match;
  return std::regex_search(out, match, std::regex("certificate: (\\S+)")) ? match[1].str()
                                                                          : std::string();
}

v1::Certificate CertificateFromOutput(const std::string& out) {
  v1::Certificate certificate;
  const std::string path = CertificatePathFromOutput(out);
  if (path.empty()) {
    ADD_FAILURE() << "no certificate path in the controller's output:\n" << out;
    return certificate;
  }
  auto status = google::protobuf::util::JsonStringToMessage(ReadFile(path), &certificate);
  EXPECT_TRUE(status.ok()) << path << ": " << status.ToString();
  return certificate;
}

}  // namespace clustercert::testing
