#include "controller/certificate/certificate_schema.h"

#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/certificate.pb.h"
#include "google/protobuf/descriptor.h"

namespace clustercert::controller {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;

constexpr char kDialect[] = "https://json-schema.org/draft/2020-12/schema";
constexpr char kSchemaId[] = "https://clustercert.dev/schema/certificate-2.json";

// Fields every certificate has, whichever release wrote it (schema-1
// fixtures included): the reader and `verify` rely on them.
constexpr const char* kCertificateRequired[] = {
    "format_version", "tool", "tool_version", "cluster", "verdict", "phases", "nodes", "checks",
};

// Schema-1 certificates from earlier releases must validate too, so the
// version is bounded below instead of pinned to the current one.
constexpr char kFormatVersionField[] = "clustercert.v1.Certificate.format_version";

// Generated code carries no source info, so the comments of certificate.proto
// are not reachable from the descriptor; these are the fields a reader of the
// schema most needs explained.
struct FieldNote {
  const char* field;  // full name
  const char* description;
};
constexpr FieldNote kFieldNotes[] = {
    {kFormatVersionField,
     "The certificate format: 8 as this release writes it (2 added signing, plan_yaml and "
     "keys; 3 the uplink section and the management subnet check; 4 node versions, the "
     "GPU-rail map, host settings, consistency checks, the rail-derived busbw floor and 1-node "
     "sweeps on every node; 5 the statuses, severities and sizing verdict as enums, spelled "
     "as before; 6 each cell's traffic class and service level, the incast rounds and the "
     "lossless.* and incast.* checks; 7 each cell's path MTU, the kernel modules and DCQCN; 8 "
     "the rails' neighbours and modules, each cell's BER, the link flaps, the cable plan's "
     "bytes and the cabling.*, cable.* and port.flap checks); 1 to 7 for certificates from "
     "earlier releases, which still validate."},
    {"clustercert.v1.Certificate.verdict",
     "certified | not-certified; verdict_reasons says why not."},
    {"clustercert.v1.Certificate.plan_yaml",
     "The plan file's text as run; its SHA-256 is plan_sha256."},
    {"clustercert.v1.Certificate.skipped",
     "Everything that did not run (a phase, a check, a pair cell or a sweep), and why."},
    {"clustercert.v1.Certificate.baseline",
     "The certificate a partial re-certification (`run --baseline OLD.json --only NODE`) "
     "started from; absent on a full run."},
    {"clustercert.v1.Certificate.signature",
     "Ed25519 signature over the deterministic protobuf encoding of the whole certificate with "
     "signature.value empty; absent when the plan names no signing key."},
};

// A JSON value that keeps object members in insertion order: the committed
// schema is compared byte for byte, so its order is part of the contract.
class JsonValue {
 public:
  static JsonValue Object() { return JsonValue(Kind::kObject, ""); }
  static JsonValue Array() { return JsonValue(Kind::kArray, ""); }
  static JsonValue String(std::string_view text) { return JsonValue(Kind::kScalar, Quote(text)); }
  // A number or true/false, written as given.
  static JsonValue Literal(std::string_view token) {
    return JsonValue(Kind::kScalar, std::string(token));
  }

  JsonValue& Set(std::string key, JsonValue value) {
    keys_.push_back(std::move(key));
    values_.push_back(std::move(value));
    return *this;
  }
  JsonValue& Push(JsonValue value) {
    values_.push_back(std::move(value));
    return *this;
  }
  // Appends the members of another object.
  JsonValue& Merge(JsonValue other) {
    for (size_t i = 0; i < other.keys_.size(); ++i) {
      Set(std::move(other.keys_[i]), std::move(other.values_[i]));
    }
    return *this;
  }

  void Write(int depth, std::string* out) const {
    if (kind_ == Kind::kScalar) {
      *out += token_;
      return;
    }
    const bool object = kind_ == Kind::kObject;
    if (values_.empty()) {
      *out += object ? "{}" : "[]";
      return;
    }
    *out += object ? "{\n" : "[\n";
    const std::string indent(2 * (depth + 1), ' ');
    for (size_t i = 0; i < values_.size(); ++i) {
      *out += indent;
      if (object) absl::StrAppend(out, Quote(keys_[i]), ": ");
      values_[i].Write(depth + 1, out);
      *out += i + 1 < values_.size() ? ",\n" : "\n";
    }
    *out += std::string(2 * depth, ' ');
    *out += object ? "}" : "]";
  }

 private:
  enum class Kind { kObject, kArray, kScalar };
  JsonValue(Kind kind, std::string token) : kind_(kind), token_(std::move(token)) {}

  static std::string Quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
          } else {
            out += c;
          }
      }
    }
    out += "\"";
    return out;
  }

  Kind kind_;
  std::string token_;              // kScalar: the encoded token
  std::vector<std::string> keys_;  // kObject: one per value
  std::vector<JsonValue> values_;
};

