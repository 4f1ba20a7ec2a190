// The collective worker line protocol: each line a worker writes on stdout
// is parsed by the root-run agent (ParseWorkerLine), and its row lines by
// the controller (DecodeRowLine); the agent's value lines are parsed by the
// worker. A worker is any program the plan names, so every byte is hostile.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "sweep/sweep_row.h"
#include "sweep/worker_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  for (absl::string_view piece : absl::StrSplit(input, '\n')) {
    const std::string line(piece);
    if (auto message = clustercert::sweep::ParseWorkerLine(line)) {
      if (message->verb == clustercert::sweep::WorkerVerb::kRow)
        clustercert::sweep::DecodeRowLine(message->text);
      if (message->verb == clustercert::sweep::WorkerVerb::kSet) {
        // What the agent relays back must reach the worker unchanged.
        auto echoed = clustercert::sweep::ParseValueLine(
            clustercert::sweep::ValueLine(message->key, message->value));
        if (!echoed || echoed->first != message->key || echoed->second != message->value) {
          std::abort();
        }
      }
    }
    clustercert::sweep::ParseValueLine(line);
    if (auto bytes = clustercert::sweep::HexDecode(line)) {
      if (clustercert::sweep::HexDecode(clustercert::sweep::HexEncode(*bytes)) != bytes)
        std::abort();
    }
  }
  return 0;
}
