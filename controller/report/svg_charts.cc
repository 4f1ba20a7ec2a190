#include "controller/report/svg_charts.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/checks/status_text.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

// Rough width of one character of the 12px sans-serif labels, for layout.
constexpr int kCharWidth = 7;

// Three significant digits: 3.68 %, 46.6 %, 0.184 %, 100 %.
std::string Percent(double ratio) { return absl::StrFormat("%.3g %%", ratio * 100); }

struct Geometry {
  int cell_w;
  int cell_h;
  int font;  // 0: no value text in the cells
};

Geometry GeometryFor(size_t nodes) {
  if (nodes <= 10) return {64, 30, 11};
  if (nodes <= 20) return {40, 24, 9};
  return {14, 14, 0};
}

// Nice axis step for about `ticks` intervals over [0, max].
double NiceStep(double max, int ticks) {
  const double raw = max / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

}  // namespace

std::string PassColor(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const double hue = 42 + 88 * t;  // amber -> green
  return absl::StrFormat("hsl(%.0f,62%%,%.0f%%)", hue, 60 - 8 * t);
}

std::string CellColor(const v1::PairResult& pair, const CellScale& scale) {
  const auto status = CellStatus(pair);
  if (status == v1::Finding::fail || !pair.ok()) return kFailColor;
  if (status == v1::Finding::unknown) return kUnknownColor;
  if (status == v1::Finding::skipped && !scale.ratio) return kSkippedColor;
  if (!scale.ratio) return PassColor(1);  // passing, nothing to grade it against
  double t;
  if (KindOf(pair) == PairKind::kLatency) {
    t = 1 - *scale.ratio;
  } else {
    const double floor = scale.floor_fraction < 1 ? scale.floor_fraction : 0;
    t = (*scale.ratio - floor) / (1 - floor);
  }
  return PassColor(t);
}

std::string CellTitle(const v1::PairResult& pair, const CellScale& scale) {
  std::string text =
      absl::StrCat(pair.client(), " -> ", pair.server(), " ", pair.test(),
                   pair.rail().empty() ? "" : " ", pair.rail(), " ", pair.memory(), ": ");
  if (!pair.ok()) {
    absl::StrAppend(&text, "did not complete",
                    pair.error().empty() ? std::string() : absl::StrCat(": ", pair.error()));
  } else if (KindOf(pair) == PairKind::kLatency) {
    const auto& latency = pair.client_result().latency();
    absl::StrAppend(&text, "typical ", FormatNumber(pair.value()), " ", pair.unit());
    if (pair.client_result().has_latency()) {
      absl::StrAppend(&text, " (p99 ", FormatNumber(latency.p99_us()), ", min ",
                      FormatNumber(latency.min_us()), ", max ", FormatNumber(latency.max_us()),
                      ")");
    }
    if (scale.ratio) {
      absl::StrAppend(&text, ", ", Percent(*scale.ratio), " of the ", FormatNumber(scale.reference),
                      " us bound");
    }
  } else {
    absl::StrAppend(&text, FormatNumber(pair.value()), " ", pair.unit());
    if (scale.ratio) {
      absl::StrAppend(&text, ", ", Percent(*scale.ratio), " of ", FormatNumber(scale.reference),
                      " Gb/s line rate (", scale.basis, ")");
    }
    if (scale.floor_fraction > 0) {
      absl::StrAppend(&text, ", floor ", Percent(scale.floor_fraction));
    }
  }
  absl::StrAppend(&text, "; ", checks::StatusText(CellStatus(pair)));
  if (IsCarried(pair.carried())) absl::StrAppend(&text, ", ", CarriedText(pair.carried()));
  if (!pair.verdict().message().empty()) absl::StrAppend(&text, ". ", pair.verdict().message());
  for (const auto& concern : pair.counter_concerns()) absl::StrAppend(&text, "\n", concern);
  return text;
}