JsonValue Type(std::string_view type) {
  return JsonValue::Object().Set("type", JsonValue::String(type));
}

JsonValue IntegerRange(std::string_view minimum, std::string_view maximum) {
  return Type("integer")
      .Set("minimum", JsonValue::Literal(minimum))
      .Set("maximum", JsonValue::Literal(maximum));
}

// proto3 JSON prints 64-bit integers as decimal strings (JavaScript numbers
// lose precision above 2^53); its parser takes plain numbers too.
JsonValue Int64Schema(bool is_signed) {
  JsonValue as_string =
      Type("string").Set("pattern", JsonValue::String(is_signed ? "^-?[0-9]+$" : "^[0-9]+$"));
  JsonValue as_number = is_signed ? IntegerRange("-9223372036854775808", "9223372036854775807")
                                  : IntegerRange("0", "18446744073709551615");
  return JsonValue::Object().Set(
      "anyOf", JsonValue::Array().Push(std::move(as_string)).Push(std::move(as_number)));
}

// Non-finite doubles have no JSON number; proto3 JSON spells them as strings.
JsonValue FloatingSchema() {
  JsonValue special = Type("string").Set("enum", JsonValue::Array()
                                                     .Push(JsonValue::String("NaN"))
                                                     .Push(JsonValue::String("Infinity"))
                                                     .Push(JsonValue::String("-Infinity")));
  return JsonValue::Object().Set("anyOf",
                                 JsonValue::Array().Push(Type("number")).Push(std::move(special)));
}

JsonValue EnumSchema(const EnumDescriptor& type) {
  if (type.full_name() == "google.protobuf.NullValue") return Type("null");
  JsonValue names = JsonValue::Array();
  for (int i = 0; i < type.value_count(); ++i) names.Push(JsonValue::String(type.value(i)->name()));
  return Type("string").Set("enum", std::move(names));
}

