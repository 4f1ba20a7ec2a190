#include "controller/journal/run_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errno_text.h"
#include "common/grpc_status.h"  // ClipValue
#include "common/json_strict.h"
#include "common/printable.h"
#include "common/regular_file.h"
#include "common/write_all.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::controller::journal {
namespace {

std::string SizeText(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? absl::StrCat(bytes >> 20, " MiB")
                                    : absl::StrCat(bytes, " bytes");
}

absl::Status CannotOpen(const std::string& path, int err, const char* fix) {
  return absl::PermissionDeniedError(
      absl::StrCat("cannot open the run journal ", path, ": ", ErrnoText(err), "; ", fix));
}

constexpr absl::string_view kMacKey = R"("mac":")";
constexpr size_t kMacHexDigits = 64;

// A line's record (its JSON as the MAC covers it) and MAC; nullopt when the
// line does not end in one.
struct MacedLine {
  std::string record;
  std::string mac;
};
std::optional<MacedLine> SplitMac(const std::string& line) {
  const size_t tail = kMacKey.size() + kMacHexDigits + 2;  // "mac":"<hex>"}
  if (line.size() < tail + 1) return std::nullopt;
  const size_t key_at = line.size() - tail;
  if (line.compare(key_at, kMacKey.size(), kMacKey.data(), kMacKey.size()) != 0 ||
      line.compare(line.size() - 2, 2, "\"}") != 0) {
    return std::nullopt;
  }
  MacedLine maced;
  maced.mac = line.substr(key_at + kMacKey.size(), kMacHexDigits);
  if (line[key_at - 1] == ',') {
    maced.record = line.substr(0, key_at - 1) + "}";
  } else if (key_at == 1 && line[0] == '{') {
    maced.record = "{}";
  } else {
    return std::nullopt;
  }
  return maced;
}

// A record's JSON, strictly: a key given twice (which protobuf's reader
// takes the last of) is no record this reader takes.
absl::Status ParseRecord(const std::string& json, v1::JournalRecord& record) {
  if (auto strict = CheckStrictJson(json, "the line"); !strict.ok()) return strict;
  google::protobuf::util::JsonParseOptions options;
  // A field this release does not know could be one the result needs:
  // such a line is measured again rather than read in part.
  options.ignore_unknown_fields = false;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &record, options);
  if (!parsed.ok()) return absl::InvalidArgumentError(std::string(parsed.message()));
  return absl::OkStatus();
}

// Reads a journal's lines in order: the header first, which names the run
// whose key checks every later line's MAC; then each record into
// `contents`, or, when it cannot be authenticated or read, a warning.
class JournalParser {
 public:
  JournalParser(const std::string& path, const std::string& signing_key, JournalContents& contents)
      : path_(path), signing_key_(signing_key), contents_(contents) {}

  // One line (1-based `number`); an error only for the header line.
  absl::Status Line(const std::string& line, size_t number, bool overlong, size_t max_bytes) {
    if (line.empty() && !overlong) return absl::OkStatus();  // nobody's record
    if (!header_seen_) {
      header_seen_ = true;
      if (overlong) return NoHeader();
      return Header(line);
    }
    if (overlong) {
      Ignore(number, absl::StrCat("it is longer than the ", max_bytes, " bytes a line may hold"));
      return absl::OkStatus();
    }
    Record(line, number);
    return absl::OkStatus();
  }

  bool has_header() const { return header_seen_; }

  absl::Status NoHeader() const {
    return absl::InvalidArgumentError(absl::StrCat(
        "the run journal ", path_,
        " does not start with its header line (it is empty, torn or edited): nothing in it can "
        "be matched to a plan; run the plan again without --resume"));
  }

