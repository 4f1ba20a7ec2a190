#include "agent/inventory/pci_vpd.h"

#include <unistd.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::agent::inventory {
namespace {

constexpr uint8_t kLargeTagBit = 0x80;
constexpr uint8_t kTagIdentifier = 0x82;
constexpr uint8_t kTagReadOnly = 0x90;
constexpr uint8_t kTagReadWrite = 0x91;
constexpr uint8_t kSmallTagEnd = 0x0f;  // item name of the end tag 0x78
constexpr size_t kKeywordHeader = 3;    // two keyword characters, one length byte

uint8_t At(absl::string_view bytes, size_t offset) { return static_cast<uint8_t>(bytes[offset]); }

// Printable ASCII with the vendors' padding (spaces, NULs) cut off the end.
std::string CleanValue(absl::string_view raw) {
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\0')) raw.remove_suffix(1);
  std::string value;
  value.reserve(raw.size());
  for (char c : raw) {
    const auto byte = static_cast<unsigned char>(c);
    value.push_back(byte >= 0x20 && byte < 0x7f ? c : '?');
  }
  return value;
}

bool IsKeywordChar(uint8_t c) { return absl::ascii_isalnum(c); }

absl::Status Malformed(size_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed VPD at offset ", offset, ": ", what));
}

// The keywords of a VPD-R or VPD-W area [begin, end) of `bytes`. `read_only`
// also checks RV, whose checksum covers every byte from offset 0.
absl::Status ParseKeywords(absl::string_view bytes, size_t begin, size_t end, bool read_only,
                           PciVpd& vpd) {
  size_t offset = begin;
  while (offset + kKeywordHeader <= end) {
    const uint8_t k0 = At(bytes, offset);
    const uint8_t k1 = At(bytes, offset + 1);
    const size_t length = At(bytes, offset + 2);
    if (!read_only && k0 == 'R' && k1 == 'W') return absl::OkStatus();  // the rest is free space
    if (!IsKeywordChar(k0) || !IsKeywordChar(k1)) {
      return Malformed(offset, absl::StrFormat("keyword bytes 0x%02x 0x%02x are not two ASCII "
                                               "letters or digits",
                                               k0, k1));
    }
    const std::string keyword{static_cast<char>(k0), static_cast<char>(k1)};
    const size_t data = offset + kKeywordHeader;
    if (data + length > end) {
      return Malformed(offset, absl::StrCat("keyword ", keyword, " declares ", length,
                                            " bytes but its area has ", end - data, " left"));
    }
    if (!read_only) {
      vpd.read_write_keywords.push_back(keyword);
    } else if (keyword == "RV") {
      if (length == 0) return Malformed(offset, "RV has no checksum byte");
      uint8_t sum = 0;
      for (size_t i = 0; i <= data; ++i) sum = static_cast<uint8_t>(sum + At(bytes, i));
      vpd.checksum_ok = sum == 0;
      return absl::OkStatus();  // RV ends VPD-R; what follows is reserved
    } else {
      vpd.read_only.emplace(keyword, CleanValue(bytes.substr(data, length)));
    }
    offset = data + length;
  }
  return absl::OkStatus();
}

}  // namespace

std::string PciVpd::Field(absl::string_view keyword) const {
  auto it = read_only.find(std::string(keyword));
  return it == read_only.end() ? "" : it->second;
}