// Collapses a .proto comment into one line.
std::string OneLine(const std::string& comment) {
  std::vector<absl::string_view> words =
      absl::StrSplit(comment, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  return absl::StrJoin(words, " ");
}

template <typename D>
std::string SourceComment(const D& descriptor) {
  google::protobuf::SourceLocation location;
  if (!descriptor.GetSourceLocation(&location)) return "";
  return OneLine(location.leading_comments.empty() ? location.trailing_comments
                                                   : location.leading_comments);
}

std::string FieldDescription(const FieldDescriptor& field) {
  if (std::string comment = SourceComment(field); !comment.empty()) return comment;
  for (const FieldNote& note : kFieldNotes) {
    if (field.full_name() == note.field) return note.description;
  }
  return "";
}

// The messages reached from the root, each schema'd once.
class MessageWalk {
 public:
  void Reach(const Descriptor& message) {
    if (seen_.emplace(message.full_name(), &message).second) pending_.push_back(&message);
  }
  const Descriptor* Next() {
    if (pending_.empty()) return nullptr;
    const Descriptor* next = pending_.back();
    pending_.pop_back();
    return next;
  }

 private:
  std::map<std::string, const Descriptor*> seen_;
  std::vector<const Descriptor*> pending_;
};

JsonValue ValueSchema(const FieldDescriptor& field, MessageWalk& walk);

// The proto3 JSON mapping gives the well-known types their own encodings.
// None is in the certificate today; this keeps a future Timestamp field from
// being described as an object of seconds and nanos.
std::optional<JsonValue> WellKnownSchema(const Descriptor& message, MessageWalk& walk) {
  if (!absl::StartsWith(message.file()->name(), "google/protobuf/")) return std::nullopt;
  const std::string& name = message.full_name();
  if (name == "google.protobuf.Timestamp") {
    return Type("string").Set("format", JsonValue::String("date-time"));
  }
  if (name == "google.protobuf.Duration") {
    return Type("string").Set("pattern", JsonValue::String("^-?[0-9]+(\\.[0-9]+)?s$"));
  }
  if (name == "google.protobuf.FieldMask") return Type("string");
  if (name == "google.protobuf.Struct" || name == "google.protobuf.Any") return Type("object");
  if (name == "google.protobuf.ListValue") return Type("array");
  if (name == "google.protobuf.Value") return JsonValue::Object();  // any JSON value
  if (name == "google.protobuf.Empty") {
    return Type("object").Set("additionalProperties", JsonValue::Literal("false"));
  }
  if (absl::EndsWith(name, "Value")) {  // the wrappers: their value, unwrapped
    if (const FieldDescriptor* value = message.FindFieldByName("value")) {
      return ValueSchema(*value, walk);
    }
  }
  return std::nullopt;
}

// The schema of one value of the field (one element when it is repeated).
JsonValue ValueSchema(const FieldDescriptor& field, MessageWalk& walk) {
  switch (field.type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FLOAT:
      return FloatingSchema();
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_SFIXED64:
      return Int64Schema(/*is_signed=*/true);
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_FIXED64:
      return Int64Schema(/*is_signed=*/false);
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SFIXED32:
      return IntegerRange("-2147483648", "2147483647");
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_FIXED32:
      return IntegerRange("0", "4294967295");
    case FieldDescriptor::TYPE_BOOL:
      return Type("boolean");
    case FieldDescriptor::TYPE_STRING:
      return Type("string");
    case FieldDescriptor::TYPE_BYTES:
      // The parser takes standard and URL-safe base64, padded or not.
      return Type("string")
          .Set("contentEncoding", JsonValue::String("base64"))
          .Set("pattern", JsonValue::String("^[A-Za-z0-9+/_-]*={0,2}$"));
    case FieldDescriptor::TYPE_ENUM:
      return EnumSchema(*field.enum_type());
    case FieldDescriptor::TYPE_MESSAGE:
    case FieldDescriptor::TYPE_GROUP:
      break;
  }
  const Descriptor& message = *field.message_type();
  if (auto well_known = WellKnownSchema(message, walk)) return *std::move(well_known);
  walk.Reach(message);
  return JsonValue::Object().Set("$ref", JsonValue::String("#/$defs/" + message.full_name()));
}

// Map keys are always JSON strings; integer and bool keys are spelled out.
JsonValue MapKeySchema(const FieldDescriptor& key) {
  switch (key.cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return Type("string").Set(
          "enum",
          JsonValue::Array().Push(JsonValue::String("true")).Push(JsonValue::String("false")));
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return Type("string").Set("pattern", JsonValue::String("^[0-9]+$"));
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
      return Type("string").Set("pattern", JsonValue::String("^-?[0-9]+$"));
    default:
      return Type("string");
  }
}

JsonValue FieldSchema(const FieldDescriptor& field, MessageWalk& walk) {
  JsonValue schema = JsonValue::Object();
  if (std::string description = FieldDescription(field); !description.empty()) {
    schema.Set("description", JsonValue::String(description));
  }
  if (field.full_name() == kFormatVersionField) {
    return schema.Merge(IntegerRange("1", "4294967295"));
  }
  if (field.is_map()) {
    const Descriptor& entry = *field.message_type();
    schema.Set("type", JsonValue::String("object"));
    if (entry.map_key()->type() != FieldDescriptor::TYPE_STRING) {
      schema.Set("propertyNames", MapKeySchema(*entry.map_key()));
    }
    return schema.Set("additionalProperties", ValueSchema(*entry.map_value(), walk));
  }
  if (field.is_repeated()) {
    return schema.Set("type", JsonValue::String("array")).Set("items", ValueSchema(field, walk));
  }
  return schema.Merge(ValueSchema(field, walk));
}

JsonValue MessageSchema(const Descriptor& message, MessageWalk& walk) {
  JsonValue schema = JsonValue::Object();
  if (std::string description = SourceComment(message); !description.empty()) {
    schema.Set("description", JsonValue::String(description));
  }
  schema.Set("type", JsonValue::String("object"));
  JsonValue properties = JsonValue::Object();
  for (int i = 0; i < message.field_count(); ++i) {  // declaration order
    const FieldDescriptor& field = *message.field(i);
    properties.Set(field.name(), FieldSchema(field, walk));
  }
  schema.Set("properties", std::move(properties));
  if (&message == v1::Certificate::descriptor()) {
    JsonValue required = JsonValue::Array();
    for (const char* name : kCertificateRequired) required.Push(JsonValue::String(name));
    schema.Set("required", std::move(required));
  }
  // The reader rejects unknown fields (an edit that adds one is not dropped).
  return schema.Set("additionalProperties", JsonValue::Literal("false"));
}

}  // namespace

std::string CertificateJsonSchema() {
  const Descriptor& root = *v1::Certificate::descriptor();
  MessageWalk walk;
  walk.Reach(root);
  std::map<std::string, JsonValue> defs;  // sorted by full name
  while (const Descriptor* message = walk.Next()) {
    defs.emplace(message->full_name(), MessageSchema(*message, walk));
  }
  JsonValue defs_json = JsonValue::Object();
  for (auto& [name, schema] : defs) defs_json.Set(name, std::move(schema));

  JsonValue schema = JsonValue::Object();
  schema.Set("$schema", JsonValue::String(kDialect))
      .Set("$id", JsonValue::String(kSchemaId))
      .Set("title", JsonValue::String("clustercert certificate"))
      .Set("description",
           JsonValue::String(
               "certificate.json as `controller run` writes it: the message " + root.full_name() +
               " in the proto3 JSON mapping with proto field names and every scalar printed. "
               "Generated from the proto descriptor by `controller schema`; do not edit."))
      .Set("$ref", JsonValue::String("#/$defs/" + root.full_name()))
      .Set("$defs", std::move(defs_json));
  std::string out;
  schema.Write(0, &out);
  out += "\n";
  return out;
}

}  // namespace clustercert::controller
