#include "sweep/device_report.h"

#include <charconv>
#include <string_view>

namespace clustercert::sweep {
namespace {

constexpr std::string_view kBoundSeparator = "; bound ";

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// "[10.0.0.1]" or "[fd00::1]:4000" -> the address inside the brackets; an
// unbracketed value as it is.
std::string Unbracketed(std::string_view value) {
  if (value.empty() || value.front() != '[') return std::string(value);
  const size_t close = value.find(']');
  if (close == std::string_view::npos) return std::string(value);
  return std::string(value.substr(1, close - 1));
}

int SmallInt(std::string_view value) {
  int number = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < 0) return -1;
  return number;
}

void ReadField(std::string_view key, std::string_view value, DeviceReport& report) {
  if (key == "iface") report.interface = std::string(value);
  if (key == "addr") report.address = Unbracketed(value);
  if (key == "dev") report.ib_device = std::string(value);
  if (key == "port") report.ib_port = SmallInt(value);
  if (key == "index") report.gid_index = SmallInt(value);
}

}  // namespace

std::string DeviceNote(const std::string& device_str, const std::string& bound) {
  std::string note = kDeviceNotePrefix + device_str;
  if (!bound.empty()) note += std::string(kBoundSeparator) + bound;
  return note;
}

std::optional<DeviceReport> ParseDeviceNote(const std::string& note) {
  const std::string_view prefix = kDeviceNotePrefix;
  if (note.size() > kMaxDeviceNoteBytes || note.rfind(prefix, 0) != 0) return std::nullopt;
  std::string_view text = std::string_view(note).substr(prefix.size());
  DeviceReport report;
  if (const size_t at = text.find(kBoundSeparator); at != std::string_view::npos) {
    report.bound = std::string(Trim(text.substr(at + kBoundSeparator.size())));
    text = text.substr(0, at);
  }
  report.description = std::string(Trim(text));
  // gloo's str(): the transport, then ", key=value" fields.
  size_t comma = text.find(',');
  report.transport = std::string(Trim(text.substr(0, comma)));
  if (report.transport.empty() || report.transport.find(' ') != std::string::npos) {
    return std::nullopt;
  }
  while (comma != std::string_view::npos) {
    text = text.substr(comma + 1);
    comma = text.find(',');
    const std::string_view field = Trim(text.substr(0, comma));
    const size_t equals = field.find('=');
    if (equals == std::string_view::npos) continue;
    ReadField(field.substr(0, equals), field.substr(equals + 1), report);
  }
  return report;
}

}  // namespace clustercert::sweep
