#include "tests/integration/controller_output.h"

#include <regex>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"

namespace clustercert::testing {

v1::Certificate CertificateFromOutput(const std::string& out) {
  v1::Certificate certificate;
  std::smatch match;
  if (!std::regex_search(out, match, std::regex("certificate: (\\S+)"))) {
    ADD_FAILURE() << "no certificate path in the controller's output:\n" << out;
    return certificate;
  }
  auto status = google::protobuf::util::JsonStringToMessage(ReadFile(match[1]), &certificate);
  EXPECT_TRUE(status.ok()) << match[1] << ": " << status.ToString();
  return certificate;
}

}  // namespace clustercert::testing
