#pragma once

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// The key that authenticates each line of a run's journal (HMAC-SHA256).
//
// `run --resume` takes the journal's results over as if measured, so a line
// edited on disk (a dead uplink's 0 Gb/s made 400) would be certified. Each
// line therefore carries a MAC under a per-run secret, and a line whose MAC
// does not match is measured again, never taken over. Where the secret comes
// from decides who cannot forge lines:
//
// - A plan with certificate.signing_key: derived from that Ed25519 private
//   key and the run's nonce (HMAC of the raw key). Forging a line then takes
//   the signing key, which forges certificates outright anyway: the journal
//   is exactly as strong as the certificate it feeds. Nothing secret lies in
//   the run directory, so whoever can write the directory (replace the
//   journal and any key file in it) still cannot forge.
// - A plan without one (unsigned certificates): 32 random bytes in
//   journal.key, 0600, created O_EXCL next to the journal. This stops edits
//   by anyone who can change the journal but not read that file, accidents
//   (a hand edit, a line pasted from another run), and nothing more: an
//   unsigned certificate's author is trusted anyway.
//
// The resuming plan, never the journal, decides which applies (the plan's
// digest is in the journal's header, so the plan cannot change between the
// run and its resume). Every run draws its own nonce, so a line from another
// run (even of the same plan and key) fails its MAC.

namespace clustercert::controller::journal {

inline constexpr char kJournalKeyFile[] = "journal.key";

class JournalKey {
 public:
  // `secret` is the HMAC key; `source` says where it came from, for
  // messages ("the plan's signing key k.pem", "DIR/journal.key").
  JournalKey(std::string secret, std::string run_nonce, std::string source)
      : secret_(std::move(secret)), run_nonce_(std::move(run_nonce)), source_(std::move(source)) {}

  // A new run's key: derived from `signing_key` when it is not empty, else a
  // new random journal.key in `run_dir` (refused when one exists).
  static absl::StatusOr<JournalKey> ForNewRun(const std::string& run_dir,
                                              const std::string& signing_key,
                                              const std::string& run_nonce);
  // The key of the run being resumed: derived from `signing_key` when it is
  // not empty, else read from `run_dir`/journal.key (which must be a regular
  // file owned by us and readable by nobody else).
  static absl::StatusOr<JournalKey> ForResume(const std::string& run_dir,
                                              const std::string& signing_key,
                                              const std::string& run_nonce);

  // The MAC of one record's bytes, as 64 lowercase hex digits.
  std::string Mac(absl::string_view record) const;
  // Whether `mac_hex` is Mac(record) (compared in constant time).
  bool Matches(absl::string_view record, absl::string_view mac_hex) const;

  const std::string& source() const { return source_; }

 private:
  std::string secret_;
  std::string run_nonce_;
  std::string source_;
};

// A fresh run nonce: 128 bits from the kernel's CSPRNG as 32 hex digits.
absl::StatusOr<std::string> NewRunNonce();

}  // namespace clustercert::controller::journal
