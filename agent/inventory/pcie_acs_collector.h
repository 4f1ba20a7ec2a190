#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// ACS Control register bits (PCIe base spec 7.7.11.3; lspci's ACSCtl names).
inline constexpr uint16_t kAcsSourceValidation = 1 << 0;     // SrcValid
inline constexpr uint16_t kAcsTranslationBlocking = 1 << 1;  // TransBlk
inline constexpr uint16_t kAcsRequestRedirect = 1 << 2;      // ReqRedir
inline constexpr uint16_t kAcsCompletionRedirect = 1 << 3;   // CmpltRedir
inline constexpr uint16_t kAcsUpstreamForwarding = 1 << 4;   // UpstreamFwd
inline constexpr uint16_t kAcsEgressControl = 1 << 5;        // EgressCtrl
inline constexpr uint16_t kAcsDirectTranslated = 1 << 6;     // DirectTrans
// The bits that send peer-to-peer traffic up to the root complex.
inline constexpr uint16_t kAcsP2pRedirectBits =
    kAcsRequestRedirect | kAcsCompletionRedirect | kAcsEgressControl;

inline constexpr size_t kPciConfigSpaceBytes = 4096;  // PCIe extended config space
inline constexpr uint16_t kExtCapAcs = 0x000D;

// What a config space says about ACS.
struct AcsState {
  bool capable = false;     // the ACS extended capability is in the chain
  uint32_t offset = 0;      // where it is, when capable
  uint16_t capability = 0;  // ACS Capability register (which controls exist)
  uint16_t control = 0;     // ACS Control register (which are on)
};

// Finds the ACS extended capability in the raw bytes of a config space
// (`/sys/bus/pci/devices/BDF/config`). Walks the extended capability chain
// from 0x100 with bounds: at most 64 entries, every offset >= 0x100 and
// inside the buffer, no offset visited twice. Errors, each a sentence:
//   FailedPrecondition  fewer than 4096 bytes (the kernel returns 64 to a reader
//                       without CAP_SYS_ADMIN, 256 when no extended space is exposed)
//   InvalidArgument     more than 4096 bytes, or a broken chain (a loop, an
//                       offset out of range, an all-ones header, too many entries)
absl::StatusOr<AcsState> ParseAcs(absl::string_view config);

// lspci's rendering of the control register:
// "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-".
std::string AcsControlText(uint16_t control);

// Reads PCIe Access Control Services on every bridge between each GPU and
// each RDMA NIC of `paths`. It exists because ACS Request/Completion Redirect
// on a PCIe switch port sends GPUDirect RDMA traffic up through the root
// complex (about 5x slower) while every link and port still reads healthy, and
// Linux turns those bits on by itself whenever an IOMMU translates.
//
// The bridges of a pair are those of both upstream chains below where the
// chains meet, plus the meeting point itself when it is a bridge (a switch's
// upstream port), never the host bridge pciDDDD:BB. Each bridge is listed
// once, with every pair that crosses it in `between` ("gpu0<->mlx5_0"), in
// the order the pairs first reach it. A bridge whose config space cannot be
// read fully keeps acs_control unset and says why in source and unknowns.
class PcieAcsCollector {
 public:
  explicit PcieAcsCollector(const SysfsView& view) : view_(view) {}

  // `functions` give the sysfs paths of the pairs' GPUs and NICs; a pair
  // whose path is unknown is explained in `unknowns` (when not null).
  std::vector<v1::PcieBridge> Collect(const std::vector<v1::PciFunction>& functions,
                                      const std::vector<v1::GpuNicPath>& paths,
                                      std::vector<v1::Unknown>* unknowns) const;

 private:
  void ReadBridge(v1::PcieBridge& bridge) const;

  const SysfsView& view_;
};

}  // namespace clustercert::agent::inventory
