#pragma once

// The line protocol between a collective worker process and the node-agent
// that launched it. The worker writes requests on stdout, the agent answers
// on the worker's stdin; stderr is the worker's log (NCCL's INFO lines), kept
// apart. Values are hex so any bytes travel on one line.
//
//   worker -> agent                     agent -> worker
//   set KEY HEX                         (none)
//   get KEY                             value KEY HEX   (once KEY exists)
//   row ...          (EncodeRowLine)
//   note TEXT        (a fact for the certificate: "transport tcp 10.0.0.1",
//                     the arguments; "device tcp, ..." the device gloo
//                     created: sweep/device_report.h)
//   done                                (the worker exits 0 after it)
//   fail TEXT        (a sentence; the worker exits non-zero after it)
//
// KEY has no spaces. The store is shared by every rank of the job on every
// node: the controller relays keys between agents.

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace clustercert::sweep {

std::string HexEncode(const std::vector<char>& bytes);
// nullopt on odd length or a non-hex digit.
std::optional<std::vector<char>> HexDecode(const std::string& hex);

enum class WorkerVerb { kSet, kGet, kRow, kNote, kDone, kFail };

struct WorkerMessage {
  WorkerVerb verb = WorkerVerb::kNote;
  std::string key;          // set, get
  std::vector<char> value;  // set
  std::string text;         // row (the whole line), note, fail
};

// nullopt for a line that is none of the above (the agent logs and ignores it).
std::optional<WorkerMessage> ParseWorkerLine(const std::string& line);
std::string ValueLine(const std::string& key, const std::vector<char>& value);  // "value KEY HEX\n"
// Parses "value KEY HEX"; nullopt otherwise.
std::optional<std::pair<std::string, std::vector<char>>> ParseValueLine(const std::string& line);

// The worker's end: blocking set/get over its stdout/stdin. Not thread-safe;
// one per process.
class WorkerChannel {
 public:
  WorkerChannel(std::FILE* to_agent, std::FILE* from_agent);
  void Set(const std::string& key, const std::vector<char>& value);
  // Blocks until the agent sends the value; nullopt when stdin closes (the
  // agent is gone: the worker must exit).
  std::optional<std::vector<char>> Get(const std::string& key);
  void Row(const std::string& row_line);
  void Note(const std::string& text);
  void Done();
  void Fail(const std::string& sentence);
  // Where the lines go: --print-table prints nccl-tests' table there too.
  std::FILE* to_agent() const { return to_agent_; }

 private:
  void WriteLine(const std::string& line);
  std::FILE* to_agent_;
  std::FILE* from_agent_;
};

}  // namespace clustercert::sweep