namespace {

// Names longer than this are cut in the labels (the cells' hover text and
// the value table keep them whole).
constexpr size_t kMaxLabel = 30;

std::string CutLabel(const std::string& name) {
  // Cut on a character boundary: half a UTF-8 sequence would show as U+FFFD.
  return name.size() <= kMaxLabel
             ? name
             : name.substr(0, Utf8Prefix(name, kMaxLabel - 1)) + "\xE2\x80\xA6";
}

// Where the heatmap's labels go. Column labels sit level when they fit the
// cell, else slanted, or upright when the cells are too narrow for slanted
// labels not to collide.
struct HeatmapLayout {
  Geometry g;
  int text_w = 0;
  int label_w = 0;
  bool slant = false;
  bool upright = false;
  int top = 0;  // a caption line, then the column labels
};

HeatmapLayout LayoutFor(const PairMatrix& matrix) {
  HeatmapLayout layout;
  layout.g = GeometryFor(matrix.nodes.size());
  size_t longest = 6;
  for (const auto& name : matrix.nodes) {
    longest = std::max(longest, std::min(name.size(), kMaxLabel));
  }
  layout.text_w = static_cast<int>(longest) * kCharWidth;
  layout.label_w = layout.text_w + 12;
  layout.slant = layout.text_w > layout.g.cell_w - 4;
  layout.upright = layout.slant && layout.g.cell_w <= 20;
  const int label_h = layout.upright ? layout.text_w + 12
                      : layout.slant ? static_cast<int>(layout.text_w * 0.72) + 22
                                     : 24;
  layout.top = 18 + label_h;
  return layout;
}

std::string ColumnLabels(const PairMatrix& matrix, const HeatmapLayout& l) {
  std::string svg;
  for (size_t c = 0; c < matrix.nodes.size(); ++c) {
    const int x = l.label_w + static_cast<int>(c) * l.g.cell_w + l.g.cell_w / 2;
    const std::string text = HtmlEscape(CutLabel(matrix.nodes[c]));
    if (l.upright) {
      absl::StrAppend(&svg, absl::StrFormat("<text class=\"col\" transform=\"translate(%d,%d) "
                                            "rotate(-90)\">%s</text>\n",
                                            x + 4, l.top - 6, text));
    } else if (l.slant) {
      absl::StrAppend(&svg, absl::StrFormat("<text class=\"col\" transform=\"translate(%d,%d) "
                                            "rotate(-45)\">%s</text>\n",
                                            x - 2, l.top - 6, text));
    } else {
      absl::StrAppend(&svg, absl::StrFormat("<text class=\"col\" x=\"%d\" y=\"%d\" "
                                            "text-anchor=\"middle\">%s</text>\n",
                                            x, l.top - 6, text));
    }
  }
  return svg;
}

// A cell without a result: the diagonal, or a pair the schedule left out.
std::string EmptyCell(const std::string& client, const std::string& server, int x, int y,
                      const Geometry& g) {
  const bool diagonal = client == server;
  return absl::StrFormat(
      "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" "
      "height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n",
      diagonal ? "diagonal" : "unscheduled", x, y, g.cell_w - 2, g.cell_h - 2,
      diagonal ? kDiagonalColor : kNotScheduledColor,
      HtmlEscape(absl::StrCat(client, " -> ", server, ": ",
                              diagonal ? "not paired with itself" : "not scheduled, no result")));
}

// A measured cell: coloured by its scale, its value written in when the
// cells are large enough, a failure marked either way.
std::string MeasuredCell(const v1::PairResult& pair, const v1::Certificate& certificate, int x,
                         int y, const Geometry& g) {
  const CellScale scale = ScaleOf(pair, certificate);
  const auto status = CellStatus(pair);
  const bool failing = status == v1::Finding::fail || !pair.ok();
  std::string svg = absl::StrFormat(
      "<rect data-cell=\"%s\" class=\"cell %s\" x=\"%d\" y=\"%d\" "
      "width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n",
      HtmlEscape(checks::StatusText(status)),
      failing ? "fail" : HtmlEscape(checks::StatusText(status)), x, y, g.cell_w - 2, g.cell_h - 2,
      CellColor(pair, scale), HtmlEscape(CellTitle(pair, scale)));
  if (g.font > 0) {
    std::string label = pair.ok() ? ShortNumber(pair.value()) : std::string("ERR");
    if (failing) label = absl::StrCat("\xE2\x9C\x97 ", label);
    absl::StrAppend(&svg,
                    absl::StrFormat("<text class=\"v%s\" x=\"%d\" y=\"%d\" "
                                    "font-size=\"%d\" text-anchor=\"middle\">%s</text>\n",
                                    failing ? " fail" : "", x + g.cell_w / 2 - 1,
                                    y + g.cell_h / 2 + g.font / 3, g.font, HtmlEscape(label)));
  } else if (failing) {
    absl::StrAppend(&svg, absl::StrFormat("<path class=\"cross\" d=\"M%d %dL%d %dM%d %dL%d "
                                          "%d\"/>\n",
                                          x + 2, y + 2, x + g.cell_w - 4, y + g.cell_h - 4,
                                          x + g.cell_w - 4, y + 2, x + 2, y + g.cell_h - 4));
  }
  return svg;
}

}  // namespace

