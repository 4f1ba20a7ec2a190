// The agent's authorisation decision, without a server: certificates are made
// in memory with OpenSSL, the decision and its messages are checked directly,
// and the gRPC adapter runs against a fake AuthContext.
#include "agent/service/peer_authorizer.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/service/agent_options.h"
#include "agent/service/peer_auth_processor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

using ::testing::HasSubstr;

// A self-signed certificate with the given CN and extensions (OpenSSL's
// config syntax, e.g. {NID_ext_key_usage, "clientAuth"}); the signature is
// irrelevant here, the TLS handshake checks it before authorisation runs.
std::string MakeCertificatePem(const std::string& common_name,
                               const std::vector<std::pair<int, std::string>>& extensions) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()),
                             static_cast<int>(common_name.size()), -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    EXPECT_NE(extension, nullptr) << value;
    if (extension == nullptr) continue;
    X509_add_ext(cert.get(), extension, -1);
    X509_EXTENSION_free(extension);
  }
  X509_sign(cert.get(), key.get(), EVP_sha256());
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(bio.get(), cert.get());
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// What deploy/pki.sh issues, and what older ones did.
std::string ControllerPem() {
  return MakeCertificatePem("controller",
                            {{NID_ext_key_usage, "clientAuth"},
                             {NID_subject_alt_name, "URI:urn:clustercert:role:controller"}});
}
std::string NodePem() {
  return MakeCertificatePem(
      "node2", {{NID_ext_key_usage, "serverAuth"},
                {NID_subject_alt_name, "IP:10.0.0.2,DNS:node2,URI:urn:clustercert:role:node"}});
}
// The attack of issue 15: a node certificate that is also a client certificate.
std::string DualUseNodePem() {
  return MakeCertificatePem(
      "node2", {{NID_ext_key_usage, "serverAuth,clientAuth"},
                {NID_subject_alt_name, "IP:10.0.0.2,DNS:node2,URI:urn:clustercert:role:node"}});
}
std::string OldControllerPem() {
  return MakeCertificatePem("controller", {{NID_ext_key_usage, "serverAuth,clientAuth"},
                                           {NID_subject_alt_name, "DNS:controller"}});
}

PeerAuthorizer Authorizer(std::vector<std::string> roles = {"controller"}) {
  auto authorizer = PeerAuthorizer::Create(std::move(roles));
  EXPECT_TRUE(authorizer.ok()) << authorizer.status();
  return *authorizer;
}

absl::Status Decide(const std::string& pem, std::vector<std::string> roles = {"controller"}) {
  auto peer = PeerIdentityFromPem(pem);
  if (!peer.ok()) return peer.status();
  return Authorizer(std::move(roles)).Authorize(*peer);
}

TEST(PeerIdentityFromPemTest, ReadsCommonNameUriSansAndClientAuth) {
  auto controller = PeerIdentityFromPem(ControllerPem());
  ASSERT_TRUE(controller.ok()) << controller.status();
  EXPECT_EQ(controller->common_name, "controller");
  EXPECT_EQ(controller->uri_sans, std::vector<std::string>{"urn:clustercert:role:controller"});
  EXPECT_TRUE(controller->client_auth);

  auto node = PeerIdentityFromPem(NodePem());
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->common_name, "node2");
  EXPECT_EQ(node->uri_sans, std::vector<std::string>{"urn:clustercert:role:node"});
  EXPECT_FALSE(node->client_auth);
}

TEST(PeerIdentityFromPemTest, NoEkuIsNotAClientCertificate) {
  auto peer = PeerIdentityFromPem(
      MakeCertificatePem("x", {{NID_subject_alt_name, "URI:urn:clustercert:role:controller"}}));
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_FALSE(peer->client_auth);
}

TEST(PeerIdentityFromPemTest, RefusesWhatIsNotOneReadableCertificate) {
  EXPECT_FALSE(PeerIdentityFromPem("").ok());
  EXPECT_FALSE(
      PeerIdentityFromPem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").ok());
  EXPECT_FALSE(PeerIdentityFromPem(std::string(70000, 'A')).ok());
}

TEST(PeerIdentityFromPemTest, TwoSanExtensionsAreRefusedNotGuessed) {
  auto peer = PeerIdentityFromPem(
      MakeCertificatePem("twice", {{NID_ext_key_usage, "clientAuth"},
                                   {NID_subject_alt_name, "URI:urn:clustercert:role:node"},
                                   {NID_subject_alt_name, "URI:urn:clustercert:role:controller"}}));
  // OpenSSL 3 already marks a duplicated extension invalid; either way it is refused.
  ASSERT_FALSE(peer.ok());
  EXPECT_THAT(std::string(peer.status().message()), HasSubstr("CN=twice has"));
  EXPECT_THAT(std::string(peer.status().message()), HasSubstr("re-issue it with deploy/pki.sh"));
}

TEST(PeerAuthorizerTest, AdmitsTheControllerCertificate) {
  EXPECT_TRUE(Decide(ControllerPem()).ok());
}

TEST(PeerAuthorizerTest, RefusesANodeCertificateThatIsAlsoAClientCertificate) {
  absl::Status status = Decide(DualUseNodePem());
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(),
            "the client certificate CN=node2 carries role node; this agent admits only role "
            "controller: run the controller with the certificate deploy/pki.sh made for it");
}