absl::StatusOr<PciVpd> ParsePciVpd(absl::string_view bytes) {
  if (bytes.empty()) return absl::NotFoundError("the VPD is empty");
  if (At(bytes, 0) == 0x00 || At(bytes, 0) == 0xff) {
    return absl::NotFoundError(
        absl::StrFormat("no VPD programmed (the first byte reads 0x%02x)", At(bytes, 0)));
  }
  if (At(bytes, 0) != kTagIdentifier) {
    return Malformed(
        0, absl::StrFormat("starts with tag 0x%02x, not the identifier string 0x82", At(bytes, 0)));
  }
  PciVpd vpd;
  size_t offset = 0;
  bool have_identifier = false;
  while (offset < bytes.size()) {
    const uint8_t tag = At(bytes, offset);
    if ((tag & kLargeTagBit) == 0) {
      const size_t length = tag & 0x07;
      if (((tag >> 3) & 0x0f) == kSmallTagEnd) return vpd;
      if (offset + 1 + length > bytes.size()) {
        return Malformed(offset, absl::StrFormat("small tag 0x%02x declares %d bytes, %d left", tag,
                                                 length, bytes.size() - offset - 1));
      }
      offset += 1 + length;
      continue;
    }
    if (offset + 3 > bytes.size()) {
      return Malformed(offset, absl::StrFormat("large tag 0x%02x is cut before its length", tag));
    }
    const size_t length = At(bytes, offset + 1) | (static_cast<size_t>(At(bytes, offset + 2)) << 8);
    const size_t data = offset + 3;
    if (data + length > bytes.size()) {
      return Malformed(offset, absl::StrFormat("tag 0x%02x declares %d bytes, %d left", tag, length,
                                               bytes.size() - data));
    }
    if (tag == kTagIdentifier && !have_identifier) {
      vpd.identifier = CleanValue(bytes.substr(data, length));
      have_identifier = true;
    } else if (tag == kTagReadOnly || tag == kTagReadWrite) {
      if (auto status = ParseKeywords(bytes, data, data + length, tag == kTagReadOnly, vpd);
          !status.ok()) {
        return status;
      }
    }
    offset = data + length;
  }
  return Malformed(offset, "the data ends before the end tag 0x78 (truncated)");
}

void FillVpdIdentity(const SysfsView& view, absl::string_view sysfs_dir,
                     v1::PciFunction& function) {
  const std::string path = absl::StrCat(sysfs_dir, "/vpd");
  auto bytes = view.ReadBytes(path, kMaxPciVpdBytes);
  if (!bytes.ok()) {
    if (absl::IsNotFound(bytes.status())) {
      function.set_identity_source("no VPD (the function has no vpd file)");
      return;
    }
    std::string reason = ReasonOf(bytes.status());
    if (absl::IsPermissionDenied(bytes.status()) && view.is_live()) {
      // The kernel creates every vpd file 0600 root; the hardened unit runs
      // the agent as its own user, which reads VPD only through the udev rule.
      absl::StrAppend(&reason,
                      " (the kernel makes vpd readable by root only, and this agent runs "
                      "as uid ",
                      ::geteuid(),
                      ": install deploy/99-clustercert-vpd.rules "
                      "so the clustercert group may read NIC and GPU VPD (step 3 in "
                      "deploy/clustercert-agent.service), or run `node-agent --capture "
                      "DIR` as root once and certify from the capture)");
    } else if (absl::IsPermissionDenied(bytes.status())) {
      absl::StrAppend(&reason,
                      " (the captured file is not readable by this agent's user: "
                      "chmod -R a+rX the capture)");
    }
    function.set_identity_source(absl::StrCat("VPD unreadable: ", reason));
    AddUnknown(function, "serial_number", path, reason);
    return;
  }
  auto vpd = ParsePciVpd(*bytes);
  if (!vpd.ok()) {
    const std::string reason(vpd.status().message());
    function.set_identity_source(absl::StrCat("no VPD identity: ", reason));
    if (!absl::IsNotFound(vpd.status())) AddUnknown(function, "serial_number", path, reason);
    return;
  }
  function.set_serial_number(vpd->Field("SN"));
  function.set_part_number(vpd->Field("PN"));
  function.set_product_name(vpd->identifier);
  if (function.serial_number().empty() && function.part_number().empty() &&
      function.product_name().empty()) {
    function.set_identity_source("no VPD identity: the VPD has no identifier, PN or SN");
    return;
  }
  function.set_identity_source(vpd->checksum_ok.value_or(true)
                                   ? "vpd"
                                   : "vpd (its RV checksum does not match: the EEPROM may be "
                                     "corrupt)");
}

void SetRdmaModelsFromVpd(const std::vector<v1::PciFunction>& functions,
                          std::vector<v1::RdmaDevice>& devices) {
  for (auto& device : devices) {
    if (device.pci_address().empty()) continue;
    for (const auto& function : functions) {
      if (function.address() == device.pci_address() && !function.product_name().empty()) {
        device.set_model(function.product_name());
        break;
      }
    }
  }
}

}  // namespace clustercert::agent::inventory