std::string HeatmapSvg(const PairMatrix& matrix, const v1::Certificate& certificate) {
  const HeatmapLayout l = LayoutFor(matrix);
  const Geometry& g = l.g;
  const int n = static_cast<int>(matrix.nodes.size());
  const int width =
      std::max(l.label_w + n * g.cell_w + (l.slant && !l.upright ? l.text_w * 3 / 4 : 8), 300);
  const int height = l.top + n * g.cell_h + 8;

  std::string svg = absl::StrFormat(
      "<svg class=\"heatmap\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "aria-label=\"%s: client rows, server columns\">\n",
      width, height, width, height, HtmlEscape(matrix.Title()));
  absl::StrAppend(&svg,
                  "<text class=\"corner\" x=\"4\" y=\"12\">rows: client (measures) "
                  "\xE2\x86\x93 \xC2\xB7 columns: server \xE2\x86\x92</text>\n",
                  ColumnLabels(matrix, l));
  for (int r = 0; r < n; ++r) {
    const std::string& client = matrix.nodes[r];
    const int y = l.top + r * g.cell_h;
    absl::StrAppend(
        &svg, absl::StrFormat("<text class=\"row\" x=\"%d\" y=\"%d\" "
                              "text-anchor=\"end\">%s</text>\n",
                              l.label_w - 6, y + g.cell_h / 2 + 4, HtmlEscape(CutLabel(client))));
    for (int c = 0; c < n; ++c) {
      const std::string& server = matrix.nodes[c];
      const int x = l.label_w + c * g.cell_w;
      auto it = matrix.cells.find({client, server});
      absl::StrAppend(&svg, client == server || it == matrix.cells.end()
                                ? EmptyCell(client, server, x, y, g)
                                : MeasuredCell(*it->second, certificate, x, y, g));
    }
  }
  svg += "</svg>\n";
  return svg;
}

namespace {

// The busbw chart of one sweep: message sizes on a log2 x axis, busbw on a
// linear y axis from 0 to a round value above the best figure and the floor.
class BusbwChart {
 public:
  // `rows`: the sweep's rows with bytes > 0, sorted by size, at least one.
  BusbwChart(const v1::CollectiveSweep& sweep, std::vector<const v1::CollectiveRow*> rows)
      : sweep_(sweep), rows_(std::move(rows)) {
    lo_ = static_cast<int>(std::floor(std::log2(static_cast<double>(rows_.front()->bytes()))));
    hi_ = static_cast<int>(std::ceil(std::log2(static_cast<double>(rows_.back()->bytes()))));
    if (hi_ <= lo_) {
      --lo_;
      ++hi_;
    }
    double ymax = sweep.min_busbw_gbytes();
    for (const auto* row : rows_) {
      ymax = std::max(ymax, row->oop_busbw_gbytes());
      if (row->has_in_place()) {
        any_in_place_ = true;
        ymax = std::max(ymax, row->ip_busbw_gbytes());
      }
    }
    if (!(ymax > 0)) ymax = 1;
    ystep_ = NiceStep(ymax * 1.08, 5);
    ytop_ = ystep_ * std::ceil(ymax * 1.08 / ystep_);
  }

