#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/journal/run_journal.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// Where `controller run` writes: the run's own directory, made before the
// first phase, and the journal in it that every completed result is
// appended to; for `--resume DIR`, also what the killed run's journal held.
struct RunOutput {
  std::string dir;
  std::unique_ptr<journal::JournalWriter> journal;
  std::optional<journal::JournalContents> resumed;  // set by --resume
  v1::Carried carried;  // what marks each result taken over from `resumed`
};

// A new run: OUT/<cluster>-<UTC stamp>/ and its journal, the header first.
absl::StatusOr<RunOutput> StartRunOutput(const plan::Plan& plan, const std::string& out_dir,
                                         absl::Time now);

// `--resume DIR`: reads DIR/journal.jsonl and opens it for appending (a
// `resumed_at` record first). Refused, with a sentence naming the file and
// what to do, when DIR has no journal, the journal is another plan's (both
// digests named) or its run finished.
absl::StatusOr<RunOutput> ResumeRunOutput(const plan::Plan& plan, const std::string& dir,
                                          absl::Time now);

// Appends `finished_at` once the certificate of an uninterrupted run is
// written: a later --resume of it is refused instead of redoing nothing.
void MarkRunFinished(RunOutput& output, absl::Time now);

}  // namespace clustercert::controller
