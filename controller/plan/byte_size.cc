#include "controller/plan/byte_size.h"

#include <limits>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kSuffixes = "KMG";

// 1 for no suffix, 2^10 for K, 2^20 for M, 2^30 for G; 0 when not a suffix.
int64_t Multiplier(char suffix) {
  const size_t index = kSuffixes.find(suffix);
  if (index == absl::string_view::npos) return 0;
  return int64_t{1} << (10 * (index + 1));
}

bool AllDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// For "1.5G": the same amount in the next smaller unit when that is whole
// ("1536M"); empty otherwise.
std::string WholeSpelling(absl::string_view whole, absl::string_view fraction, char suffix) {
  const size_t index = kSuffixes.find(suffix);
  if (!AllDigits(whole) || !AllDigits(fraction) || fraction.size() > 6 || whole.size() > 9) {
    return "";
  }
  int64_t numerator = 0;
  int64_t denominator = 1;
  for (char c : absl::StrCat(whole, fraction)) numerator = numerator * 10 + (c - '0');
  for (size_t i = 0; i < fraction.size(); ++i) denominator *= 10;
  const int64_t scaled = numerator * 1024;
  if (scaled % denominator != 0) return "";
  const std::string smaller = index == 0 ? "" : std::string(1, kSuffixes[index - 1]);
  return absl::StrCat(scaled / denominator, smaller);
}

}  // namespace

std::string WholeByteSpelling(absl::string_view text) {
  if (text.empty() || Multiplier(text.back()) == 0) return "";
  absl::string_view number = text.substr(0, text.size() - 1);
  const size_t dot = number.find('.');
  if (dot == absl::string_view::npos) return "";
  return WholeSpelling(number.substr(0, dot), number.substr(dot + 1), text.back());
}

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  absl::string_view digits = text;
  int64_t multiplier = 1;
  if (!digits.empty() && Multiplier(digits.back()) != 0) {
    multiplier = Multiplier(digits.back());
    digits.remove_suffix(1);
  }
  if (!AllDigits(digits)) {
    const std::string spelling = WholeByteSpelling(text);
    return absl::InvalidArgumentError(
        spelling.empty()
            ? absl::StrCat("\"", text, "\" is not a whole number with an optional K, M or G suffix")
            : absl::StrCat("fractions are not accepted; write ", spelling));
  }
  int64_t count = 0;
  for (char c : digits) {
    const int digit = c - '0';
    if (count > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      return absl::OutOfRangeError(absl::StrCat(text, " is too large"));
    }
    count = count * 10 + digit;
  }
  if (count > std::numeric_limits<int64_t>::max() / multiplier) {
    return absl::OutOfRangeError(absl::StrCat(text, " is too large"));
  }
  return count * multiplier;
}

}  // namespace clustercert::controller::plan
