#pragma once

// Shared by the report tests: the fixture certificates, and a small markup
// reader that is strict enough to catch unbalanced or unescaped output (tags
// must nest, attributes must be quoted, '&' must start an entity) without a
// third-party XML library.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/certificate_reader.h"

namespace clustercert::controller::report::testing {

inline std::string FixturePath(const std::string& name) {
  return absl::StrCat(CLUSTERCERT_FIXTURES, "/certificates/", name, ".json");
}

inline v1::Certificate LoadFixture(const std::string& name) {
  auto loaded = controller::LoadCertificate(FixturePath(name));
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? loaded->certificate : v1::Certificate();
}

inline const std::vector<std::string>& FixtureNames() {
  static const std::vector<std::string> names = {"lab-healthy", "lab-slowed",
                                                 "loopback-collectives"};
  return names;
}

inline size_t CountOccurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

// Distinct (test, rail, memory, client, server) cells that are not retests
// and not a node paired with itself: what the heatmaps draw.
inline size_t MeasuredCells(const v1::Certificate& certificate) {
  std::set<std::string> cells;
  for (const auto& pair : certificate.pairs()) {
    if (!pair.retest_of().empty() || pair.client() == pair.server()) continue;
    cells.insert(absl::StrCat(pair.test(), "|", pair.rail(), "|", pair.memory(), "|", pair.client(),
                              "|", pair.server()));
  }
  return cells.size();
}

struct Element {
  std::string tag;
  std::map<std::string, std::string> attributes;  // entity-decoded
  std::vector<std::unique_ptr<Element>> children;
  std::string text;  // entity-decoded character data directly inside

  // Every descendant (not this element) with the tag, in document order.
  std::vector<const Element*> FindAll(const std::string& name) const {
    std::vector<const Element*> out;
    std::function<void(const Element&)> walk = [&](const Element& e) {
      for (const auto& child : e.children) {
        if (child->tag == name) out.push_back(child.get());
        walk(*child);
      }
    };
    walk(*this);
    return out;
  }
  std::vector<const Element*> Children(const std::string& name) const {
    std::vector<const Element*> out;
    for (const auto& child : children) {
      if (child->tag == name) out.push_back(child.get());
    }
    return out;
  }
  std::string Attr(const std::string& name) const {
    auto it = attributes.find(name);
    return it == attributes.end() ? std::string() : it->second;
  }
};

// Reads XML, or HTML written in the same discipline (void elements such as
// <meta>, raw <style>/<script> text, a DOCTYPE). Sets *error and returns
// nullptr on the first problem.
class MarkupReader {
 public:
  MarkupReader(const std::string& text, bool html) : s_(text), html_(html) {}

  std::unique_ptr<Element> Read(std::string* error) {
    auto document = std::make_unique<Element>();
    document->tag = "#document";
    std::vector<Element*> stack = {document.get()};
    while (pos_ < s_.size()) {
      if (s_[pos_] != '<') {
        const size_t end = s_.find('<', pos_);
        std::string decoded;
        if (!Decode(s_.substr(pos_, end - pos_), &decoded, error)) return nullptr;
        stack.back()->text += decoded;
        pos_ = end == std::string::npos ? s_.size() : end;
        continue;
      }
      if (s_.compare(pos_, 4, "<!--") == 0) {
        const size_t end = s_.find("-->", pos_);
        if (end == std::string::npos) return Fail(error, "unterminated comment");
        pos_ = end + 3;
      } else if (s_.compare(pos_, 2, "<?") == 0 || s_.compare(pos_, 2, "<!") == 0) {
        const size_t end = s_.find('>', pos_);
        if (end == std::string::npos) return Fail(error, "unterminated declaration");
        pos_ = end + 1;
      } else if (s_.compare(pos_, 2, "</") == 0) {
        const size_t end = s_.find('>', pos_);
        if (end == std::string::npos) return Fail(error, "unterminated end tag");
        const std::string name = Normalize(s_.substr(pos_ + 2, end - pos_ - 2));
        if (stack.size() < 2 || stack.back()->tag != name) {
          return Fail(error, absl::StrCat("</", name, "> closes <", stack.back()->tag, ">"));
        }
        stack.pop_back();
        pos_ = end + 1;
      } else {
        auto element = std::make_unique<Element>();
        bool self_closing = false;
        if (!ReadStartTag(element.get(), &self_closing, error)) return nullptr;
        Element* raw = element.get();
        stack.back()->children.push_back(std::move(element));
        if (html_ && (raw->tag == "style" || raw->tag == "script")) {
          const std::string close = absl::StrCat("</", raw->tag, ">");
          const size_t end = s_.find(close, pos_);
          if (end == std::string::npos) return Fail(error, "unterminated " + raw->tag);
          raw->text = s_.substr(pos_, end - pos_);
          pos_ = end + close.size();
        } else if (!self_closing && !IsVoid(raw->tag)) {
          stack.push_back(raw);
        }
      }
    }
    if (stack.size() != 1) return Fail(error, absl::StrCat("<", stack.back()->tag, "> not closed"));
    return document;
  }

