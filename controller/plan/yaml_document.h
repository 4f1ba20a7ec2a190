#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::plan {

// A position in the plan file, 0-based (as the YAML parser reports it).
struct YamlMark {
  int line = -1;
  int column = -1;
};

enum class YamlType { kUndefined, kNull, kScalar, kSequence, kMap };

// Bounds that keep a hostile plan from costing more than a real one. A plan
// of 100,000 nodes is about 2 million YAML values; aliases count every time
// they are used, which is what makes a "billion laughs" file refused before
// anything walks it. Depth is bounded because libyaml's scanner costs time
// in proportion to the depth for every token (a 200 KB file of 100,000 `[`
// took a minute): refusing at the 65th level stops the parse while it is
// still cheap, and no walker of the tree ever sees more than 64 levels.
struct YamlLimits {
  size_t max_values = 4'000'000;  // values after alias expansion
  size_t max_map_keys = 1'000;    // keys in one map: no plan map has more than a few dozen
  size_t max_depth = 64;          // collections inside collections, aliases expanded; plans use 4
};

class YamlDocument;
struct YamlEntry;
class YamlMapIterator;

// A read-only handle on one value of a YamlDocument (cheap to copy; valid
// while the document lives). The subset of yaml-cpp's Node the plan reader
// uses, over a compact tree that libyaml's event parser builds about ten
// times faster than yaml-cpp builds its own.
class YamlNode {
 public:
  YamlNode() = default;  // undefined: what a missing key or index gives

  YamlType Type() const;
  bool IsDefined() const { return Type() != YamlType::kUndefined; }
  bool IsNull() const { return Type() == YamlType::kNull; }
  bool IsScalar() const { return Type() == YamlType::kScalar; }
  bool IsSequence() const { return Type() == YamlType::kSequence; }
  bool IsMap() const { return Type() == YamlType::kMap; }

  // The text of a scalar; empty for anything else.
  const std::string& Scalar() const;
  // True for a scalar written plain: no quotes, no block style, no tag.
  bool IsPlain() const;
  YamlMark Mark() const;

  // Items of a sequence, or entries of a map.
  size_t size() const;
  // Item `i` of a sequence; undefined out of range or for a non-sequence.
  YamlNode operator[](size_t i) const;

  // Entry `i` of a map, in file order (a key written twice appears twice).
  YamlEntry MapEntry(size_t i) const;

  // A map's entries in file order (`it->first`, `it->second`), as yaml-cpp.
  YamlMapIterator begin() const;
  YamlMapIterator end() const;

 private:
  friend class YamlDocument;
  friend class YamlBuilder;
  YamlNode(const YamlDocument* document, uint32_t index) : document_(document), index_(index) {}

  const YamlDocument* document_ = nullptr;
  uint32_t index_ = 0;
};

struct YamlEntry {
  YamlNode first;   // the key
  YamlNode second;  // the value
};

class YamlMapIterator {
 public:
  YamlMapIterator(YamlNode map, size_t i) : map_(map), i_(i) {}
  YamlEntry operator*() const { return map_.MapEntry(i_); }
  const YamlEntry* operator->() {
    entry_ = map_.MapEntry(i_);
    return &entry_;
  }
  YamlMapIterator& operator++() {
    ++i_;
    return *this;
  }
  bool operator==(const YamlMapIterator& other) const { return i_ == other.i_; }
  bool operator!=(const YamlMapIterator& other) const { return i_ != other.i_; }

 private:
  YamlNode map_;
  size_t i_;
  YamlEntry entry_;
};

inline YamlMapIterator YamlNode::begin() const { return YamlMapIterator(*this, 0); }
inline YamlMapIterator YamlNode::end() const {
  return YamlMapIterator(*this, IsMap() ? size() : 0);
}

// A syntax error or a refused document: where, and the sentence to print.
struct YamlError {
  YamlMark mark;
  std::string message;
};

// A parsed YAML stream of exactly the values in the text: an alias shares
// its anchor's value (nothing is copied), so memory follows the file size.
class YamlDocument {
 public:
  // Parses every document of `text`. On a syntax error, or when a document
  // breaks `limits`, returns the error and where it is.
  static std::unique_ptr<YamlDocument> Parse(absl::string_view text, const YamlLimits& limits,
                                             YamlError* error);

  // The root of each document (a comment-only file has none).
  const std::vector<YamlNode>& documents() const { return documents_; }

 private:
  friend class YamlNode;
  friend class YamlBuilder;

  struct Value {
    YamlType type = YamlType::kUndefined;
    bool plain = false;
    YamlMark mark;
    uint32_t first_child = 0;  // into children_
    uint32_t child_count = 0;
    std::string scalar;
  };

  std::vector<Value> values_;
  std::vector<uint32_t> children_;  // each collection's items (maps: key, value, key, ...)
  std::vector<YamlNode> documents_;
};

}  // namespace clustercert::controller::plan
