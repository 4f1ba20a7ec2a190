#include "agent/inventory/sysfs_formats.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace clustercert::agent::inventory {
namespace {

absl::Status Unparsable(absl::string_view text, absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("unparsable: '", text, "' (expected ", expected, ")"));
}

bool AllDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool AllHex(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// A plain decimal number: digits with at most one '.', no sign, no exponent
// (absl::SimpleAtod alone would accept "inf" and "1e3").
bool ParsePlainDecimal(absl::string_view text, double* value) {
  if (text.empty()) return false;
  int dots = 0;
  for (char c : text) {
    if (c == '.') {
      ++dots;
    } else if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  if (dots > 1 || text.front() == '.' || text.back() == '.') return false;
  return absl::SimpleAtod(text, value);
}

// Splits "a:b:c" and checks `groups` groups of exactly four hex digits.
bool HexGroups(absl::string_view text, size_t groups, std::vector<std::string>* out) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() != groups) return false;
  for (auto& part : parts) {
    if (part.size() != 4 || !AllHex(part)) return false;
    absl::AsciiStrToLower(&part);
  }
  *out = std::move(parts);
  return true;
}

}  // namespace

absl::StatusOr<CodeAndName> ParseCodeAndName(absl::string_view text) {
  constexpr absl::string_view kExpected = "'<code>: <name>' such as '4: ACTIVE'";
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  const size_t colon = trimmed.find(':');
  if (colon == absl::string_view::npos) return Unparsable(text, kExpected);
  const absl::string_view code_text = trimmed.substr(0, colon);
  const absl::string_view name = absl::StripAsciiWhitespace(trimmed.substr(colon + 1));
  uint32_t code = 0;
  if (!AllDigits(code_text) || !absl::SimpleAtoi(code_text, &code) || name.empty()) {
    return Unparsable(text, kExpected);
  }
  return CodeAndName{code, std::string(name)};
}

absl::StatusOr<LinkRate> ParseRate(absl::string_view text) {
  constexpr absl::string_view kExpected = "'<Gb/s> Gb/sec (<width>X <speed>)'";
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  const size_t unit = rest.find(" Gb/sec (");
  if (unit == absl::string_view::npos) return Unparsable(text, kExpected);
  LinkRate rate;
  if (!ParsePlainDecimal(rest.substr(0, unit), &rate.gbps) || rate.gbps <= 0) {
    return Unparsable(text, kExpected);
  }
  rest.remove_prefix(unit + absl::string_view(" Gb/sec (").size());
  if (!absl::ConsumeSuffix(&rest, ")")) return Unparsable(text, kExpected);
  const size_t x = rest.find('X');
  if (x == absl::string_view::npos) return Unparsable(text, kExpected);
  const absl::string_view width_text = rest.substr(0, x);
  if (!AllDigits(width_text) || !absl::SimpleAtoi(width_text, &rate.width) || rate.width == 0) {
    return Unparsable(text, kExpected);
  }
  absl::string_view speed = rest.substr(x + 1);
  if (!speed.empty()) {
    if (!absl::ConsumePrefix(&speed, " ") || speed.empty()) return Unparsable(text, kExpected);
    for (char c : speed) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) return Unparsable(text, kExpected);
    }
  }
  rate.speed_name = std::string(speed);
  return rate;
}

absl::StatusOr<uint32_t> ParseHexU32(absl::string_view text) {
  constexpr absl::string_view kExpected = "a hex number such as '0x1a'";
  absl::string_view digits = absl::StripAsciiWhitespace(text);
  if (!absl::ConsumePrefix(&digits, "0x")) absl::ConsumePrefix(&digits, "0X");
  uint32_t value = 0;
  if (!AllHex(digits) || !absl::SimpleHexAtoi(digits, &value)) return Unparsable(text, kExpected);
  return value;
}

absl::StatusOr<int64_t> ParseInt(absl::string_view text) {
  constexpr absl::string_view kExpected = "a decimal integer";
  absl::string_view digits = absl::StripAsciiWhitespace(text);
  absl::string_view unsigned_part = digits;
  if (!absl::ConsumePrefix(&unsigned_part, "-")) absl::ConsumePrefix(&unsigned_part, "+");
  int64_t value = 0;
  if (!AllDigits(unsigned_part) || !absl::SimpleAtoi(digits, &value)) {
    return Unparsable(text, kExpected);
  }
  return value;
}

absl::StatusOr<GidInfo> ParseGid(absl::string_view text) {
  constexpr absl::string_view kExpected = "eight ':'-separated groups of four hex digits";
  std::vector<std::string> groups;
  if (!HexGroups(absl::StripAsciiWhitespace(text), 8, &groups)) {
    return Unparsable(text, kExpected);
  }
  GidInfo info;
  info.gid = absl::StrJoin(groups, ":");
  info.is_zero = true;
  for (const auto& group : groups) {
    if (group != "0000") info.is_zero = false;
  }
  bool mapped = groups[5] == "ffff";
  for (int i = 0; i < 5; ++i) {
    if (groups[i] != "0000") mapped = false;
  }
  if (mapped) {
    uint32_t high = 0;
    uint32_t low = 0;
    absl::SimpleHexAtoi(groups[6], &high);
    absl::SimpleHexAtoi(groups[7], &low);
    info.ipv4 = absl::StrCat(high >> 8, ".", high & 0xff, ".", low >> 8, ".", low & 0xff);
  }
  return info;
}

absl::StatusOr<std::string> ParseGuid(absl::string_view text) {
  std::vector<std::string> groups;
  if (!HexGroups(absl::StripAsciiWhitespace(text), 4, &groups)) {
    return Unparsable(text, "four ':'-separated groups of four hex digits");
  }
  return absl::StrJoin(groups, ":");
}

absl::StatusOr<PciLinkSpeed> ParsePciLinkSpeed(absl::string_view text) {
  constexpr absl::string_view kExpected = "'<rate> GT/s' such as '16.0 GT/s PCIe'";
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  if (rest == "Unknown" || absl::StartsWith(rest, "Unknown ")) {
    return absl::InvalidArgumentError(
        absl::StrCat("unparsable: '", text,
                     "' (the kernel reports no link speed: the link is down or the "
                     "speed is not one it knows)"));
  }
  absl::ConsumeSuffix(&rest, " PCIe");
  if (!absl::ConsumeSuffix(&rest, " GT/s")) return Unparsable(text, kExpected);
  PciLinkSpeed speed;
  if (!ParsePlainDecimal(rest, &speed.gts)) return Unparsable(text, kExpected);
  struct Generation {
    double gts;
    uint32_t gen;
  };
  constexpr Generation kGenerations[] = {{2.5, 1},  {5.0, 2},  {8.0, 3},
                                         {16.0, 4}, {32.0, 5}, {64.0, 6}};
  for (const auto& generation : kGenerations) {
    if (std::fabs(speed.gts - generation.gts) < 1e-6) {
      speed.gen = generation.gen;
      return speed;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unparsable: '", text,
                   "' (not a PCIe generation's rate: 2.5, 5.0, 8.0, 16.0, "
                   "32.0 or 64.0 GT/s)"));
}

bool IsPciAddress(absl::string_view text) {
  // dddd:bb:dd.f
  if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return false;
  return AllHex(text.substr(0, 4)) && AllHex(text.substr(5, 2)) && AllHex(text.substr(8, 2)) &&
         text[11] >= '0' && text[11] <= '7';
}

std::string LastPciAddressInPath(absl::string_view path) {
  std::string last;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (IsPciAddress(part)) last = std::string(part);
  }
  return last;
}

}  // namespace clustercert::agent::inventory
