#include "common/log_setup.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace clustercert {
namespace {

// %* in the JSON pattern: the message as the inside of a JSON string.
class JsonEscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (const char c : std::string_view(msg.payload.data(), msg.payload.size())) {
      if (c == '"' || c == '\\') {
        dest.push_back('\\');
        dest.push_back(c);
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned char>(c));
        dest.append(escaped, escaped + 6);
      } else {
        dest.push_back(c);
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonEscapedMessage>();
  }
};

// %W in the command-line pattern: what the level adds before the message
// ("warning: "; nothing for errors, which are the sentence itself).
class LevelPrefix final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view prefix;
    if (msg.level == spdlog::level::warn) prefix = "warning: ";
    if (msg.level == spdlog::level::debug || msg.level == spdlog::level::trace) prefix = "debug: ";
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelPrefix>();
  }
};

}  // namespace

absl::StatusOr<spdlog::level::level_enum> ParseLogLevel(const std::string& text) {
  if (text == "trace") return spdlog::level::trace;
  if (text == "debug") return spdlog::level::debug;
  if (text == "info") return spdlog::level::info;
  if (text == "warn" || text == "warning") return spdlog::level::warn;
  if (text == "error") return spdlog::level::err;
  return absl::InvalidArgumentError(
      absl::StrCat("--log-level is '", text, "'; it must be trace, debug, info, warn or error"));
}

absl::StatusOr<LogFormat> ParseLogFormat(const std::string& text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--log-format is '", text, "'; it must be text or json"));
}

void ApplyLogFormat(spdlog::logger& logger, LogFormat format) {
  if (format == LogFormat::kText) {
    logger.set_formatter(std::make_unique<spdlog::pattern_formatter>());
    return;
  }
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<JsonEscapedMessage>('*').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"%n","msg":"%*"})");
  logger.set_formatter(std::move(formatter));
}

spdlog::logger& CommandLineLogger(const std::string& program) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string name = "cli:" + program;
  std::shared_ptr<spdlog::logger> logger = spdlog::get(name);
  if (logger == nullptr) {
    logger =
        std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::stderr_sink_mt>());
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<LevelPrefix>('W').set_pattern(program + ": %W%v");
    logger->set_formatter(std::move(formatter));
    logger->flush_on(spdlog::level::trace);
    spdlog::register_logger(logger);
  }
  return *logger;  // the registry keeps it alive
}

}  // namespace clustercert