  std::string Render() const {
    std::string svg = absl::StrFormat(
        "<svg class=\"busbw-chart\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
        "aria-label=\"%s allreduce busbw against message size\">\n",
        kWidth, kHeight, kWidth, kHeight, HtmlEscape(sweep_.scope()));
    absl::StrAppend(&svg, absl::StrFormat("<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" "
                                          "height=\"%d\"/>\n",
                                          kLeft, kTop, kPlotW, kPlotH));
    absl::StrAppend(&svg, YGrid(), XGrid(), AxisTitles(), LargeBand(), Floor(), Series(false));
    if (any_in_place_) absl::StrAppend(&svg, Series(true));
    absl::StrAppend(&svg, Legend(), "</svg>\n");
    return svg;
  }

 private:
  static constexpr int kWidth = 760, kHeight = 330;
  static constexpr int kLeft = 78, kRight = 24, kTop = 26, kBottom = 56;
  static constexpr int kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

  double X(int64_t bytes) const {
    return kLeft + (std::log2(static_cast<double>(bytes)) - lo_) / (hi_ - lo_) * kPlotW;
  }
  double Y(double gbytes) const { return kTop + kPlotH - gbytes / ytop_ * kPlotH; }

  std::string YGrid() const {
    std::string svg;
    for (double v = 0; v <= ytop_ * (1 + 1e-9); v += ystep_) {
      const double y = Y(v);
      absl::StrAppend(
          &svg, absl::StrFormat("<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
                                "y2=\"%.1f\"/><text class=\"tick\" x=\"%d\" y=\"%.1f\" "
                                "text-anchor=\"end\">%s</text>\n",
                                kLeft, y, kLeft + kPlotW, y, kLeft - 6, y + 4, FormatNumber(v)));
    }
    return svg;
  }

  // Every power of two, a label on every `step`-th so at most 12 show.
  std::string XGrid() const {
    std::string svg;
    const int step = std::max(1, (hi_ - lo_ + 11) / 12);
    for (int e = lo_; e <= hi_; ++e) {
      const double x = X(int64_t{1} << e);
      const bool labelled = (e - lo_) % step == 0;
      absl::StrAppend(&svg,
                      absl::StrFormat("<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
                                      "y2=\"%d\"/>\n",
                                      labelled ? "grid" : "grid minor", x, kTop, x, kTop + kPlotH));
      if (labelled) {
        absl::StrAppend(&svg, absl::StrFormat("<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
                                              "text-anchor=\"middle\">%s</text>\n",
                                              x, kTop + kPlotH + 16, FormatBytes(int64_t{1} << e)));
      }
    }
    return svg;
  }

  static std::string AxisTitles() {
    return absl::StrCat(
        absl::StrFormat("<text class=\"axis\" x=\"%d\" y=\"%d\" "
                        "text-anchor=\"middle\">message size (bytes, log2)</text>\n",
                        kLeft + kPlotW / 2, kHeight - 10),
        absl::StrFormat("<text class=\"axis\" transform=\"translate(16,%d) "
                        "rotate(-90)\" text-anchor=\"middle\">busbw (GB/s)</text>\n",
                        kTop + kPlotH / 2));
  }

