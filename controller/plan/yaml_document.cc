#include "controller/plan/yaml_document.h"

#include <yaml.h>

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace clustercert::controller::plan {
namespace {

const std::string& EmptyText() {
  static const std::string* const empty = new std::string();
  return *empty;
}

YamlMark MarkOf(const yaml_mark_t& mark) {
  return YamlMark{static_cast<int>(mark.line), static_cast<int>(mark.column)};
}

// YAML 1.1's plain nulls, as yaml-cpp (and every YAML user) reads them.
bool IsNullText(absl::string_view text) {
  return text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL";
}

struct EventFree {
  void operator()(yaml_event_t* event) const { yaml_event_delete(event); }
};

}  // namespace

// Builds a YamlDocument from libyaml's events, counting every value as it
// would be walked (an alias counts its anchor's whole value again), so a
// document that expands beyond the limits is refused while it is read.
class YamlBuilder {
 public:
  YamlBuilder(YamlDocument* document, const YamlLimits& limits)
      : document_(document), limits_(limits) {}

  bool Run(absl::string_view text, YamlError* error) {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
      *error = YamlError{{0, 0}, "the YAML parser could not start (out of memory)"};
      return false;
    }
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
    bool ok = true;
    bool done = false;
    while (ok && !done) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser, &event)) {
        std::string message = parser.problem != nullptr ? parser.problem : "unreadable YAML";
        if (parser.context != nullptr) absl::StrAppend(&message, " ", parser.context);
        *error = YamlError{MarkOf(parser.problem_mark),
                           absl::StrCat("the file is not valid YAML: ", message)};
        ok = false;
        break;
      }
      std::unique_ptr<yaml_event_t, EventFree> owned(&event);
      done = event.type == YAML_STREAM_END_EVENT;
      ok = Handle(event, error);
    }
    yaml_parser_delete(&parser);
    return ok;
  }

 private:
  struct Open {
    uint32_t index;
    size_t first_pending;   // where its children start in pending_
    uint64_t expanded = 1;  // this value and everything under it, aliases expanded
    std::string anchor;
    size_t height = 1;  // collections from this one down to its deepest, aliases expanded
  };

  // What an anchor names, for its aliases: the value, its size and its height
  // (0 for a scalar), all with aliases expanded.
  struct Anchored {
    uint32_t index;
    uint64_t expanded;
    size_t height;
  };

  bool Handle(const yaml_event_t& event, YamlError* error) {
    const YamlMark mark = MarkOf(event.start_mark);
    switch (event.type) {
      case YAML_DOCUMENT_START_EVENT:
        root_set_ = false;
        return true;
      case YAML_DOCUMENT_END_EVENT:
        if (root_set_) document_->documents_.push_back(YamlNode(document_, root_));
        return true;
      case YAML_SCALAR_EVENT: {
        const auto& scalar = event.data.scalar;
        std::string text(reinterpret_cast<const char*>(scalar.value), scalar.length);
        const bool plain = scalar.style == YAML_PLAIN_SCALAR_STYLE && scalar.tag == nullptr;
        const uint32_t index =
            NewValue(plain && IsNullText(text) ? YamlType::kNull : YamlType::kScalar, mark);
        document_->values_[index].plain = plain;
        document_->values_[index].scalar = std::move(text);
        if (scalar.anchor != nullptr) {
          anchors_[reinterpret_cast<const char*>(scalar.anchor)] = {index, 1, 0};
        }
        return AddChild(index, 1, mark, error);
      }
      case YAML_ALIAS_EVENT: {
        const std::string name = reinterpret_cast<const char*>(event.data.alias.anchor);
        auto it = anchors_.find(name);
        if (it == anchors_.end()) {
          *error =
              YamlError{mark, absl::StrCat("the alias *", name, " names no complete value &", name,
                                           " before it; define the anchor first (an alias "
                                           "may not refer to a value that contains it)")};
          return false;
        }
        // An alias puts its anchor's whole value here: nesting 64 levels
        // around an alias of a 64-level value is 128 levels to a walker.
        if (!CheckDepth(open_.size() + it->second.height, mark, error)) return false;
        return AddChild(it->second.index, it->second.expanded, mark, error, /*counted=*/false,
                        it->second.height);
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        const bool map = event.type == YAML_MAPPING_START_EVENT;
        const yaml_char_t* anchor =
            map ? event.data.mapping_start.anchor : event.data.sequence_start.anchor;
        // Checked before libyaml reads further: its scanner's cost per token
        // grows with the depth, so the parse must end while that is small.
        if (!CheckDepth(open_.size() + 1, mark, error)) return false;
        Open open{NewValue(map ? YamlType::kMap : YamlType::kSequence, mark), pending_.size(), 1,
                  anchor != nullptr ? reinterpret_cast<const char*>(anchor) : ""};
        open_.push_back(std::move(open));
        return CountValues(1, mark, error);
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        Open open = std::move(open_.back());
        open_.pop_back();
        YamlDocument::Value& value = document_->values_[open.index];
        value.first_child = static_cast<uint32_t>(document_->children_.size());
        // Children of open collections wait on one stack (no allocation per
        // collection); one that ends moves its own to the document, in order.
        value.child_count = static_cast<uint32_t>(pending_.size() - open.first_pending);
        document_->children_.insert(document_->children_.end(),
                                    pending_.begin() + open.first_pending, pending_.end());
        pending_.resize(open.first_pending);
        if (!open.anchor.empty()) {
          anchors_[open.anchor] = {open.index, open.expanded, open.height};
        }
        // The value was counted once when it opened; its parent gains it whole.
        return AddChild(open.index, open.expanded, value.mark, error, /*counted=*/true,
                        open.height);
      }
      default:
        return true;
    }
  }

  uint32_t NewValue(YamlType type, YamlMark mark) {
    YamlDocument::Value value;
    value.type = type;
    value.mark = mark;
    document_->values_.push_back(std::move(value));
    return static_cast<uint32_t>(document_->values_.size() - 1);
  }

  bool CountValues(uint64_t count, YamlMark mark, YamlError* error) {
    expanded_total_ += count;
    if (expanded_total_ <= limits_.max_values) return true;
    *error = YamlError{
        mark, absl::StrCat("the plan holds more than ", limits_.max_values,
                           " YAML values once its aliases are expanded (each use of an alias "
                           "counts its whole anchored value), far more than a plan of 100,000 "
                           "nodes needs; write the plan out without nested aliases")};
    return false;
  }

  // `depth` collections, one inside the other, from the document's root.
  bool CheckDepth(size_t depth, YamlMark mark, YamlError* error) {
    if (depth <= limits_.max_depth) return true;
    *error = YamlError{
        mark, absl::StrCat("the plan nests collections more than ", limits_.max_depth,
                           " deep here (maps and lists inside one another, aliases expanded); "
                           "a plan nests about 4, so this is not a plan (check that it is the "
                           "right file)")};
    return false;
  }

  // Adds `index` (worth `expanded` values, `height` collections deep) under
  // the open collection, or as the document's root.
  bool AddChild(uint32_t index, uint64_t expanded, YamlMark mark, YamlError* error,
                bool counted = false, size_t height = 0) {
    if (!counted && !CountValues(expanded, mark, error)) return false;
    if (open_.empty()) {
      root_ = index;
      root_set_ = true;
      return true;
    }
    Open& parent = open_.back();
    parent.height = std::max(parent.height, height + 1);
    pending_.push_back(index);
    parent.expanded = std::min<uint64_t>(parent.expanded + expanded, limits_.max_values + 1);
    if (document_->values_[parent.index].type == YamlType::kMap &&
        pending_.size() - parent.first_pending > 2 * limits_.max_map_keys) {
      *error = YamlError{document_->values_[parent.index].mark,
                         absl::StrCat("this map has more than ", limits_.max_map_keys,
                                      " keys; no map of a plan has more than a few dozen, so "
                                      "this is not a plan (check that it is the right file)")};
      return false;
    }
    return true;
  }

  YamlDocument* document_;
  const YamlLimits& limits_;
  std::vector<Open> open_;
  std::vector<uint32_t> pending_;  // children of the open collections, innermost last
  std::unordered_map<std::string, Anchored> anchors_;
  uint64_t expanded_total_ = 0;
  uint32_t root_ = 0;
  bool root_set_ = false;
};