TEST(PeerAuthorizerTest, RefusesACertificateWithoutClientAuth) {
  // A role alone is not enough: a server certificate is not a caller's.
  absl::Status status = Decide(
      MakeCertificatePem("odd", {{NID_ext_key_usage, "serverAuth"},
                                 {NID_subject_alt_name, "URI:urn:clustercert:role:controller"}}));
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()), HasSubstr("CN=odd is not a client certificate"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("clientAuth"));
}

TEST(PeerAuthorizerTest, RefusesAnOlderPkiCertificateWithTheFix) {
  absl::Status status = Decide(OldControllerPem());
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()), HasSubstr("CN=controller carries no role"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("re-issue it with deploy/pki.sh"));
}

TEST(PeerAuthorizerTest, OnlyExactRoleUrisCount) {
  for (const std::string uri :
       {"URI:urn:clustercert:role:Controller", "URI:urn:clustercert:role:controller-x",
        "URI:urn:clustercert:rolecontroller", "URI:URN:clustercert:role:controller",
        "URI:urn:clustercert:role:", "URI:https://example.com/urn:clustercert:role:controller",
        "DNS:urn.clustercert.role.controller"}) {
    absl::Status status = Decide(
        MakeCertificatePem("c", {{NID_ext_key_usage, "clientAuth"}, {NID_subject_alt_name, uri}}));
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << uri;
  }
}

TEST(PeerAuthorizerTest, AnyAdmittedRoleOfSeveralAdmits) {
  const std::string both = MakeCertificatePem(
      "both",
      {{NID_ext_key_usage, "clientAuth"},
       {NID_subject_alt_name, "URI:urn:clustercert:role:node,URI:urn:clustercert:role:monitor"}});
  EXPECT_EQ(Decide(both).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Decide(both, {"controller", "monitor"}).ok());
  EXPECT_TRUE(Decide(DualUseNodePem(), {"controller", "node"}).ok());
  absl::Status status = Decide(both, {"controller", "lab"});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("carries roles node, monitor; this agent admits only roles controller, "
                        "lab"));
}

TEST(PeerAuthorizerTest, CertificateTextIsEscapedInMessages) {
  absl::Status status = Decide(MakeCertificatePem(
      "node2\nrefused nothing", {{NID_ext_key_usage, "clientAuth"},
                                 {NID_subject_alt_name, "URI:urn:clustercert:role:node"}}));
  EXPECT_EQ(std::string(status.message()).find('\n'), std::string::npos) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("CN=node2\\nrefused nothing"));
  EXPECT_EQ(QuoteCertificateText(std::string(500, 'a')).size(), 128u + 3u);
}

TEST(PeerAuthorizerTest, RoleNamesAreValidated) {
  EXPECT_FALSE(PeerAuthorizer::Create({}).ok());
  EXPECT_FALSE(PeerAuthorizer::Create({"Controller"}).ok());
  EXPECT_TRUE(PeerAuthorizer::Create({"controller", "lab-2"}).ok());

  auto roles = ParseRoleList("controller,node,controller");
  ASSERT_TRUE(roles.ok()) << roles.status();
  EXPECT_EQ(*roles, (std::vector<std::string>{"controller", "node"}));
  for (const char* bad : {"", "controller,", ",node", "a b", "root!", "ctl/../x"}) {
    EXPECT_FALSE(ParseRoleList(bad).ok()) << bad;
  }
  EXPECT_FALSE(ValidateRoleName(std::string(65, 'a')).ok());
}

// A connection's AuthContext as gRPC's TLS server fills it.
class FakeAuthContext : public grpc::AuthContext {
 public:
  std::multimap<std::string, std::string> properties;

