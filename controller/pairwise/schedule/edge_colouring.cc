#include "controller/pairwise/schedule/edge_colouring.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

// A proper partial edge colouring with a fixed palette: for every node and
// colour, the neighbour joined by an edge of that colour (or -1), plus a
// bitset of the colours in use at each node so that "a colour free at both
// ends" is a few word operations.
class Colouring {
 public:
  Colouring(int nodes, int palette)
      : palette_(palette),
        words_((palette + 63) / 64),
        at_(static_cast<size_t>(nodes) * palette, -1),
        used_(static_cast<size_t>(nodes) * words_, 0) {}

  int palette() const { return palette_; }
  int At(int node, int colour) const { return at_[Index(node, colour)]; }
  bool Free(int node, int colour) const { return At(node, colour) < 0; }

  void Set(int a, int b, int colour) {
    at_[Index(a, colour)] = b;
    at_[Index(b, colour)] = a;
    Mark(a, colour, true);
    Mark(b, colour, true);
  }

  void Clear(int a, int b, int colour) {
    at_[Index(a, colour)] = -1;
    at_[Index(b, colour)] = -1;
    Mark(a, colour, false);
    Mark(b, colour, false);
  }

  // The smallest colour free at `a` and, when b >= 0, at `b` too; -1 if none.
  int FirstFree(int a, int b = -1) const {
    for (int w = 0; w < words_; ++w) {
      uint64_t used = used_[static_cast<size_t>(a) * words_ + w];
      if (b >= 0) used |= used_[static_cast<size_t>(b) * words_ + w];
      uint64_t free = ~used;
      if (w == words_ - 1 && palette_ % 64 != 0) free &= (uint64_t{1} << (palette_ % 64)) - 1;
      if (free != 0) return w * 64 + __builtin_ctzll(free);
    }
    return -1;
  }

  // The colour of edge a–b, or -1 when it is uncoloured.
  int ColourOf(int a, int b) const {
    for (int c = 0; c < palette_; ++c) {
      if (At(a, c) == b) return c;
    }
    return -1;
  }

 private:
  size_t Index(int node, int colour) const { return static_cast<size_t>(node) * palette_ + colour; }
  void Mark(int node, int colour, bool on) {
    uint64_t& word = used_[static_cast<size_t>(node) * words_ + colour / 64];
    const uint64_t bit = uint64_t{1} << (colour % 64);
    word = on ? (word | bit) : (word & ~bit);
  }

  int palette_;
  int words_;
  std::vector<int> at_;
  std::vector<uint64_t> used_;
};

// Colours the uncoloured edge u–v when no colour is free at both ends
// (Misra & Gries, "A constructive proof of Vizing's theorem", 1992): build a
// maximal fan of u starting at v, invert the cd-path from u, then rotate the
// first fan prefix that is still a fan and ends where d is free.
void MisraGriesStep(Colouring& colouring, std::vector<int>& fan_stamp, int stamp, int u, int v) {
  std::vector<int> fan = {v};
  std::vector<int> fan_colour = {-1};  // colour of u–fan[i]; fan[0] is uncoloured
  fan_stamp[v] = stamp;
  for (bool grew = true; grew;) {
    grew = false;
    const int last = fan.back();
    for (int c = 0; c < colouring.palette(); ++c) {
      if (!colouring.Free(last, c)) continue;
      const int x = colouring.At(u, c);
      if (x < 0 || fan_stamp[x] == stamp) continue;
      fan.push_back(x);
      fan_colour.push_back(c);
      fan_stamp[x] = stamp;
      grew = true;
      break;
    }
  }
  const int c = colouring.FirstFree(u);
  const int d = colouring.FirstFree(fan.back());
  if (c != d) {
    // The c/d component holding u is a path (c is free at u): swap its colours.
    std::vector<std::pair<int, int>> path;
    std::vector<int> path_colour;
    for (int node = u, colour = d; colouring.At(node, colour) >= 0; colour = colour == d ? c : d) {
      const int next = colouring.At(node, colour);
      path.emplace_back(node, next);
      path_colour.push_back(colour);
      node = next;
    }
    for (size_t i = 0; i < path.size(); ++i) {
      colouring.Clear(path[i].first, path[i].second, path_colour[i]);
    }
    for (size_t i = 0; i < path.size(); ++i) {
      colouring.Set(path[i].first, path[i].second, path_colour[i] == d ? c : d);
    }
    // Only u's first path edge touched u, so at most one fan colour moved (d -> c).
    for (size_t i = 1; i < fan.size(); ++i) {
      if (colouring.At(u, fan_colour[i]) != fan[i]) fan_colour[i] = colouring.ColourOf(u, fan[i]);
    }
  }
  // The theorem guarantees a prefix fan[0..w] that is still a fan (each edge
  // u–fan[j] has a colour free at fan[j-1]) and ends where d is free; d is
  // now free at u.
  size_t w = fan.size() - 1;
  for (size_t j = 0; j < fan.size(); ++j) {
    if (j > 0 && !colouring.Free(fan[j - 1], fan_colour[j])) break;
    if (colouring.Free(fan[j], d)) {
      w = j;
      break;
    }
  }
  for (size_t i = 1; i <= w; ++i) colouring.Clear(u, fan[i], fan_colour[i]);
  for (size_t i = 0; i < w; ++i) colouring.Set(u, fan[i], fan_colour[i + 1]);
  colouring.Set(u, fan[w], d);
}

}  // namespace

