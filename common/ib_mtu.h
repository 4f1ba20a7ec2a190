#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace clustercert {

// The verbs path-MTU enum and bytes (IBV_MTU_256 = 1 .. IBV_MTU_4096 = 5),
// shared by the inventory (ibv_query_port) and the verbs engine (QP setup).
// InvalidArgument for anything else.
absl::StatusOr<uint32_t> IbMtuToBytes(int mtu);
absl::StatusOr<ibv_mtu> IbMtuFromBytes(uint32_t bytes);

}  // namespace clustercert
