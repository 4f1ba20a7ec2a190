#include "common/non_finite.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"

namespace clustercert {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

bool Finite(double value) { return std::isfinite(value); }

const Message& Sub(const Message& message, const FieldDescriptor* field) {
  return message.GetReflection()->GetMessage(message, field);
}
Message& Sub(Message& message, const FieldDescriptor* field) {
  return *message.GetReflection()->MutableMessage(&message, field);
}
const Message& Sub(const Message& message, const FieldDescriptor* field, int i) {
  return message.GetReflection()->GetRepeatedMessage(message, field, i);
}
Message& Sub(Message& message, const FieldDescriptor* field, int i) {
  return *message.GetReflection()->MutableRepeatedMessage(&message, field, i);
}

// Calls `visit(message, field, index)` for every set double/float value of
// `message` (index -1 for a singular field) and recurses into submessages
// (set ones only: ListFields); stops once `visit` returns true. Returns
// whether it stopped. M is Message or const Message.
template <typename M, typename Visit>
bool WalkFloats(M& message, const Visit& visit) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const auto type = field->cpp_type();
    if (type == FieldDescriptor::CPPTYPE_DOUBLE || type == FieldDescriptor::CPPTYPE_FLOAT) {
      if (!field->is_repeated()) {
        if (visit(message, field, -1)) return true;
        continue;
      }
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        if (visit(message, field, i)) return true;
      }
      continue;
    }
    if (type != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) {
      if (WalkFloats(Sub(message, field), visit)) return true;
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      if (WalkFloats(Sub(message, field, i), visit)) return true;
    }
  }
  return false;
}

double Get(const Message& message, const FieldDescriptor* field, int index) {
  const Reflection* r = message.GetReflection();
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
    return index < 0 ? r->GetDouble(message, field) : r->GetRepeatedDouble(message, field, index);
  }
  return index < 0 ? r->GetFloat(message, field) : r->GetRepeatedFloat(message, field, index);
}

void SetQuietNaN(Message& message, const FieldDescriptor* field, int index) {
  const Reflection* r = message.GetReflection();
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    index < 0 ? r->SetDouble(&message, field, nan)
              : r->SetRepeatedDouble(&message, field, index, nan);
    return;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  index < 0 ? r->SetFloat(&message, field, nan) : r->SetRepeatedFloat(&message, field, index, nan);
}

}  // namespace

std::string NonFiniteText(double value) {
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

std::string NonFiniteSentence(absl::string_view node, absl::string_view field, double value) {
  return absl::StrCat(node, " reported a non-finite ", field, " (", NonFiniteText(value),
                      "): the measurement is invalid; rerun");
}

std::optional<NonFiniteField> FindNonFinite(const Message& message) {
  std::optional<NonFiniteField> found;
  WalkFloats(message, [&](const Message& m, const FieldDescriptor* field, int index) {
    const double value = Get(m, field, index);
    if (Finite(value)) return false;
    found = NonFiniteField{field->name(), value};
    return true;
  });
  return found;
}

void CanonicalizeNaNs(Message& message) {
  WalkFloats(message, [](Message& m, const FieldDescriptor* field, int index) {
    if (std::isnan(Get(m, field, index))) SetQuietNaN(m, field, index);
    return false;
  });
}

bool SameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace clustercert