absl::StatusOr<std::vector<PairRound>> ColourEdges(int nodes,
                                                   const std::vector<std::pair<int, int>>& edges) {
  if (nodes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("edge colouring needs a node count of 0 or more, not ", nodes, "."));
  }
  std::vector<std::pair<int, int>> sorted;
  sorted.reserve(edges.size());
  std::vector<int> degree(nodes, 0);
  for (const auto& [a, b] : edges) {
    if (a < 0 || b < 0 || a >= nodes || b >= nodes) {
      return absl::InvalidArgumentError(absl::StrCat("edge ", a, "–", b,
                                                     " names a node outside 0..", nodes - 1,
                                                     "; every edge must join two listed nodes."));
    }
    if (a == b) {
      return absl::InvalidArgumentError(
          absl::StrCat("edge ", a, "–", b, " joins a node to itself; a test needs two nodes."));
    }
    sorted.emplace_back(std::min(a, b), std::max(a, b));
    ++degree[a];
    ++degree[b];
  }
  std::sort(sorted.begin(), sorted.end());
  const auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
  if (repeat != sorted.end()) {
    return absl::InvalidArgumentError(absl::StrCat("edge ", repeat->first, "–", repeat->second,
                                                   " is listed twice; list each pair once."));
  }
  if (edges.empty()) return std::vector<PairRound>{};

  const int max_degree = *std::max_element(degree.begin(), degree.end());
  Colouring colouring(nodes, max_degree + 1);
  std::vector<int> fan_stamp(nodes, -1);
  int stamp = 0;
  for (const auto& [a, b] : edges) {
    const int common = colouring.FirstFree(a, b);
    if (common >= 0) {
      colouring.Set(a, b, common);
    } else {
      MisraGriesStep(colouring, fan_stamp, stamp++, a, b);
    }
  }

  std::vector<PairRound> rounds;
  size_t coloured = 0;
  for (int c = 0; c < colouring.palette(); ++c) {
    PairRound round;
    for (int node = 0; node < nodes; ++node) {
      const int other = colouring.At(node, c);
      if (other > node) round.emplace_back(node, other);
    }
    coloured += round.size();
    if (!round.empty()) rounds.push_back(std::move(round));
  }
  if (coloured != edges.size()) {
    // A colouring step overwrote an edge: a bug here, never a property of the input.
    return absl::InternalError(absl::StrCat("edge colouring placed ", coloured, " of ",
                                            edges.size(),
                                            " edges; please report this with the "
                                            "node count and the edge list."));
  }
  return rounds;
}

}  // namespace clustercert::controller::pairwise::schedule
