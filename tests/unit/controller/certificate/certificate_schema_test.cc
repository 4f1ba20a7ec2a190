#include "controller/certificate/certificate_schema.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/certificate_builder.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::controller {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Struct;
using google::protobuf::Value;

const char kCommittedSchema[] = CLUSTERCERT_SOURCE_DIR "/docs/certificate.schema.json";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Struct ParsedSchema() {
  Struct schema;
  auto status = google::protobuf::util::JsonStringToMessage(CertificateJsonSchema(), &schema);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return schema;
}

const Struct& Member(const Struct& object, const std::string& key) {
  static const Struct kEmpty;
  auto it = object.fields().find(key);
  if (it == object.fields().end() || !it->second.has_struct_value()) {
    ADD_FAILURE() << "no object member '" << key << "'";
    return kEmpty;
  }
  return it->second.struct_value();
}

// The messages a certificate can contain, found independently of the generator.
void Reach(const Descriptor& message, std::set<std::string>* names) {
  if (!names->insert(message.full_name()).second) return;
  for (int i = 0; i < message.field_count(); ++i) {
    const FieldDescriptor& field = *message.field(i);
    if (field.message_type() == nullptr) continue;
    if (field.is_map()) {
      if (const Descriptor* value = field.message_type()->map_value()->message_type()) {
        Reach(*value, names);
      }
    } else {
      Reach(*field.message_type(), names);
    }
  }
}

TEST(CertificateSchemaTest, MatchesTheCommittedFile) {
  const std::string committed = ReadFile(kCommittedSchema);
  ASSERT_FALSE(committed.empty()) << "cannot read " << kCommittedSchema;
  const std::string generated = CertificateJsonSchema();
  if (generated == committed) return;
  std::istringstream want(generated), have(committed);
  std::string want_line, have_line;
  int line = 1;
  while (std::getline(want, want_line) && std::getline(have, have_line) && want_line == have_line) {
    ++line;
  }
  ADD_FAILURE() << "docs/certificate.schema.json is stale: regenerate it with "
                   "`build/bin/controller schema > docs/certificate.schema.json`\n"
                << "first difference at line " << line << ":\n  generated: " << want_line
                << "\n  committed: " << have_line;
}

TEST(CertificateSchemaTest, IsDeterministicAndPrettyPrinted) {
  const std::string schema = CertificateJsonSchema();
  EXPECT_EQ(schema, CertificateJsonSchema());
  ASSERT_FALSE(schema.empty());
  EXPECT_EQ(schema.back(), '\n');
  EXPECT_EQ(schema.rfind("{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n"
                         "  \"$id\": \"https://clustercert.dev/schema/certificate-2.json\",\n",
                         0),
            0u)
      << schema.substr(0, 200);
}

TEST(CertificateSchemaTest, HasOneClosedDefinitionPerMessageWithEveryField) {
  const Struct schema = ParsedSchema();
  const Struct& defs = Member(schema, "$defs");
  std::set<std::string> expected;
  Reach(*v1::Certificate::descriptor(), &expected);
  std::set<std::string> defined;
  for (const auto& [name, value] : defs.fields()) defined.insert(name);
  EXPECT_EQ(defined, expected);

  for (const std::string& name : expected) {
    const Descriptor* message =
        google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(name);
    ASSERT_NE(message, nullptr) << name;
    const Struct& def = Member(defs, name);
    auto closed = def.fields().find("additionalProperties");
    ASSERT_NE(closed, def.fields().end()) << name;
    EXPECT_FALSE(closed->second.bool_value()) << name << " must reject unknown properties";
    const Struct& properties = Member(def, "properties");
    EXPECT_EQ(properties.fields_size(), message->field_count()) << name;
    for (int i = 0; i < message->field_count(); ++i) {
      EXPECT_TRUE(properties.fields().contains(message->field(i)->name()))
          << name << "." << message->field(i)->name();
    }
  }
}

