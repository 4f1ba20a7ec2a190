#include "agent/peer/verbs_engine.h"

#include <utility>

#include "agent/peer/verbs_endpoint.h"

namespace clustercert::agent::peer {

absl::StatusOr<std::unique_ptr<PeerEndpoint>> VerbsEngine::Prepare(const v1::PeerTestSpec& spec) {
  absl::StatusOr<VerbsTestOptions> options = VerbsTestOptions::FromSpec(spec);
  if (!options.ok()) return options.status();
  absl::StatusOr<std::unique_ptr<VerbsEndpoint>> endpoint =
      VerbsEndpoint::Create(*std::move(options), clock_);
  if (!endpoint.ok()) return endpoint.status();
  return std::unique_ptr<PeerEndpoint>(*std::move(endpoint));
}

}  // namespace clustercert::agent::peer