  bool IsPeerAuthenticated() const override { return properties.count("x509_pem_cert") > 0; }
  std::vector<grpc::string_ref> GetPeerIdentity() const override { return {}; }
  std::string GetPeerIdentityPropertyName() const override { return ""; }
  std::vector<grpc::string_ref> FindPropertyValues(const std::string& name) const override {
    std::vector<grpc::string_ref> values;
    auto [first, last] = properties.equal_range(name);
    for (auto it = first; it != last; ++it) values.emplace_back(it->second);
    return values;
  }
  grpc::AuthPropertyIterator begin() const override { return Iterator(); }
  grpc::AuthPropertyIterator end() const override { return Iterator(); }
  void AddProperty(const std::string& key, const grpc::string_ref& value) override {
    properties.emplace(key, std::string(value.data(), value.size()));
  }
  bool SetPeerIdentityPropertyName(const std::string&) override { return false; }

 private:
  struct Iterator : grpc::AuthPropertyIterator {};
};

TEST(PeerAuthProcessorTest, EveryCallIsDecidedFromTheVerifiedCertificate) {
  PeerAuthProcessor processor(Authorizer());
  EXPECT_FALSE(processor.IsBlocking());
  grpc::AuthMetadataProcessor::InputMetadata metadata;
  metadata.emplace(":path", "/clustercert.v1.NodeAgent/StartCollective");
  grpc::AuthMetadataProcessor::OutputMetadata consumed, response;

  FakeAuthContext controller;
  controller.properties.emplace("x509_pem_cert", ControllerPem());
  EXPECT_TRUE(processor.Process(metadata, &controller, &consumed, &response).ok());

  FakeAuthContext node;
  node.properties.emplace("x509_pem_cert", DualUseNodePem());
  node.properties.emplace("x509_common_name", "node2");
  grpc::Status denied = processor.Process(metadata, &node, &consumed, &response);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(), HasSubstr("CN=node2 carries role node"));

  // A plaintext connection has no certificate: nothing to admit.
  FakeAuthContext plaintext;
  grpc::Status none =
      AuthorizeCall(Authorizer(), plaintext, "/clustercert.v1.NodeAgent/GetVersion");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(none.error_message(), HasSubstr("no verified client certificate"));

  FakeAuthContext garbage;
  garbage.properties.emplace("x509_pem_cert", "not a certificate");
  EXPECT_EQ(AuthorizeCall(Authorizer(), garbage, "").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST(AgentOptionsAuthTest, InsecureOnlyOnLoopback) {
  AgentFlags flags;
  flags.insecure = true;
  for (const char* listen :
       {"127.0.0.1:7070", "127.3.2.1:0", "localhost:7070", "[::1]:7070", "[::1]:0"}) {
    flags.listen = listen;
    EXPECT_TRUE(ValidateAgentFlags(flags, "host").ok()) << listen;
  }
  for (const char* listen : {"0.0.0.0:7070", "192.168.100.11:7070", "[::]:7070",
                             "127.example.com:7070", "10.0.0.1:0", "[::ffff:10.0.0.1]:7070"}) {
    flags.listen = listen;
    auto options = ValidateAgentFlags(flags, "host");
    ASSERT_FALSE(options.ok()) << listen;
    EXPECT_THAT(std::string(options.status().message()),
                HasSubstr(std::string("--listen ") + listen + " is not"));
    EXPECT_THAT(std::string(options.status().message()), HasSubstr("deploy/pki.sh"));
  }
}

TEST(AgentOptionsAuthTest, AllowRolesDefaultsToControllerAndIsValidated) {
  AgentFlags flags;
  flags.listen = "192.168.100.11:7070";
  flags.tls_cert = "agent.pem";
  flags.tls_key = "agent.key";
  flags.tls_ca = "ca.pem";
  auto options = ValidateAgentFlags(flags, "host");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->allow_roles, std::vector<std::string>{"controller"});

  flags.allow_roles = "controller,lab";
  options = ValidateAgentFlags(flags, "host");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->allow_roles, (std::vector<std::string>{"controller", "lab"}));

  flags.allow_roles = "controller,Root";
  options = ValidateAgentFlags(flags, "host");
  ASSERT_FALSE(options.ok());
  EXPECT_THAT(std::string(options.status().message()), HasSubstr("--allow-roles controller,Root"));

  AgentFlags insecure;
  insecure.listen = "127.0.0.1:0";
  insecure.insecure = true;
  insecure.allow_roles = "controller";
  options = ValidateAgentFlags(insecure, "host");
  ASSERT_FALSE(options.ok());
  EXPECT_THAT(std::string(options.status().message()), HasSubstr("--allow-roles"));
}

}  // namespace
}  // namespace clustercert::agent
