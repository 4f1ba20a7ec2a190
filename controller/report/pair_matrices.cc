#include "controller/report/pair_matrices.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::report {
namespace {

// The number that starts at `pos` (after blanks), or nullopt.
std::optional<double> NumberAt(absl::string_view text, size_t pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  if (pos >= text.size()) return std::nullopt;
  const std::string rest(text.substr(pos, 32));
  char* end = nullptr;
  const double value = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str()) return std::nullopt;
  return value;
}

// The number that ends just before `pos` (before blanks), or nullopt.
std::optional<double> NumberBefore(absl::string_view text, size_t pos) {
  while (pos > 0 && text[pos - 1] == ' ') --pos;
  size_t begin = pos;
  while (begin > 0 &&
         (std::isdigit(static_cast<unsigned char>(text[begin - 1])) || text[begin - 1] == '.')) {
    --begin;
  }
  if (begin == pos) return std::nullopt;
  return NumberAt(text, begin);
}

// "... % of 2.5 Gb/s" -> 2.5
std::optional<double> LineRateIn(absl::string_view text) {
  for (size_t pos = text.find("% of "); pos != absl::string_view::npos;
       pos = text.find("% of ", pos + 1)) {
    const size_t at = pos + 5;
    auto value = NumberAt(text, at);
    if (!value) continue;
    const size_t unit = text.find(" Gb/s", at);
    if (unit != absl::string_view::npos && unit - at <= 24) return value;
  }
  return std::nullopt;
}

// ">= 0.005 Gb/s (0.2 % of 2.5 Gb/s)" or ">= 0.2 % of line rate" -> 0.002
std::optional<double> FloorFractionIn(absl::string_view text) {
  const size_t pos = text.find("% of");
  if (pos == absl::string_view::npos) return std::nullopt;
  auto percent = NumberBefore(text, pos);
  if (!percent) return std::nullopt;
  return *percent / 100;
}

// The slower of the two ports' rates on the pair's rail, from the inventory.
double InventoryLineRate(const v1::PairResult& pair, const v1::Certificate& certificate) {
  if (pair.rail().empty()) return 0;
  double rate = 0;
  for (const std::string* end : {&pair.client(), &pair.server()}) {
    double found = 0;
    for (const auto& node : certificate.nodes()) {
      if (node.name() != *end) continue;
      for (const auto& device : node.inventory().rdma_devices()) {
        if (device.name() != pair.rail()) continue;
        for (const auto& port : device.ports()) {
          if (port.has_rate_gbps() && port.rate_gbps() > 0) {
            found = port.rate_gbps();
            break;
          }
        }
      }
    }
    if (found <= 0) return 0;
    rate = rate == 0 ? found : std::min(rate, found);
  }
  return rate;
}

CellScale BandwidthScale(const v1::PairResult& pair, const v1::Certificate& certificate) {
  CellScale scale;
  const v1::Finding& verdict = pair.verdict();
  if (auto fraction = FloorFractionIn(verdict.expected())) scale.floor_fraction = *fraction;
  if (pair.line_rate_gbps() > 0) {
    scale.reference = pair.line_rate_gbps();
    scale.basis = "the pair's line rate";
  } else if (auto rate = LineRateIn(verdict.observed())) {
    scale.reference = *rate;
    scale.basis = "the line rate in the verdict";
  } else if (auto rate = LineRateIn(verdict.expected())) {
    scale.reference = *rate;
    scale.basis = "the line rate in the verdict";
  } else if (pair.threshold() > 0 && scale.floor_fraction > 0) {
    scale.reference = pair.threshold() / scale.floor_fraction;
    scale.basis = "the threshold over the plan's fraction";
  } else if (double rate = InventoryLineRate(pair, certificate); rate > 0) {
    scale.reference = rate;
    scale.basis = "the slower port's rate in the inventory";
  }
  if (scale.reference > 0 && pair.threshold() > 0) {
    scale.floor_fraction = pair.threshold() / scale.reference;
  }
  if (pair.ok() && scale.reference > 0) scale.ratio = pair.value() / scale.reference;
  return scale;
}

