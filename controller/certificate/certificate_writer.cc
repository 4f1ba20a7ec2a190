#include "controller/certificate/certificate_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/time_format.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::controller {

namespace {

absl::Status PrintJson(const google::protobuf::Message& message, std::string* json) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  auto status = google::protobuf::util::MessageToJsonString(message, json, options);
  if (status.ok()) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("cannot encode the certificate as JSON: ", std::string(status.message())));
}

// `json` (one printed message, "{...}\n") indented by `indent`, without its
// final newline. Safe line by line: a JSON string holds no raw newline.
void AppendIndented(absl::string_view json, absl::string_view indent, std::string* out) {
  if (absl::EndsWith(json, "\n")) json.remove_suffix(1);
  bool first = true;
  for (absl::string_view line : absl::StrSplit(json, '\n')) {
    absl::StrAppend(out, first ? "" : "\n", indent, line);
    first = false;
  }
}

bool StreamedField(const google::protobuf::FieldDescriptor& field) {
  return field.is_repeated() &&
         field.cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE;
}

}  // namespace

// Printed in parts: protobuf's printer with always_print_primitive_fields
// builds a tree of the whole message first (about 0.25 MB per node of a
// cluster: 260 MB at 1,024 nodes, the controller's peak), so the top level's
// repeated messages (nodes, checks, pairs, ...) are printed one element at a
// time into the skeleton's empty arrays, and each goes to `out` at once. The
// bytes are the same as printing the whole (certificate_writer_test
// compares them).
absl::Status WriteCertificateJson(const v1::Certificate& certificate, std::ostream& out) {
  const google::protobuf::Descriptor& descriptor = *certificate.GetDescriptor();
  google::protobuf::FieldMask skeleton_fields;
  for (int i = 0; i < descriptor.field_count(); ++i) {
    if (!StreamedField(*descriptor.field(i)))
      skeleton_fields.add_paths(descriptor.field(i)->name());
  }
  v1::Certificate skeleton;
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(
      certificate, skeleton_fields, google::protobuf::util::FieldMaskUtil::MergeOptions(),
      &skeleton);
  std::string skeleton_json;
  if (absl::Status status = PrintJson(skeleton, &skeleton_json); !status.ok()) return status;
  // Where each streamed field's empty array sits in the skeleton (a
  // top-level key starts a line, one space in), in the skeleton's order.
  std::vector<std::pair<size_t, const google::protobuf::FieldDescriptor*>> arrays;
  const google::protobuf::Reflection& reflection = *certificate.GetReflection();
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor.field(i);
    if (!StreamedField(*field) || reflection.FieldSize(certificate, field) == 0) continue;
    const size_t at = skeleton_json.find(absl::StrCat("\n \"", field->name(), "\": []"));
    if (at == std::string::npos) {
      return absl::InternalError(absl::StrCat("cannot encode the certificate as JSON: no ",
                                              field->name(), " array in its skeleton"));
    }
    arrays.emplace_back(at + field->name().size() + 6, field);  // at its "[]"
  }
  std::sort(arrays.begin(), arrays.end());
  const absl::string_view skeleton_text = skeleton_json;
  size_t copied = 0;
  std::string element;
  std::string indented;
  for (const auto& [brackets, field] : arrays) {
    out << skeleton_text.substr(copied, brackets - copied) << "[\n";
    for (int j = 0; j < reflection.FieldSize(certificate, field); ++j) {
      element.clear();
      indented.clear();
      absl::Status status =
          PrintJson(reflection.GetRepeatedMessage(certificate, field, j), &element);
      if (!status.ok()) return status;
      AppendIndented(element, "  ", &indented);
      out << (j > 0 ? ",\n" : "") << indented;
    }
    out << "\n ]";
    copied = brackets + 2;
  }
  out << skeleton_text.substr(copied);
  return absl::OkStatus();
}

absl::StatusOr<std::string> CertificateJson(const v1::Certificate& certificate) {
  std::ostringstream json;
  if (absl::Status status = WriteCertificateJson(certificate, json); !status.ok()) return status;
  return std::move(json).str();
}

absl::StatusOr<std::string> CreateRunDirectory(const std::string& out_dir,
                                               const std::string& cluster, absl::Time stamp) {
  namespace fs = std::filesystem;
  const std::string base = absl::StrCat(cluster, "-", FormatUtcStamp(stamp));
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create the output directory ", out_dir,
                                                    ": ", ec.message(),
                                                    "; pass --out with a writable directory"));
  }
  fs::path dir = fs::path(out_dir) / base;
  // create_directory (not _directories) fails on one that exists, so two runs
  // started in the same second never share one.
  for (int n = 2; !fs::create_directory(dir, ec); ++n) {
    if (ec || n > 1000) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create ", dir.string(), ": ",
                       ec ? ec.message() : std::string("too many runs in this second"),
                       "; pass --out with a writable directory"));
    }
    dir = fs::path(out_dir) / absl::StrCat(base, "-", n);
  }
  return dir.string();
}

absl::StatusOr<std::string> WriteCertificateIn(const v1::Certificate& certificate,
                                               const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path = fs::path(dir) / "certificate.json";
  const fs::path partial = fs::path(dir) / "certificate.json.partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (absl::Status status = WriteCertificateJson(certificate, out); !status.ok()) return status;
    out << "\n";
    if (!out.flush()) {
      return absl::UnavailableError(absl::StrCat("cannot write ", partial.string(), ": ",
                                                 std::strerror(errno), "; check free disk space"));
    }
  }
  fs::rename(partial, path, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot rename ", partial.string(), " to ",
                                               path.string(), ": ", ec.message()));
  }
  return path.string();
}

absl::StatusOr<std::string> WriteCertificate(const v1::Certificate& certificate,
                                             const std::string& out_dir, absl::Time stamp) {
  auto dir = CreateRunDirectory(out_dir, certificate.cluster(), stamp);
  if (!dir.ok()) return dir.status();
  return WriteCertificateIn(certificate, *dir);
}

}  // namespace clustercert::controller
