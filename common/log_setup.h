#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "spdlog/logger.h"

namespace clustercert {

// How a daemon's log lines look: `text` for a terminal or journald,
// `json` (one object per line: time in UTC, level, logger, msg) for log
// shippers such as Loki or Elasticsearch.
enum class LogFormat { kText, kJson };

// --log-level and --log-format as given on the command line; InvalidArgument
// naming the flag, the value and what it may be.
absl::StatusOr<spdlog::level::level_enum> ParseLogLevel(const std::string& text);
absl::StatusOr<LogFormat> ParseLogFormat(const std::string& text);

// Gives `logger` the format's pattern. In JSON the message is escaped
// (quotes, backslashes, control characters), so every line parses whatever a
// caller managed to put in it.
void ApplyLogFormat(spdlog::logger& logger, LogFormat format);

// The logger of a command-line program's diagnostics (not its progress or
// tables): one line on stderr per message, "controller: <message>", with
// "warning: " after the name for warnings, flushed at once so a line written
// just before an exit is never lost. Created on first use; thread-safe.
spdlog::logger& CommandLineLogger(const std::string& program);

}  // namespace clustercert
