#include "agent/service/caller_identity.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

// gRPC keeps the iterator's constructor for its own contexts; CallerIdentity
// never iterates, so an empty one does.
struct NoProperties : grpc::AuthPropertyIterator {
  NoProperties() = default;
};

// An AuthContext with the properties gRPC's TLS handshake would set.
class FakeAuthContext final : public grpc::AuthContext {
 public:
  FakeAuthContext(bool authenticated, std::multimap<std::string, std::string> properties)
      : authenticated_(authenticated), properties_(std::move(properties)) {}
  bool IsPeerAuthenticated() const override { return authenticated_; }
  std::vector<grpc::string_ref> GetPeerIdentity() const override {
    return FindPropertyValues(identity_name_);
  }
  std::string GetPeerIdentityPropertyName() const override { return identity_name_; }
  std::vector<grpc::string_ref> FindPropertyValues(const std::string& name) const override {
    std::vector<grpc::string_ref> values;
    auto [first, last] = properties_.equal_range(name);
    for (auto it = first; it != last; ++it) values.emplace_back(it->second);
    return values;
  }
  grpc::AuthPropertyIterator begin() const override { return NoProperties(); }
  grpc::AuthPropertyIterator end() const override { return NoProperties(); }
  void AddProperty(const std::string& key, const grpc::string_ref& value) override {
    properties_.emplace(key, std::string(value.data(), value.size()));
  }
  bool SetPeerIdentityPropertyName(const std::string& name) override {
    identity_name_ = name;
    return true;
  }

 private:
  bool authenticated_;
  std::multimap<std::string, std::string> properties_;
  std::string identity_name_ = "x509_subject_alternative_name";
};

TEST(CallerIdentityTest, PlaintextCallersAreInsecure) {
  EXPECT_EQ(CallerIdentity(nullptr), "insecure");
  FakeAuthContext plaintext(false, {{"transport_security_type", "insecure"}});
  EXPECT_EQ(CallerIdentity(&plaintext), "insecure");
}

TEST(CallerIdentityTest, TlsCallersAreNamedByTheirCertificate) {
  FakeAuthContext controller(true, {{"x509_common_name", "controller"},
                                    {"x509_subject_alternative_name", "urn:clustercert:role:x"}});
  EXPECT_EQ(CallerIdentity(&controller), "tls:CN=controller");
  FakeAuthContext san_only(true, {{"x509_subject_alternative_name", "ops1"},
                                  {"x509_subject_alternative_name", "10.0.0.9"}});
  EXPECT_EQ(CallerIdentity(&san_only), "tls:SAN=ops1,10.0.0.9");
}

// A processor that renames the peer identity must not change who owns what.
TEST(CallerIdentityTest, TheIdentityDoesNotFollowThePeerIdentityProperty) {
  FakeAuthContext context(true, {{"x509_common_name", "controller"}, {"role", "controller"}});
  const std::string before = CallerIdentity(&context);
  context.SetPeerIdentityPropertyName("role");
  EXPECT_EQ(CallerIdentity(&context), before);
  FakeAuthContext other(true, {{"x509_common_name", "node3"}});
  EXPECT_NE(CallerIdentity(&other), before);
}

}  // namespace
}  // namespace clustercert::agent
