#include "common/json_strict.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/printable.h"

namespace clustercert {
namespace {

// The name protobuf's JSON mapping matches a key to: "avg_gbps" and "avgGbps"
// both read as the field avg_gbps, so both are "avgGbps" here.
std::string FieldNameKey(const std::string& key) {
  std::string out;
  out.reserve(key.size());
  bool upper_next = false;
  for (char c : key) {
    if (c == '_') {
      upper_next = true;
      continue;
    }
    out.push_back(upper_next && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
    upper_next = false;
  }
  return out;
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class StrictChecker {
 public:
  StrictChecker(absl::string_view json, absl::string_view name, size_t max_depth)
      : json_(json), name_(name), max_depth_(max_depth) {}

  absl::Status Run() {
    SkipSpace();
    if (auto status = Value(0); !status.ok()) return status;
    SkipSpace();
    if (at_ < json_.size()) return Error(at_, "text after the JSON value");
    return absl::OkStatus();
  }

 private:
  // "line 3, byte 41" (bytes counted from 0, lines from 1).
  std::string Where(size_t offset) const {
    int line = 1;
    for (size_t i = 0; i < offset && i < json_.size(); ++i) {
      if (json_[i] == '\n') ++line;
    }
    return absl::StrCat("line ", line, ", byte ", offset);
  }

  absl::Status Error(size_t offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, " is not strict JSON at ", Where(offset), ": ", what,
                     "; a clustercert file is written as strict JSON, so this one was edited "
                     "or is not one: use the file a clustercert command wrote, unedited"));
  }

  void SkipSpace() {
    while (at_ < json_.size() &&
           (json_[at_] == ' ' || json_[at_] == '\t' || json_[at_] == '\n' || json_[at_] == '\r')) {
      ++at_;
    }
  }

  bool Consume(char c) {
    if (at_ < json_.size() && json_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  absl::Status Value(size_t depth) {
    if (at_ >= json_.size()) return Error(at_, "the text ends where a value was expected");
    const char c = json_[at_];
    if (c == '{' || c == '[') {
      if (depth >= max_depth_) {
        return Error(at_, absl::StrCat("nesting deeper than ", max_depth_, " levels"));
      }
      return c == '{' ? Object(depth + 1) : Array(depth + 1);
    }
    if (c == '"') {
      std::string ignored;
      return String(&ignored);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Number();
    for (absl::string_view word : {"true", "false", "null"}) {
      if (json_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return absl::OkStatus();
      }
    }
    return Error(at_, "expected a value");
  }

  absl::Status Object(size_t depth) {
    ++at_;  // '{'
    // decoded key as protobuf matches it -> (offset, the key as written)
    absl::flat_hash_map<std::string, std::pair<size_t, std::string>> keys;
    SkipSpace();
    if (Consume('}')) return absl::OkStatus();
    while (true) {
      SkipSpace();
      const size_t key_at = at_;
      if (at_ >= json_.size() || json_[at_] != '"') return Error(at_, "expected a key");
      std::string key;
      if (auto status = String(&key); !status.ok()) return status;
      auto [it, inserted] = keys.try_emplace(FieldNameKey(key), key_at, key);
      if (!inserted) {
        const std::string& first = it->second.second;
        return absl::InvalidArgumentError(absl::StrCat(
            name_, " has the key '", PrintableText(key, 80), "' twice in one object (at ",
            Where(key_at), ", and first at ", Where(it->second.first),
            first == key ? "" : absl::StrCat(" as '", PrintableText(first, 80), "'"),
            "): readers disagree on which one counts, so the file is refused; use the file a "
            "clustercert command wrote, unedited"));
      }
      SkipSpace();
      if (!Consume(':')) return Error(at_, "expected ':' after a key");
      SkipSpace();
      if (auto status = Value(depth); !status.ok()) return status;
      SkipSpace();
      if (Consume('}')) return absl::OkStatus();
      if (!Consume(',')) return Error(at_, "expected ',' or '}' in an object");
    }
  }

  absl::Status Array(size_t depth) {
    ++at_;  // '['
    SkipSpace();
    if (Consume(']')) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (auto status = Value(depth); !status.ok()) return status;
      SkipSpace();
      if (Consume(']')) return absl::OkStatus();
      if (!Consume(',')) return Error(at_, "expected ',' or ']' in an array");
    }
  }

  absl::Status Number() {
    const size_t start = at_;
    Consume('-');
    auto digits = [&] {
      const size_t from = at_;
      while (at_ < json_.size() && json_[at_] >= '0' && json_[at_] <= '9') ++at_;
      return at_ > from;
    };
    if (!digits()) return Error(start, "a number without digits");
    if (Consume('.') && !digits()) return Error(start, "a number without digits after '.'");
    if (at_ < json_.size() && (json_[at_] == 'e' || json_[at_] == 'E')) {
      ++at_;
      if (!Consume('+')) Consume('-');
      if (!digits()) return Error(start, "a number without digits in its exponent");
    }
    return absl::OkStatus();
  }

  // Four hex digits after "\u"; -1 when they are not.
  int32_t Hex4() {
    if (json_.size() - at_ < 4) return -1;
    int32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = json_[at_ + i];
      int digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return -1;
      }
      value = value * 16 + digit;
    }
    at_ += 4;
    return value;
  }

  // One multi-byte UTF-8 sequence starting at at_ (shortest form, no
  // surrogates, at most U+10FFFF), appended to `out`.
  absl::Status Utf8Sequence(std::string* out) {
    const size_t start = at_;
    const auto lead = static_cast<unsigned char>(json_[at_]);
    size_t length;
    uint32_t cp;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      cp = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      cp = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      cp = lead & 0x07;
    } else {
      return Error(start, "invalid UTF-8");
    }
    if (json_.size() - at_ < length) return Error(start, "invalid UTF-8 (a cut sequence)");
    for (size_t i = 1; i < length; ++i) {
      const auto next = static_cast<unsigned char>(json_[at_ + i]);
      if ((next & 0xC0) != 0x80) return Error(start, "invalid UTF-8");
      cp = (cp << 6) | (next & 0x3F);
    }
    if ((length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return Error(start, "invalid UTF-8 (an overlong form or a surrogate)");
    }
    out->append(json_.data() + at_, length);
    at_ += length;
    return absl::OkStatus();
  }

  // A string at at_ ('"'), its decoded text into `out`.
  absl::Status String(std::string* out) {
    const size_t start = at_;
    ++at_;
    while (true) {
      if (at_ >= json_.size()) return Error(start, "a string without its closing quote");
      const auto c = static_cast<unsigned char>(json_[at_]);
      if (c == '"') {
        ++at_;
        return absl::OkStatus();
      }
      if (c < 0x20) return Error(at_, "a control character inside a string");
      if (c >= 0x80) {
        if (auto status = Utf8Sequence(out); !status.ok()) return status;
        continue;
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++at_;
        continue;
      }
      const size_t escape_at = at_;
      ++at_;
      if (at_ >= json_.size()) return Error(escape_at, "a cut escape");
      const char e = json_[at_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          const int32_t unit = Hex4();
          if (unit < 0) return Error(escape_at, "a \\u escape without four hex digits");
          auto cp = static_cast<uint32_t>(unit);
          if (unit >= 0xDC00 && unit <= 0xDFFF) {
            return Error(escape_at, "a lone low surrogate escape");
          }
          if (unit >= 0xD800 && unit <= 0xDBFF) {
            int32_t low = -1;
            if (json_.substr(at_, 2) == "\\u") {
              at_ += 2;
              low = Hex4();
            }
            if (low < 0xDC00 || low > 0xDFFF) {
              return Error(escape_at, "a lone high surrogate escape");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00);
          }
          AppendUtf8(cp, *out);
          break;
        }
        default:
          return Error(escape_at, "an unknown escape");
      }
    }
  }

  const absl::string_view json_;
  const absl::string_view name_;
  const size_t max_depth_;
  size_t at_ = 0;
};

}  // namespace

absl::Status CheckStrictJson(absl::string_view json, absl::string_view name, size_t max_depth) {
  return StrictChecker(json, name, max_depth).Run();
}

}  // namespace clustercert
