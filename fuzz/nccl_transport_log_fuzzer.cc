// NCCL's INFO log as a collective worker's stderr carries it to the agent
// and the certificate: the channel/transport parser on arbitrary lines.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "sweep/nccl_transport_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines = absl::StrSplit(input, '\n');
  for (const std::string& line : lines) clustercert::sweep::ParseChannelLine(line);
  clustercert::sweep::SummariseTransportLog(lines);
  return 0;
}
