#include "common/grpc_status.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace clustercert {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      TruncateMessage(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

std::string TruncateMessage(absl::string_view message, size_t max_bytes) {
  if (message.size() <= max_bytes) return std::string(message);
  size_t keep = max_bytes;
  // Back off to the start of a UTF-8 sequence, so the cut text stays valid.
  while (keep > 0 && (static_cast<unsigned char>(message[keep]) & 0xC0) == 0x80) --keep;
  return absl::StrCat(message.substr(0, keep), "... (", message.size() - keep, " bytes cut)");
}

std::string ClipValue(absl::string_view value) {
  const absl::string_view head = value.substr(0, kMaxEchoedValueBytes);
  std::string text = absl::CEscape(head);
  if (head.size() < value.size()) absl::StrAppend(&text, "... (", value.size(), " bytes)");
  return text;
}

}  // namespace clustercert
