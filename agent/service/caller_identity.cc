#include "agent/service/caller_identity.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace clustercert::agent {
namespace {

std::string Joined(const std::vector<grpc::string_ref>& values) {
  std::string joined;
  for (const grpc::string_ref& value : values) {
    absl::StrAppend(&joined, joined.empty() ? "" : ",",
                    absl::string_view(value.data(), value.size()));
  }
  return joined;
}

}  // namespace

std::string CallerIdentity(const grpc::AuthContext* context) {
  if (context == nullptr || !context->IsPeerAuthenticated()) return kInsecureCaller;
  // Named by property, not by GetPeerIdentity(): which property that returns
  // can be changed by an auth metadata processor, and an owner recorded under
  // one name must match the same caller on every later call.
  const std::string common_name = Joined(context->FindPropertyValues("x509_common_name"));
  if (!common_name.empty()) return absl::StrCat("tls:CN=", common_name);
  const std::string alt_names =
      Joined(context->FindPropertyValues("x509_subject_alternative_name"));
  if (!alt_names.empty()) return absl::StrCat("tls:SAN=", alt_names);
  // Authenticated by something that left no certificate name (a processor's
  // own identity): its peer identity, so two such callers still differ.
  return absl::StrCat("tls:", context->GetPeerIdentityPropertyName(), "=",
                      Joined(context->GetPeerIdentity()));
}

}  // namespace clustercert::agent