TEST(CertificateSchemaTest, RequiresTheFieldsEveryCertificateHas) {
  const Struct schema = ParsedSchema();
  const Struct& certificate = Member(Member(schema, "$defs"), "clustercert.v1.Certificate");
  const Struct& properties = Member(certificate, "properties");
  auto required = certificate.fields().find("required");
  ASSERT_NE(required, certificate.fields().end());
  std::set<std::string> names;
  for (const Value& name : required->second.list_value().values()) {
    EXPECT_TRUE(properties.fields().contains(name.string_value())) << name.string_value();
    names.insert(name.string_value());
  }
  EXPECT_EQ(names, (std::set<std::string>{"format_version", "tool", "tool_version", "cluster",
                                          "verdict", "phases", "nodes", "checks"}));
  // Schema-1 certificates from earlier releases validate too.
  const Struct& version = Member(properties, "format_version");
  EXPECT_EQ(version.fields().at("type").string_value(), "integer");
  EXPECT_EQ(version.fields().at("minimum").number_value(), 1);
}

TEST(CertificateSchemaTest, UsesTheProto3JsonTypes) {
  const Struct schema = ParsedSchema();
  const Struct& defs = Member(schema, "$defs");
  // int64: a decimal string as printed, or a number as the parser also takes.
  const Struct& duration =
      Member(Member(Member(defs, "clustercert.v1.PhaseResult"), "properties"), "duration_ms");
  const auto& int64_forms = duration.fields().at("anyOf").list_value().values();
  ASSERT_EQ(int64_forms.size(), 2);
  EXPECT_EQ(int64_forms[0].struct_value().fields().at("type").string_value(), "string");
  EXPECT_EQ(int64_forms[0].struct_value().fields().at("pattern").string_value(), "^-?[0-9]+$");
  EXPECT_EQ(int64_forms[1].struct_value().fields().at("type").string_value(), "integer");

  const Struct& pairs =
      Member(Member(Member(defs, "clustercert.v1.Certificate"), "properties"), "pairs");
  EXPECT_EQ(pairs.fields().at("type").string_value(), "array");
  EXPECT_EQ(Member(pairs, "items").fields().at("$ref").string_value(),
            "#/$defs/clustercert.v1.PairResult");

  const Struct& value =
      Member(Member(Member(defs, "clustercert.v1.Finding"), "properties"), "value");
  const auto& double_forms = value.fields().at("anyOf").list_value().values();
  ASSERT_EQ(double_forms.size(), 2);
  EXPECT_EQ(double_forms[0].struct_value().fields().at("type").string_value(), "number");
  EXPECT_EQ(double_forms[1].struct_value().fields().at("enum").list_value().values_size(), 3);
}

// The README's certify row, docs/certificate.md's schema heading and the
// proto's comment are what a user reads to know which certificate this
// release writes; each must name the format the builder sets (the README
// said 4 while the code wrote 6).
TEST(CertificateSchemaTest, DocsNameTheFormatTheBuilderWrites) {
  const std::string format = absl::StrCat(kCertificateFormatVersion);
  const std::string readme = ReadFile(CLUSTERCERT_SOURCE_DIR "/README.md");
  EXPECT_NE(readme.find("`certificate.json` (format " + format + ","), std::string::npos)
      << "README.md's certify row must say `certificate.json` (format " << format << ", ...)";
  const std::string docs = ReadFile(CLUSTERCERT_SOURCE_DIR "/docs/certificate.md");
  EXPECT_NE(docs.find("## Schema (format_version " + format + ")"), std::string::npos)
      << "docs/certificate.md's heading must say ## Schema (format_version " << format << ")";
  const std::string proto =
      ReadFile(CLUSTERCERT_SOURCE_DIR "/proto/clustercert/v1/certificate.proto");
  EXPECT_NE(proto.find("uint32 format_version = 1;    // the schema version: " + format + " "),
            std::string::npos)
      << "certificate.proto's format_version comment must name " << format;
}

}  // namespace
}  // namespace clustercert::controller
