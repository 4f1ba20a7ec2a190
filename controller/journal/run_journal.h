#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clustercert/v1/journal.pb.h"
#include "common/unique_fd.h"
#include "controller/journal/journal_key.h"

// The run's journal, journal.jsonl in its output directory: a header line,
// then one line per result as it completes (proto/clustercert/v1/journal.proto
// in its JSON mapping). A controller killed at any instant leaves every
// record it finished writing readable; `run --resume DIR` reads them back
// and measures only the rest.
//
// Each line ends in its MAC: the record's JSON with `,"mac":"<64 hex>"`
// added before its closing brace, the MAC (journal_key.h) taken over the
// record's JSON exactly as written and the run's nonce (in the header). A
// line whose MAC is missing or does not match is not taken over: its result
// is measured again. Format 1 journals (before MACs) are refused whole.

namespace clustercert::controller::journal {

inline constexpr char kJournalFile[] = "journal.jsonl";
inline constexpr char kJournalFormat[] = "clustercert-journal/2";
// The format before each line carried a MAC.
inline constexpr char kJournalFormatWithoutMacs[] = "clustercert-journal/1";

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
  // what a resumed certificate will vouch for. The header gets a fresh
  // run_nonce when it has none; the lines' key is derived from
  // `signing_key` (the plan's certificate.signing_key) when it is not empty,
  // else a new journal.key is made next to the journal (journal_key.h).
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Create(const std::string& path,
                                                               const v1::JournalHeader& header,
                                                               const std::string& signing_key = "");
  // The journal of a run being resumed, for appending, with the key its
  // reading established (JournalContents::key). A last line torn by the
  // kill is ended first, so the next record starts on a line of its own.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> OpenForAppend(const std::string& path,
                                                                      JournalKey key);

  absl::Status Append(const v1::JournalRecord& record);

  const std::string& path() const { return path_; }
  // The first failed write's sentence; empty while every write succeeded.
  std::string failure() const;

 private:
  JournalWriter(std::string path, UniqueFd fd, JournalKey key)
      : path_(std::move(path)), key_(std::move(key)), fd_(std::move(fd)) {}
  absl::Status WriteLine(const std::string& line);

  const std::string path_;
  const JournalKey key_;
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
  // Lines not taken over (torn by a kill mid-write, edited, without or with
  // a wrong MAC, copied from another run): their results count as not
  // completed and are measured again.
  int ignored_lines = 0;
  // One sentence per ignored line, naming its number and why (at most
  // kMaxIgnoredWarnings, then one that counts the rest).
  std::vector<std::string> warnings;
  // The key the lines were checked with, for appending (OpenForAppend).
  std::optional<JournalKey> key;
};

inline constexpr size_t kMaxIgnoredWarnings = 20;

// Reads the journal at `path`, checking each line's MAC with the key of the
// run (JournalKey::ForResume: derived from `signing_key` when it is not
// empty, else the journal.key next to `path`). Fails, with a sentence naming
// the file and what to do, when it is missing, larger than `limits` allow,
// has no header line, its header's MAC does not match, it is in format 1
// (no MACs), or its key cannot be had; every other line that cannot be
// authenticated or read is counted, named in `warnings` and skipped.
absl::StatusOr<JournalContents> ReadJournal(const std::string& path, ReadLimits limits = {},
                                            const std::string& signing_key = "");

// One record's JSON (no MAC, no newline): proto JSON, field names as in the
// .proto, on one line.
absl::StatusOr<std::string> RecordLine(const v1::JournalRecord& record);

// The journal line of a record's JSON under `key`: `record` with
// `,"mac":"<hex>"` before its closing brace.
std::string MacLine(const std::string& record, const JournalKey& key);

}  // namespace clustercert::controller::journal
