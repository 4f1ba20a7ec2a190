#include "common/ib_mtu.h"

#include "absl/strings/str_cat.h"

namespace clustercert {

absl::StatusOr<uint32_t> IbMtuToBytes(int mtu) {
  switch (mtu) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "verbs MTU enum ", mtu, " is not one of IBV_MTU_256 (1) .. IBV_MTU_4096 (5)"));
  }
}

absl::StatusOr<ibv_mtu> IbMtuFromBytes(uint32_t bytes) {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "active_mtu ", bytes, " is not an IB MTU: one of 256, 512, 1024, 2048, 4096 bytes"));
  }
}

}  // namespace clustercert
