#include "sweep/worker_protocol.h"

namespace clustercert::sweep {
namespace {

std::string StripLineEnd(const std::string& line) {
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

int HexDigitValue(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  if (digit >= 'A' && digit <= 'F') return digit - 'A' + 10;
  return -1;
}

// Splits "KEY HEX" (the part after the verb) into key and decoded value. An
// empty value may come as "KEY" or "KEY " (ValueLine writes the latter).
std::optional<std::pair<std::string, std::vector<char>>> ParseKeyAndHex(const std::string& rest) {
  const size_t space = rest.find(' ');
  const std::string key = rest.substr(0, space);
  if (key.empty()) return std::nullopt;
  const std::string hex = space == std::string::npos ? "" : rest.substr(space + 1);
  std::optional<std::vector<char>> value = HexDecode(hex);
  if (!value) return std::nullopt;
  return std::make_pair(key, std::move(*value));
}

// A line may be any length (a store value is hex of arbitrary bytes), so it
// is read a character at a time rather than into a fixed buffer.
std::optional<std::string> ReadLine(std::FILE* from) {
  std::string line;
  for (;;) {
    const int c = std::getc(from);
    if (c == EOF) {
      if (line.empty()) return std::nullopt;
      return line;  // a last line without '\n' still counts
    }
    if (c == '\n') return line;
    line.push_back(static_cast<char>(c));
  }
}

// Keeps a message on one line: the protocol is line-framed, so a stray
// newline in a sentence would be read as a second (unknown) message.
std::string OneLine(const std::string& text) {
  std::string flat = text;
  for (char& c : flat) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return flat;
}

}  // namespace

std::string HexEncode(const std::vector<char>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    hex.push_back(kDigits[value >> 4]);
    hex.push_back(kDigits[value & 0x0f]);
  }
  return hex;
}

std::optional<std::vector<char>> HexDecode(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::vector<char> bytes;
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = HexDigitValue(hex[i]);
    const int low = HexDigitValue(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes.push_back(static_cast<char>((high << 4) | low));
  }
  return bytes;
}

std::optional<WorkerMessage> ParseWorkerLine(const std::string& line) {
  const std::string text = StripLineEnd(line);
  const size_t space = text.find(' ');
  const std::string verb = text.substr(0, space);
  const std::string rest = space == std::string::npos ? "" : text.substr(space + 1);
  WorkerMessage message;
  if (verb == "set") {
    auto key_value = ParseKeyAndHex(rest);
    if (!key_value) return std::nullopt;
    message.verb = WorkerVerb::kSet;
    message.key = key_value->first;
    message.value = std::move(key_value->second);
    return message;
  }
  if (verb == "get") {
    if (rest.empty() || rest.find(' ') != std::string::npos) return std::nullopt;
    message.verb = WorkerVerb::kGet;
    message.key = rest;
    return message;
  }
  if (verb == "row") {
    if (rest.empty()) return std::nullopt;
    message.verb = WorkerVerb::kRow;
    message.text = text;
    return message;
  }
  if (verb == "note") {
    message.verb = WorkerVerb::kNote;
    message.text = rest;
    return message;
  }
  if (verb == "done") {
    if (space != std::string::npos) return std::nullopt;
    message.verb = WorkerVerb::kDone;
    return message;
  }
  if (verb == "fail") {
    message.verb = WorkerVerb::kFail;
    message.text = rest;
    return message;
  }
  return std::nullopt;
}

std::string ValueLine(const std::string& key, const std::vector<char>& value) {
  return "value " + key + " " + HexEncode(value) + "\n";
}

std::optional<std::pair<std::string, std::vector<char>>> ParseValueLine(const std::string& line) {
  const std::string text = StripLineEnd(line);
  if (text.rfind("value ", 0) != 0) return std::nullopt;
  return ParseKeyAndHex(text.substr(6));
}

WorkerChannel::WorkerChannel(std::FILE* to_agent, std::FILE* from_agent)
    : to_agent_(to_agent), from_agent_(from_agent) {}

void WorkerChannel::Set(const std::string& key, const std::vector<char>& value) {
  WriteLine("set " + key + " " + HexEncode(value));
}

std::optional<std::vector<char>> WorkerChannel::Get(const std::string& key) {
  WriteLine("get " + key);
  // The agent may answer other keys first (a value asked for earlier, or one
  // relayed late); only the value for this key ends the wait.
  while (std::optional<std::string> line = ReadLine(from_agent_)) {
    auto key_value = ParseValueLine(*line);
    if (key_value && key_value->first == key) return std::move(key_value->second);
  }
  return std::nullopt;
}

void WorkerChannel::Row(const std::string& row_line) { WriteLine(OneLine(StripLineEnd(row_line))); }

void WorkerChannel::Note(const std::string& text) { WriteLine("note " + OneLine(text)); }

void WorkerChannel::Done() { WriteLine("done"); }

void WorkerChannel::Fail(const std::string& sentence) { WriteLine("fail " + OneLine(sentence)); }

void WorkerChannel::WriteLine(const std::string& line) {
  std::fputs(line.c_str(), to_agent_);
  std::fputc('\n', to_agent_);
  // The agent reads as the worker runs (a get blocks on its answer), so
  // nothing may sit in stdio's buffer.
  std::fflush(to_agent_);
}

}  // namespace clustercert::sweep