 private:
  absl::Status Header(const std::string& line) {
    std::optional<MacedLine> maced = SplitMac(line);
    v1::JournalRecord record;
    if (!maced) {
      // A format 1 journal's header, which carries no MAC.
      if (ParseRecord(line, record).ok() && record.has_header() &&
          record.header().format() == kJournalFormatWithoutMacs) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the run journal ", path_, " is in format '", kJournalFormatWithoutMacs,
            "', written by a controller before journal lines carried a MAC: none of its results "
            "can be authenticated, so none is taken over; run the plan again without --resume"));
      }
      return NoHeader();
    }
    if (!ParseRecord(maced->record, record).ok() || !record.has_header()) return NoHeader();
    const v1::JournalHeader& header = record.header();
    if (header.format() != kJournalFormat) {
      return absl::InvalidArgumentError(
          absl::StrCat("the run journal ", path_, " is in format '", ClipValue(header.format()),
                       "'; this release reads '", kJournalFormat,
                       "': resume it with the release that wrote it, or run the plan again"));
    }
    if (header.run_nonce().empty()) return NoHeader();
    auto key = JournalKey::ForResume(std::filesystem::path(path_).parent_path().string(),
                                     signing_key_, header.run_nonce());
    if (!key.ok()) return key.status();
    if (!key->Matches(maced->record, maced->mac)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the run journal ", path_, "'s header line fails its MAC under ", key->source(),
          ": the journal was edited or replaced, or the key changed since the run; none of its "
          "results can be trusted: run the plan again without --resume"));
    }
    contents_.header = std::move(*record.mutable_header());
    contents_.key = *std::move(key);
    return absl::OkStatus();
  }

  void Record(const std::string& line, size_t number) {
    std::optional<MacedLine> maced = SplitMac(line);
    if (!maced) {
      Ignore(number,
             "it has no MAC at its end (a write torn by the kill, or a line added by hand)");
      return;
    }
    if (!contents_.key->Matches(maced->record, maced->mac)) {
      Ignore(number,
             "its MAC does not match (the line was edited, or copied from another run's "
             "journal)");
      return;
    }
    v1::JournalRecord record;
    if (auto parsed = ParseRecord(maced->record, record); !parsed.ok()) {
      Ignore(number, absl::StrCat("it is no record this release reads (",
                                  PrintableText(parsed.message(), 400), ")"));
      return;
    }
    switch (record.record_case()) {
      case v1::JournalRecord::kPair:
        contents_.pairs.push_back(std::move(*record.mutable_pair()));
        return;
      case v1::JournalRecord::kSweep:
        contents_.sweeps.push_back(std::move(*record.mutable_sweep()));
        return;
      case v1::JournalRecord::kUplinkRun:
        contents_.uplink_runs.push_back(std::move(*record.mutable_uplink_run()));
        return;
      case v1::JournalRecord::kResumedAt:
        ++contents_.resumes;
        return;
      case v1::JournalRecord::kFinishedAt:
        contents_.finished_at = record.finished_at();
        return;
      case v1::JournalRecord::kHeader:
        Ignore(number, "it is a second header (a header comes once, first)");
        return;
      default:
        Ignore(number, "it holds no record");
        return;
    }
  }

  void Ignore(size_t number, const std::string& why) {
    ++contents_.ignored_lines;
    if (contents_.warnings.size() < kMaxIgnoredWarnings) {
      contents_.warnings.push_back(absl::StrCat("line ", number, " of ", path_,
                                                " is not taken over: ", why,
                                                "; what it held is measured again"));
    }
  }

  const std::string& path_;
  const std::string& signing_key_;
  JournalContents& contents_;
  bool header_seen_ = false;
};

// Splits what `fd` holds into lines, none kept beyond `limits.max_line_bytes`
// (a longer one is skipped whole and counted), and hands each to `parser`.
absl::Status ReadLines(int fd, const ReadLimits& limits, JournalParser& parser) {
  std::string line;
  bool overlong = false;
  size_t number = 1;
  absl::Status status;
  auto end_line = [&] {
    if (status.ok()) status = parser.Line(line, number, overlong, limits.max_line_bytes);
    ++number;
    line.clear();
    overlong = false;
  };
  char buffer[64 * 1024];
  size_t total = 0;
  while (total < limits.max_file_bytes && status.ok()) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += static_cast<size_t>(n);
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        end_line();
      } else if (line.size() < limits.max_line_bytes) {
        line.push_back(buffer[i]);
      } else {
        overlong = true;
        line.clear();
        line.shrink_to_fit();
      }
    }
  }
  end_line();  // a last line without its newline: torn, unless its MAC holds
  if (!status.ok()) return status;
  return parser.has_header() ? absl::OkStatus() : parser.NoHeader();
}

}  // namespace

absl::StatusOr<std::string> RecordLine(const v1::JournalRecord& record) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;  // one line: string escapes keep newlines out
  options.preserve_proto_field_names = true;
  std::string line;
  auto status = google::protobuf::util::MessageToJsonString(record, &line, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot encode a journal record: ", std::string(status.message())));
  }
  return line;
}