CellScale LatencyScale(const v1::PairResult& pair) {
  CellScale scale;
  const std::string& expected = pair.verdict().expected();
  if (pair.threshold() > 0) {
    scale.reference = pair.threshold();
    scale.basis = "the pair's threshold";
  } else if (size_t pos = expected.find("<= "); pos != std::string::npos) {
    if (auto bound = NumberAt(expected, pos + 3); bound && *bound > 0) {
      scale.reference = *bound;
      scale.basis = "the bound in the verdict";
    }
  }
  if (pair.ok() && scale.reference > 0) scale.ratio = pair.value() / scale.reference;
  return scale;
}

// `names` in their order, then any pair endpoint they do not name; empty
// names left out. Templates so that a certificate's repeated field and a
// plain vector share the code.
template <typename Pairs>
std::vector<std::string> NamesThenEndpoints(const std::vector<std::string>& names,
                                            const Pairs& pairs) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  auto add = [&](const std::string& name) {
    if (!name.empty() && seen.insert(name).second) order.push_back(name);
  };
  for (const auto& name : names) add(name);
  for (const auto& pair : pairs) {
    add(pair.client());
    add(pair.server());
  }
  return order;
}

// One matrix per (test, rail, memory) over `nodes`, retests left out.
template <typename Pairs>
std::vector<PairMatrix> GroupPairs(const std::vector<std::string>& nodes, const Pairs& pairs) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, PairMatrix> groups;
  for (const auto& pair : pairs) {
    if (!pair.retest_of().empty()) continue;
    PairMatrix& matrix = groups[Key{pair.test(), pair.rail(), pair.memory()}];
    if (matrix.test.empty()) {
      matrix.test = pair.test();
      matrix.rail = pair.rail();
      matrix.memory = pair.memory();
      matrix.kind = KindOf(pair);
      matrix.nodes = nodes;
    }
    if (matrix.unit.empty()) matrix.unit = pair.unit();
    auto [it, inserted] = matrix.cells.insert_or_assign({pair.client(), pair.server()}, &pair);
    if (!inserted) ++matrix.duplicates;
  }
  std::vector<PairMatrix> out;
  out.reserve(groups.size());
  for (auto& [key, matrix] : groups) out.push_back(std::move(matrix));
  return out;
}

}  // namespace

PairKind KindOf(const v1::PairResult& pair) {
  if (pair.unit() == "us" || absl::EndsWith(pair.test(), "_lat")) return PairKind::kLatency;
  return PairKind::kBandwidth;
}

v1::Finding::Status CellStatus(const v1::PairResult& pair) {
  const auto status = pair.verdict().status();
  if (status != v1::Finding::unset_status) return status;
  return pair.ok() ? v1::Finding::unknown : v1::Finding::fail;
}

CellScale ScaleOf(const v1::PairResult& pair, const v1::Certificate& certificate) {
  return KindOf(pair) == PairKind::kLatency ? LatencyScale(pair)
                                            : BandwidthScale(pair, certificate);
}

std::string PairMatrix::Title() const {
  return absl::StrCat(test, rail.empty() ? "" : " ", rail, " ", memory);
}

std::vector<std::string> NodeOrder(const v1::Certificate& certificate) {
  std::vector<std::string> names;
  names.reserve(certificate.nodes_size());
  for (const auto& node : certificate.nodes()) names.push_back(node.name());
  return NamesThenEndpoints(names, certificate.pairs());
}

std::vector<PairMatrix> GroupPairMatrices(const v1::Certificate& certificate) {
  return GroupPairs(NodeOrder(certificate), certificate.pairs());
}

std::vector<PairMatrix> GroupPairMatrices(const std::vector<std::string>& node_names,
                                          const std::vector<v1::PairResult>& pairs) {
  return GroupPairs(NamesThenEndpoints(node_names, pairs), pairs);
}

std::vector<const v1::PairResult*> Retests(const v1::Certificate& certificate) {
  std::vector<const v1::PairResult*> out;
  for (const auto& pair : certificate.pairs()) {
    if (!pair.retest_of().empty()) out.push_back(&pair);
  }
  return out;
}

}  // namespace clustercert::controller::report
