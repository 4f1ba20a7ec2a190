#include "controller/certificate/certificate_format.h"

#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/non_finite.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::controller {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::DynamicMessageFactory;
using google::protobuf::FieldDescriptorProto;
using google::protobuf::FileDescriptor;
using google::protobuf::FileDescriptorProto;
using google::protobuf::Message;

// The fields format 5 turned from strings into enums (message, field).
constexpr std::pair<const char*, const char*> kStringsBeforeFormat5[] = {
    {"Finding", "status"},
    {"Finding", "severity"},
    {"PhaseResult", "status"},
    {"UplinkSizing", "verdict"},
};

bool WasString(const std::string& message, const std::string& field) {
  for (const auto& [m, f] : kStringsBeforeFormat5) {
    if (message == m && field == f) return true;
  }
  return false;
}

// certificate.proto as format 4 had it: the current file with the fields
// above typed string again, built in a pool of its own. Derived from the
// generated descriptors rather than kept as a second .proto, so the two
// schemas cannot drift apart in any other field.
class Format4Schema {
 public:
  static const Format4Schema& Get() {
    static const Format4Schema* schema = new Format4Schema();
    return *schema;
  }

  std::unique_ptr<Message> New(const Descriptor& current) const {
    const Descriptor* legacy = pool_.FindMessageTypeByName(current.full_name());
    if (legacy == nullptr) return nullptr;
    return std::unique_ptr<Message>(factory_.GetPrototype(legacy)->New());
  }

 private:
  Format4Schema() { Add(*v1::Certificate::descriptor()->file()); }

  void Add(const FileDescriptor& file) {
    if (!added_.insert(file.name()).second) return;
    for (int i = 0; i < file.dependency_count(); ++i) Add(*file.dependency(i));
    FileDescriptorProto proto;
    file.CopyTo(&proto);
    if (&file == v1::Certificate::descriptor()->file()) RetypeAsStrings(proto);
    pool_.BuildFile(proto);
  }

  static void RetypeAsStrings(FileDescriptorProto& proto) {
    for (auto& message : *proto.mutable_message_type()) {
      for (auto& field : *message.mutable_field()) {
        if (!WasString(message.name(), field.name())) continue;
        field.set_type(FieldDescriptorProto::TYPE_STRING);
        field.clear_type_name();
      }
    }
  }

  std::set<std::string> added_;
  DescriptorPool pool_;
  mutable DynamicMessageFactory factory_{&pool_};
};

// What is signed: NaNs as the one quiet NaN, since a NaN's sign and payload
// (an agent's -nan) survive this encoding but not the JSON the certificate
// is stored as, so the signer and the verifier would hash different bytes.
std::string DeterministicEncoding(const Message& message) {
  std::unique_ptr<Message> canonical(message.New());
  canonical->CopyFrom(message);
  CanonicalizeNaNs(*canonical);
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  canonical->SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

// Copies `from` into `to` (the same message under the other schema) through
// proto3 JSON, where an enum and the string of its name are the same text.
// Zero enums and empty strings are left out, which is how both encodings
// leave them.
absl::Status CopyThroughJson(const Message& from, Message& to) {
  std::string json;
  auto printed = google::protobuf::util::MessageToJsonString(from, &json);
  if (!printed.ok()) return absl::InternalError(std::string(printed.message()));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &to, options);
  if (!parsed.ok()) return absl::InvalidArgumentError(std::string(parsed.message()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Certificate> ParseCertificateOfAnyFormat(const std::string& json) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  v1::Certificate certificate;
  auto direct = google::protobuf::util::JsonStringToMessage(json, &certificate, options);
  if (direct.ok()) return certificate;
  // An older certificate may hold a status string that is no enum name (an
  // empty one): read it as format 4 did, then carry it over by name.
  std::unique_ptr<Message> legacy = Format4Schema::Get().New(*v1::Certificate::descriptor());
  if (legacy == nullptr ||
      !google::protobuf::util::JsonStringToMessage(json, legacy.get(), options).ok()) {
    return absl::InvalidArgumentError(std::string(direct.message()));
  }
  const auto* version = legacy->GetDescriptor()->FindFieldByName("format_version");
  if (legacy->GetReflection()->GetUInt32(*legacy, version) >= kFirstEnumFormat) {
    return absl::InvalidArgumentError(std::string(direct.message()));
  }
  certificate.Clear();
  if (auto copied = CopyThroughJson(*legacy, certificate); !copied.ok()) return copied;
  return certificate;
}

std::string EncodingForFormat(const Message& part, uint32_t format_version) {
  if (format_version >= kFirstEnumFormat) return DeterministicEncoding(part);
  std::unique_ptr<Message> legacy = Format4Schema::Get().New(*part.GetDescriptor());
  // A copy that fails cannot have been what was signed: encode it as it is,
  // and the signature check reports the mismatch.
  if (legacy == nullptr || !CopyThroughJson(part, *legacy).ok()) {
    return DeterministicEncoding(part);
  }
  return DeterministicEncoding(*legacy);
}

}  // namespace clustercert::controller