  // The sizes the "large" figure is taken from.
  std::string LargeBand() const {
    if (sweep_.large_from_bytes() <= 0) return "";
    const double x =
        std::clamp(X(sweep_.large_from_bytes()), double{kLeft}, double{kLeft + kPlotW});
    return absl::StrCat(
        absl::StrFormat(
            "<rect class=\"large\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
            "height=\"%d\"><title>%s</title></rect>\n",
            x, kTop, kLeft + kPlotW - x, kPlotH,
            HtmlEscape(absl::StrCat("large sizes from ", FormatBytes(sweep_.large_from_bytes()),
                                    ": best out-of-place busbw ",
                                    FormatNumber(sweep_.large_busbw_gbytes()), " GB/s"))),
        absl::StrFormat("<text class=\"tick\" x=\"%.1f\" y=\"%d\">large "
                        "\xE2\x89\xA5 %s</text>\n",
                        x + 4, kTop + 14, FormatBytes(sweep_.large_from_bytes())));
  }

  // The plan's busbw floor.
  std::string Floor() const {
    if (sweep_.min_busbw_gbytes() <= 0) return "";
    const double y = Y(sweep_.min_busbw_gbytes());
    return absl::StrFormat(
        "<line class=\"threshold\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
        "y2=\"%.1f\"><title>plan floor %s GB/s</title></line>"
        "<text class=\"threshold-label\" x=\"%d\" y=\"%.1f\" "
        "text-anchor=\"end\">floor %s GB/s</text>\n",
        kLeft, y, kLeft + kPlotW, y, FormatNumber(sweep_.min_busbw_gbytes()), kLeft + kPlotW - 4,
        y - 4, FormatNumber(sweep_.min_busbw_gbytes()));
  }

  // One line with a mark per size; each mark's tooltip has the row's figures.
  std::string Series(bool in_place) const {
    const char* name = in_place ? "in-place" : "out-of-place";
    std::string points, marks;
    for (const auto* row : rows_) {
      if (in_place && !row->has_in_place()) continue;
      const double busbw = in_place ? row->ip_busbw_gbytes() : row->oop_busbw_gbytes();
      const double time = in_place ? row->ip_time_us() : row->oop_time_us();
      const double x = X(row->bytes()), y = Y(busbw);
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x, y));
      absl::StrAppend(
          &marks,
          absl::StrFormat("<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\">"
                          "<title>%s</title></circle>\n",
                          in_place ? "ip" : "oop", x, y,
                          HtmlEscape(absl::StrCat(name, " ", FormatBytes(row->bytes()), " (",
                                                  row->bytes(), " B): busbw ", FormatNumber(busbw),
                                                  " GB/s, ", FormatNumber(time), " us"))));
    }
    return absl::StrCat("<polyline class=\"", in_place ? "ip" : "oop", "\" points=\"", points,
                        "\"/>\n", marks);
  }

  std::string Legend() const {
    std::string svg = absl::StrFormat(
        "<g class=\"legend\" transform=\"translate(%d,%d)\">"
        "<line class=\"oop\" x1=\"0\" y1=\"0\" x2=\"22\" y2=\"0\"/>"
        "<text x=\"28\" y=\"4\">out-of-place</text>",
        kLeft + 8, kTop - 10);
    if (any_in_place_) {
      absl::StrAppend(&svg,
                      "<line class=\"ip\" x1=\"120\" y1=\"0\" x2=\"142\" y2=\"0\"/>"
                      "<text x=\"148\" y=\"4\">in-place</text>");
    }
    return svg + "</g>\n";
  }

  const v1::CollectiveSweep& sweep_;
  std::vector<const v1::CollectiveRow*> rows_;
  int lo_ = 0;
  int hi_ = 0;
  double ystep_ = 1;
  double ytop_ = 1;
  bool any_in_place_ = false;
};

}  // namespace

std::string BusbwChartSvg(const v1::CollectiveSweep& sweep) {
  std::vector<const v1::CollectiveRow*> rows;
  for (const auto& row : sweep.rows()) {
    if (row.bytes() > 0) rows.push_back(&row);
  }
  if (rows.empty()) return "";
  std::sort(rows.begin(), rows.end(),
            [](const auto* a, const auto* b) { return a->bytes() < b->bytes(); });
  return BusbwChart(sweep, std::move(rows)).Render();
}

}  // namespace clustercert::controller::report