std::string MacLine(const std::string& record, const JournalKey& key) {
  const std::string mac = absl::StrCat(kMacKey, key.Mac(record), "\"}");
  if (record.size() <= 2) return absl::StrCat("{", mac);  // "{}"
  return absl::StrCat(absl::string_view(record).substr(0, record.size() - 1), ",", mac);
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Create(
    const std::string& path, const v1::JournalHeader& header, const std::string& signing_key) {
  v1::JournalRecord record;
  *record.mutable_header() = header;
  if (header.run_nonce().empty()) {
    auto nonce = NewRunNonce();
    if (!nonce.ok()) return nonce.status();
    record.mutable_header()->set_run_nonce(*nonce);
  }
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return CannotOpen(path, errno,
                      "pass --out with a writable directory (a new run never reuses one)");
  }
  auto key = JournalKey::ForNewRun(std::filesystem::path(path).parent_path().string(), signing_key,
                                   record.header().run_nonce());
  if (!key.ok()) {
    ::unlink(path.c_str());  // a journal nobody can authenticate is no use
    return key.status();
  }
  std::unique_ptr<JournalWriter> writer(new JournalWriter(path, std::move(fd), *std::move(key)));
  if (auto written = writer->Append(record); !written.ok()) return written;
  return writer;
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::OpenForAppend(const std::string& path,
                                                                            JournalKey key) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC));
  if (!fd.valid()) {
    return CannotOpen(path, errno, "check the directory's permissions, or run the plan again");
  }
  struct stat st {};
  char last = '\n';
  if (::fstat(fd.get(), &st) == 0 && st.st_size > 0 &&
      ::pread(fd.get(), &last, 1, st.st_size - 1) != 1) {
    last = '\n';
  }
  std::unique_ptr<JournalWriter> writer(new JournalWriter(path, std::move(fd), std::move(key)));
  // The torn line stays unreadable (and is skipped); the next starts clean.
  if (last != '\n') {
    if (auto ended = writer->WriteLine(""); !ended.ok()) return ended;
  }
  return writer;
}

absl::Status JournalWriter::Append(const v1::JournalRecord& record) {
  auto line = RecordLine(record);
  if (!line.ok()) return line.status();
  return WriteLine(MacLine(*line, key_));
}

absl::Status JournalWriter::WriteLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_.empty()) return absl::UnavailableError(failure_);
  if (!WriteAll(fd_.get(), line + "\n") || ::fdatasync(fd_.get()) != 0) {
    failure_ = absl::StrCat("cannot append to the run journal ", path_, ": ", ErrnoText(errno),
                            "; the run goes on, but a resume of it would measure again what "
                            "completed from here on (check free disk space)");
    return absl::UnavailableError(failure_);
  }
  return absl::OkStatus();
}

std::string JournalWriter::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

absl::StatusOr<JournalContents> ReadJournal(const std::string& path, ReadLimits limits,
                                            const std::string& signing_key) {
  // Opened as every file read on someone's word is (common/regular_file.h):
  // a FIFO or device put where the journal should be is refused by its type,
  // never opened for reading.
  absl::StatusOr<UniqueFd> fd = OpenRegularFile(path, "run journal", /*follow_symlinks=*/true);
  if (absl::IsNotFound(fd.status())) {
    return absl::NotFoundError(absl::StrCat(
        "there is no run journal ", path,
        ": --resume takes the directory a run printed as it started (its \"[output]\" line); "
        "a run without one cannot be resumed, run the plan again"));
  }
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return CannotOpen(path, errno, "check the file's permissions");
  if (static_cast<uint64_t>(st.st_size) > limits.max_file_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the run journal ", path, " is ", st.st_size, " bytes, more than the ",
                     SizeText(limits.max_file_bytes),
                     " a journal may hold; it is not one this controller wrote: "
                     "run the plan again without --resume"));
  }
  JournalContents contents;
  JournalParser parser(path, signing_key, contents);
  if (auto read = ReadLines(fd->get(), limits, parser); !read.ok()) return read;
  if (contents.ignored_lines > static_cast<int>(contents.warnings.size())) {
    contents.warnings.push_back(
        absl::StrCat("and ", contents.ignored_lines - static_cast<int>(contents.warnings.size()),
                     " more line(s) of ", path, " not taken over"));
  }
  return contents;
}

}  // namespace clustercert::controller::journal
