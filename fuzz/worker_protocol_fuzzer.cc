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
    if (auto message = sweep::ParseWorkerLine(line)) {
      if (message->verb == sweep::WorkerVerb::kRow) sweep::DecodeRowLine(message->text);
      if (message->verb == sweep::WorkerVerb::kSet) {
        // What the agent relays back must reach the worker unchanged.
        auto echoed = sweep::ParseValueLine(sweep::ValueLine(message->key, message->value));
        if (!echoed || echoed->first != message->key || echoed->second != message->value) {
          std::abort();
        }
      }
    }
    sweep::ParseValueLine(line);
    if (auto bytes = sweep::HexDecode(line)) {
      if (sweep::HexDecode(sweep::HexEncode(*bytes)) != bytes) std::abort();
    }
  }
  return 0;
}