 private:
  std::unique_ptr<Element> Fail(std::string* error, const std::string& what) {
    *error = absl::StrCat(what, " at offset ", pos_, ": ...", s_.substr(pos_, 80), "...");
    return nullptr;
  }

  std::string Normalize(const std::string& name) const {
    return html_ ? absl::AsciiStrToLower(name) : name;
  }

  bool IsVoid(const std::string& tag) const {
    static const std::set<std::string> kVoid = {"meta", "br",  "hr",   "img",    "input", "link",
                                                "wbr",  "col", "base", "source", "area"};
    return html_ && kVoid.count(tag) > 0;
  }

  static bool Decode(const std::string& in, std::string* out, std::string* error) {
    static const std::map<std::string, std::string> kNamed = {
        {"amp", "&"},   {"lt", "<"},   {"gt", ">"},
        {"quot", "\""}, {"apos", "'"}, {"middot", "\xC2\xB7"}};
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i] != '&') {
        *out += in[i];
        continue;
      }
      const size_t semi = in.find(';', i);
      if (semi == std::string::npos || semi - i > 10) {
        *error = absl::StrCat("bare '&' in: ", in.substr(i, 40));
        return false;
      }
      const std::string name = in.substr(i + 1, semi - i - 1);
      if (!name.empty() && name[0] == '#') {
        const uint32_t code = name.size() > 1 && name[1] == 'x'
                                  ? std::stoul(name.substr(2), nullptr, 16)
                                  : std::stoul(name.substr(1));
        if (code < 0x80) {
          *out += static_cast<char>(code);
        } else {
          *out += "?";  // only ASCII references are written by the reports
        }
      } else if (auto it = kNamed.find(name); it != kNamed.end()) {
        *out += it->second;
      } else {
        *error = absl::StrCat("unknown entity &", name, ";");
        return false;
      }
      i = semi;
    }
    return true;
  }

  bool ReadStartTag(Element* element, bool* self_closing, std::string* error) {
    ++pos_;  // '<'
    size_t end = pos_;
    while (end < s_.size() && !absl::ascii_isspace(s_[end]) && s_[end] != '>' && s_[end] != '/') {
      ++end;
    }
    element->tag = Normalize(s_.substr(pos_, end - pos_));
    if (element->tag.empty()) return Fail(error, "empty tag name"), false;
    pos_ = end;
    while (true) {
      while (pos_ < s_.size() && absl::ascii_isspace(s_[pos_])) ++pos_;
      if (pos_ >= s_.size()) return Fail(error, "unterminated start tag"), false;
      if (s_[pos_] == '>') {
        ++pos_;
        return true;
      }
      if (s_.compare(pos_, 2, "/>") == 0) {
        *self_closing = true;
        pos_ += 2;
        return true;
      }
      size_t name_end = pos_;
      while (name_end < s_.size() && s_[name_end] != '=' && s_[name_end] != '>' &&
             !absl::ascii_isspace(s_[name_end])) {
        ++name_end;
      }
      const std::string name = s_.substr(pos_, name_end - pos_);
      pos_ = name_end;
      if (pos_ < s_.size() && s_[pos_] == '=') {
        if (pos_ + 1 >= s_.size() || s_[pos_ + 1] != '"') {
          return Fail(error, "attribute " + name + " is not double-quoted"), false;
        }
        const size_t close = s_.find('"', pos_ + 2);
        if (close == std::string::npos) return Fail(error, "unterminated attribute"), false;
        const std::string raw = s_.substr(pos_ + 2, close - pos_ - 2);
        if (raw.find('<') != std::string::npos) {
          return Fail(error, "'<' inside attribute " + name), false;
        }
        std::string decoded;
        if (!Decode(raw, &decoded, error)) return false;
        if (element->attributes.count(name) > 0) {
          return Fail(error, "attribute " + name + " given twice"), false;
        }
        element->attributes[name] = decoded;
        pos_ = close + 1;
      } else {
        if (!html_) return Fail(error, "attribute " + name + " without a value"), false;
        element->attributes[name] = "";
      }
    }
  }

  const std::string& s_;
  bool html_;
  size_t pos_ = 0;
};

inline std::unique_ptr<Element> ParseMarkup(const std::string& text, bool html) {
  std::string error;
  auto root = MarkupReader(text, html).Read(&error);
  EXPECT_NE(root, nullptr) << error;
  return root;
}

}  // namespace clustercert::controller::report::testing
