#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clustercert/v1/journal.pb.h"
#include "common/unique_fd.h"

// The run's journal, journal.jsonl in its output directory: a header line,
// then one line per result as it completes (proto/clustercert/v1/journal.proto
// in its JSON mapping). A controller killed at any instant leaves every
// record it finished writing readable; `run --resume DIR` reads them back
// and measures only the rest.

namespace clustercert::controller::journal {

inline constexpr char kJournalFile[] = "journal.jsonl";
inline constexpr char kJournalFormat[] = "clustercert-journal/1";

// What is read back: the file is someone's bytes on disk by then (edited,
// truncated, swapped), so both its size and each line are bounded. A cell
// is a few KiB and a sweep with its table tens of KiB.
struct ReadLimits {
  size_t max_file_bytes = size_t{512} << 20;
  size_t max_line_bytes = size_t{4} << 20;
};

// Appends records, one line each, written with one write() and flushed to
// the disk (fdatasync) before Append returns: at these rates (a cell takes
// seconds) the cost is nothing, and a record is then on disk even when the
// machine, not only the controller, goes down. Thread-safe (the 1-node
// sweeps finish on threads of their own). After a failed write it stops
// writing and says so once: the run goes on, only its resume would measure
// more again.
class JournalWriter {
 public:
  // A new journal at `path` (refused when one exists: a run never writes
  // into another's), its header the first line. Mode 0600: the records are
  // what a resumed certificate will vouch for.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Create(const std::string& path,
                                                               const v1::JournalHeader& header);
  // The journal of a run being resumed, for appending. A last line torn by
  // the kill is ended first, so the next record starts on a line of its own.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> OpenForAppend(const std::string& path);

  absl::Status Append(const v1::JournalRecord& record);

  const std::string& path() const { return path_; }
  // The first failed write's sentence; empty while every write succeeded.
  std::string failure() const;

 private:
  JournalWriter(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  absl::Status WriteLine(const std::string& line);

  const std::string path_;
  mutable std::mutex mutex_;
  UniqueFd fd_;          // guarded by mutex_
  std::string failure_;  // guarded by mutex_
};

// What a journal holds, in the order it was written.
struct JournalContents {
  v1::JournalHeader header;
  std::vector<v1::PairResult> pairs;
  std::vector<v1::CollectiveSweep> sweeps;
  std::vector<v1::UplinkThroughput> uplink_runs;
  std::string finished_at;  // set when the run ended uninterrupted
  int resumes = 0;          // earlier resumes that appended to it
  // Lines that are not a record (torn by a kill mid-write, or edited): their
  // results count as not completed and are measured again.
  int ignored_lines = 0;
};

// Reads the journal at `path`. Fails, with a sentence naming the file and
// what to do, when it is missing, larger than `limits` allow, or has no
// header line; every other unreadable line is counted and skipped.
absl::StatusOr<JournalContents> ReadJournal(const std::string& path, ReadLimits limits = {});

// One record as its journal line (no newline): proto JSON, field names as
// in the .proto, on one line.
absl::StatusOr<std::string> RecordLine(const v1::JournalRecord& record);

}  // namespace clustercert::controller::journal
