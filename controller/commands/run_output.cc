#include "controller/commands/run_output.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"  // ClipValue
#include "common/time_format.h"
#include "controller/certificate/certificate_writer.h"

namespace clustercert::controller {

absl::StatusOr<RunOutput> StartRunOutput(const plan::Plan& plan, const std::string& out_dir,
                                         absl::Time now) {
  RunOutput output;
  auto dir = CreateRunDirectory(out_dir, plan.cluster, now);
  if (!dir.ok()) return dir.status();
  output.dir = *std::move(dir);
  v1::JournalHeader header;
  header.set_format(journal::kJournalFormat);
  header.set_plan_sha256(plan.sha256);
  header.set_cluster(plan.cluster);
  header.set_started(FormatUtc(now));
  header.set_plan_path(plan.path);
  auto writer = journal::JournalWriter::Create(
      (std::filesystem::path(output.dir) / journal::kJournalFile).string(), header,
      plan.certificate.signing_key);
  if (!writer.ok()) return writer.status();
  output.journal = *std::move(writer);
  return output;
}

absl::StatusOr<RunOutput> ResumeRunOutput(const plan::Plan& plan, const std::string& dir,
                                          absl::Time now) {
  const std::string path = (std::filesystem::path(dir) / journal::kJournalFile).string();
  auto contents = journal::ReadJournal(path, {}, plan.certificate.signing_key);
  if (!contents.ok()) return contents.status();
  const v1::JournalHeader& header = contents->header;
  if (header.plan_sha256() != plan.sha256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the run in ", dir, " was made from another plan: its journal ", path,
        " records plan sha256 ", ClipValue(header.plan_sha256()), " (cluster '",
        ClipValue(header.cluster()), "', ", ClipValue(header.plan_path()), "), and ", plan.path,
        " has sha256 ", plan.sha256,
        ": its results were judged by other thresholds; resume it with the plan it ran, "
        "unedited, or run this plan without --resume"));
  }
  if (!contents->finished_at.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the run in ", dir, " finished at ", ClipValue(contents->finished_at),
        " (its certificate is ", (std::filesystem::path(dir) / "certificate.json").string(),
        "): there is nothing to resume; run the plan again for a new certificate"));
  }
  auto writer = journal::JournalWriter::OpenForAppend(path, *contents->key);
  if (!writer.ok()) return writer.status();
  v1::JournalRecord resumed_at;
  resumed_at.set_resumed_at(FormatUtc(now));
  if (auto written = (*writer)->Append(resumed_at); !written.ok()) return written;

  RunOutput output;
  output.dir = dir;
  output.journal = *std::move(writer);
  output.carried.set_from_started_at(header.started());
  output.carried.set_from_journal(path);
  absl::Time started;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, header.started(), &started, &error)) {
    output.carried.set_age_s(absl::ToInt64Seconds(now - started));
  }
  output.resumed = *std::move(contents);
  return output;
}

void MarkRunFinished(RunOutput& output, absl::Time now) {
  v1::JournalRecord finished;
  finished.set_finished_at(FormatUtc(now));
  // Best effort: without it, a later --resume redoes the phases after pairwise.
  output.journal->Append(finished).IgnoreError();
}

}  // namespace clustercert::controller
