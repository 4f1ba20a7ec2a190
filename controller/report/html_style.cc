#include "controller/report/html_style.h"

namespace clustercert::controller::report {

// One CSS string literal, not logic: its length is the style sheet's, not a function's.
const char* ReportStyleSheet() {
  return R"css(
:root { --fail: #b3261e; --pass: #1e7b34; --warn: #9a6700; --muted: #667085; --line: #d0d5dd; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
       Arial, sans-serif; color: #1d2939; background: #fff; }
main { max-width: 1500px; margin: 0 auto; padding: 0 24px 48px; }
h1 { margin: 0; font-size: 28px; letter-spacing: .02em; }
h2 { margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--line); font-size: 20px; }
h3 { margin: 20px 0 6px; font-size: 16px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono",
                   monospace; font-size: 12.5px; }
pre { background: #f6f8fa; padding: 10px; overflow-x: auto; border: 1px solid var(--line); }
.banner { padding: 18px 24px; color: #fff; }
.banner.certified { background: var(--pass); }
.banner.not-certified { background: var(--fail); }
.banner ul { margin: 8px 0 0; padding-left: 20px; font-size: 15px; }
.banner .sub { opacity: .9; margin-top: 4px; }
nav { margin: 12px 0; display: flex; flex-wrap: wrap; gap: 6px 14px; }
nav a { color: #175cd3; text-decoration: none; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: #f2f4f7; font-weight: 600; }
table.kv th { background: #f9fafb; font-weight: 600; white-space: nowrap; }
table.compact td, table.compact th { font-size: 12.5px; padding: 2px 6px; }
table.matrix td { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.matrix td:first-child { text-align: left; font-weight: 600; background: #f9fafb; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.fail, td.bad { color: var(--fail); font-weight: 600; }
td.ok { color: var(--pass); }
td.diag { background: #f2f4f7; color: var(--muted); text-align: center; }
.scroll { overflow-x: auto; max-width: 100%; }
.muted { color: var(--muted); }
.error { color: var(--fail); }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 11.5px;
         font-weight: 700; letter-spacing: .03em; vertical-align: middle; color: #fff;
         background: var(--muted); }
.badge.pass { background: var(--pass); }
.badge.fail, .badge.error { background: var(--fail); }
.badge.warn, .badge.unknown { background: var(--warn); }
.badge.skipped { background: #98a2b3; }
.badge.carried { background: #6941c6; font-weight: 600; }
.finding { border: 1px solid var(--line); border-left: 5px solid var(--muted); padding: 8px 12px;
           margin: 8px 0; }
.finding.fail { border-left-color: var(--fail); }
.finding.warn, .finding.unknown { border-left-color: var(--warn); }
.finding .key { font-weight: 600; }
.finding dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0 0; }
.finding dt { color: var(--muted); }
.finding dd { margin: 0; }
.remedy { background: #fffaeb; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: center; font-size: 12px;
          margin: 4px 0; }
.swatch { display: inline-block; width: 14px; height: 14px; vertical-align: middle;
          border: 1px solid #98a2b3; margin-right: 4px; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
           font-size: 12px; fill: #1d2939; }
svg.heatmap rect.cell { stroke: #fff; stroke-width: 1; }
svg.heatmap rect.cell.fail { stroke: #5c0a05; stroke-width: 3; }
svg.heatmap rect.cell:hover { stroke: #101828; stroke-width: 2; }
svg.heatmap text.v { pointer-events: none; fill: #101828; }
svg.heatmap text.v.fail { fill: #fff; font-weight: 700; }
svg.heatmap text.corner { fill: var(--muted); font-size: 11px; }
svg.heatmap path.cross { stroke: #fff; stroke-width: 2; pointer-events: none; }
svg.busbw-chart rect.plot { fill: #fcfcfd; stroke: #98a2b3; }
svg.busbw-chart rect.large { fill: #175cd3; fill-opacity: .06; }
svg.busbw-chart line.grid { stroke: #e4e7ec; }
svg.busbw-chart line.grid.minor { stroke: #f2f4f7; }
svg.busbw-chart text.tick { font-size: 11px; fill: #475467; }
svg.busbw-chart polyline { fill: none; stroke-width: 2; }
svg.busbw-chart .oop { stroke: #175cd3; fill: #175cd3; }
svg.busbw-chart polyline.oop, svg.busbw-chart line.oop { fill: none; }
svg.busbw-chart .ip { stroke: #dc6803; fill: #dc6803; }
svg.busbw-chart polyline.ip, svg.busbw-chart line.ip { fill: none; stroke-dasharray: 6 3; }
svg.busbw-chart line.oop, svg.busbw-chart line.ip { stroke-width: 2; }
svg.busbw-chart line.threshold { stroke: var(--fail); stroke-width: 1.5; stroke-dasharray: 4 3; }
svg.busbw-chart text.threshold-label { fill: var(--fail); font-size: 11px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print { .banner { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
               details { display: block; } }
)css";
}

}  // namespace clustercert::controller::report
