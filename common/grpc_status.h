#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace clustercert {

// absl and gRPC share the canonical codes; these keep the message intact.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace clustercert
