#include "controller/journal/run_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errno_text.h"
#include "common/grpc_status.h"  // ClipValue
#include "google/protobuf/util/json_util.h"

namespace clustercert::controller::journal {
namespace {

std::string SizeText(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? absl::StrCat(bytes >> 20, " MiB")
                                    : absl::StrCat(bytes, " bytes");
}

// The whole buffer, through short writes and signals.
bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

absl::Status CannotOpen(const std::string& path, int err, const char* fix) {
  return absl::PermissionDeniedError(
      absl::StrCat("cannot open the run journal ", path, ": ", ErrnoText(err), "; ", fix));
}

// One line into `contents`; false when it is no record this reader takes.
bool TakeRecord(const std::string& line, bool first, JournalContents& contents) {
  v1::JournalRecord record;
  google::protobuf::util::JsonParseOptions options;
  // A field this release does not know could be one the result needs:
  // such a line is measured again rather than read in part.
  options.ignore_unknown_fields = false;
  if (!google::protobuf::util::JsonStringToMessage(line, &record, options).ok()) return false;
  if (first != record.has_header()) return false;  // the header comes once, first
  switch (record.record_case()) {
    case v1::JournalRecord::kHeader:
      contents.header = std::move(*record.mutable_header());
      return true;
    case v1::JournalRecord::kPair:
      contents.pairs.push_back(std::move(*record.mutable_pair()));
      return true;
    case v1::JournalRecord::kSweep:
      contents.sweeps.push_back(std::move(*record.mutable_sweep()));
      return true;
    case v1::JournalRecord::kUplinkRun:
      contents.uplink_runs.push_back(std::move(*record.mutable_uplink_run()));
      return true;
    case v1::JournalRecord::kResumedAt:
      ++contents.resumes;
      return true;
    case v1::JournalRecord::kFinishedAt:
      contents.finished_at = record.finished_at();
      return true;
    default:
      return false;
  }
}

// Splits what `fd` holds into lines, none kept beyond `limits.max_line_bytes`
// (a longer one is skipped whole and counted), and hands each to TakeRecord.
// Returns whether the first line was a header.
bool ReadLines(int fd, const ReadLimits& limits, JournalContents& contents) {
  std::string line;
  bool overlong = false;
  bool first = true;
  bool has_header = false;
  auto end_line = [&] {
    if (line.empty() && !overlong) return;  // blank lines are nobody's record
    const bool taken = !overlong && TakeRecord(line, first, contents);
    if (first) has_header = taken;
    if (!taken) ++contents.ignored_lines;
    first = false;
    line.clear();
    overlong = false;
  };
  char buffer[64 * 1024];
  size_t total = 0;
  while (total < limits.max_file_bytes) {
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
  end_line();  // a last line without its newline: torn, unless it parses whole
  return has_header;
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

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Create(
    const std::string& path, const v1::JournalHeader& header) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return CannotOpen(path, errno,
                      "pass --out with a writable directory (a new run never reuses one)");
  }
  std::unique_ptr<JournalWriter> writer(new JournalWriter(path, std::move(fd)));
  v1::JournalRecord record;
  *record.mutable_header() = header;
  if (auto written = writer->Append(record); !written.ok()) return written;
  return writer;
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::OpenForAppend(
    const std::string& path) {
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
  std::unique_ptr<JournalWriter> writer(new JournalWriter(path, std::move(fd)));
  // The torn line stays unreadable (and is skipped); the next starts clean.
  if (last != '\n') {
    if (auto ended = writer->WriteLine(""); !ended.ok()) return ended;
  }
  return writer;
}

absl::Status JournalWriter::Append(const v1::JournalRecord& record) {
  auto line = RecordLine(record);
  if (!line.ok()) return line.status();
  return WriteLine(*line);
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

absl::StatusOr<JournalContents> ReadJournal(const std::string& path, ReadLimits limits) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat(
          "there is no run journal ", path,
          ": --resume takes the directory a run printed as it started (its \"[output]\" line); "
          "a run without one cannot be resumed, run the plan again"));
    }
    return CannotOpen(path, err, "check the file's permissions");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a regular file; pass the directory a run wrote"));
  }
  if (static_cast<uint64_t>(st.st_size) > limits.max_file_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the run journal ", path, " is ", st.st_size, " bytes, more than the ",
                     SizeText(limits.max_file_bytes),
                     " a journal may hold; it is not one this controller wrote: "
                     "run the plan again without --resume"));
  }
  JournalContents contents;
  if (!ReadLines(fd.get(), limits, contents)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the run journal ", path,
        " does not start with its header line (it is empty, torn or edited): nothing in it can "
        "be matched to a plan; run the plan again without --resume"));
  }
  if (contents.header.format() != kJournalFormat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the run journal ", path, " is in format '", ClipValue(contents.header.format()),
        "'; this release "
        "reads '",
        kJournalFormat,
        "': resume it with the release that wrote it, or run the "
        "plan again"));
  }
  return contents;
}

}  // namespace clustercert::controller::journal