std::unique_ptr<YamlDocument> YamlDocument::Parse(absl::string_view text, const YamlLimits& limits,
                                                  YamlError* error) {
  auto document = std::unique_ptr<YamlDocument>(new YamlDocument());
  // A plan holds about one value per 8 bytes ("gpus: 8" is two): reserving
  // that spares growing the arrays a few dozen times on a large file.
  const size_t expected = std::min<size_t>(text.size() / 8 + 16, limits.max_values);
  document->values_.reserve(expected);
  document->children_.reserve(expected);
  YamlBuilder builder(document.get(), limits);
  if (!builder.Run(text, error)) return nullptr;
  return document;
}

YamlType YamlNode::Type() const {
  return document_ == nullptr ? YamlType::kUndefined : document_->values_[index_].type;
}

const std::string& YamlNode::Scalar() const {
  if (document_ == nullptr || document_->values_[index_].type != YamlType::kScalar) {
    return EmptyText();
  }
  return document_->values_[index_].scalar;
}

bool YamlNode::IsPlain() const { return IsScalar() && document_->values_[index_].plain; }

YamlMark YamlNode::Mark() const {
  return document_ == nullptr ? YamlMark{} : document_->values_[index_].mark;
}

size_t YamlNode::size() const {
  if (document_ == nullptr) return 0;
  const YamlDocument::Value& value = document_->values_[index_];
  if (value.type == YamlType::kSequence) return value.child_count;
  if (value.type == YamlType::kMap) return value.child_count / 2;
  return 0;
}

YamlNode YamlNode::operator[](size_t i) const {
  if (!IsSequence() || i >= size()) return YamlNode();
  const YamlDocument::Value& value = document_->values_[index_];
  return YamlNode(document_, document_->children_[value.first_child + i]);
}

YamlEntry YamlNode::MapEntry(size_t i) const {
  if (!IsMap() || i >= size()) return YamlEntry{};
  const YamlDocument::Value& value = document_->values_[index_];
  const uint32_t at = value.first_child + 2 * static_cast<uint32_t>(i);
  return YamlEntry{YamlNode(document_, document_->children_[at]),
                   YamlNode(document_, document_->children_[at + 1])};
}

}  // namespace clustercert::controller::plan
