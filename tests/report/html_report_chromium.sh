#!/usr/bin/env bash
# Renders the lab-slowed certificate with `controller report` and opens the
# HTML report in headless Chromium:
#   (a) takes a screenshot (OUT_DIR/report.png, kept as the artifact);
#   (b) dumps the DOM after load and counts the heatmap cells (`data-cell`)
#       against the certificate's measured pairs (pairs without retest_of);
#   (c) fails on console errors: the report carries no script, so any
#       CONSOLE line Chromium logs for it is a fault (see below);
#   (d) fails when the page made any network request (Chromium's net log);
# and validates junit.xml with validate_junit.py.
#
# usage: html_report_chromium.sh CONTROLLER_BIN OUT_DIR
# (CHROMIUM=/path/to/chromium overrides the chromium found on PATH)
# exit: 0 pass, 1 fail (with a sentence), 77 skipped (no chromium/python3;
# under CI=true that fails instead: tests/support/skip.sh).
#
# What Chromium 156 (Debian) prints with --enable-logging=stderr --v=0 for a
# file:// page: every console message at INFO, level dropped, as
#   [pid:tid:MMDD/HHMMSS.us:INFO:CONSOLE:2] "msg", source: file:///... (2)
# console.log, console.warn and console.error look the same, and an uncaught
# exception reads "Uncaught ReferenceError: ...". Chromium passes the real
# level through only for its own WebUI pages, so "level error" cannot be told
# apart here: the check fails on an :ERROR:CONSOLE line (older/other builds),
# on "Uncaught", and on any other CONSOLE line, since a page without script
# should log nothing. Failed subresource loads are not logged to stderr at
# all, which is why (d) reads the net log instead.
set -u

usage="usage: $0 CONTROLLER_BIN OUT_DIR"
[ $# -eq 2 ] || { echo "$usage" >&2; exit 1; }
CONTROLLER=$1
OUT=$2

fail() { echo "html_report_chromium: FAIL: $*" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# skip_or_fail KEY REASON: exit 77 here, a failure under CI=true (docs/testing.md).
source "$SRC/tests/support/skip.sh"
SKIP_TEST_NAME=html_report_chromium
CERT="$SRC/tests/fixtures/certificates/lab-slowed.json"
VALIDATE="$SRC/tests/report/validate_junit.py"

if [ -n "${CHROMIUM:-}" ]; then
  [ -x "$CHROMIUM" ] || fail "CHROMIUM=$CHROMIUM is not an executable; unset it to use chromium from PATH"
else
  CHROMIUM=$(command -v chromium) ||
    skip_or_fail chromium "chromium is not installed (apt-get install chromium)"
fi
command -v python3 >/dev/null || skip_or_fail python3 "python3 is not installed; it counts the expected cells and validates junit.xml"
[ -x "$CONTROLLER" ] || fail "the controller binary '$CONTROLLER' is not executable; build the controller target and pass its path"
[ -r "$CERT" ] || fail "the fixture $CERT is missing; run from a clustercert checkout"

mkdir -p "$OUT" || fail "cannot create $OUT; pass a writable output directory"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/report.html" "$OUT/report.md" "$OUT/junit.xml" "$OUT/report.png" "$OUT/report.dom.html"

work=$(mktemp -d) || fail "mktemp -d failed; check that TMPDIR is writable"
trap 'rm -rf "$work"' EXIT

# --- the report command ------------------------------------------------------
"$CONTROLLER" report "$CERT" --out "$OUT" >"$work/report.out" 2>"$work/report.err"
rc=$?
[ $rc -eq 0 ] || fail "'$CONTROLLER report $CERT --out $OUT' exited $rc: $(head -c 600 "$work/report.err")"
for name in report.html report.md junit.xml; do
  [ -s "$OUT/$name" ] || fail "the report command did not write $OUT/$name"
  grep -qxF "$OUT/$name" "$work/report.out" || fail "the report command did not print the path $OUT/$name"
done

# Heatmap cells the certificate implies: distinct non-retest cells, no self-pairs.
read -r expected_cells expected_maps < <(python3 - "$CERT" <<'EOF'
import json, sys
pairs = json.load(open(sys.argv[1])).get("pairs", [])
cells, maps = set(), set()
for p in pairs:
    if p.get("retest_of") or p.get("client") == p.get("server"):
        continue
    key = (p.get("test", ""), p.get("rail", ""), p.get("memory", ""))
    maps.add(key)
    cells.add(key + (p.get("client"), p.get("server")))
print(len(cells), len(maps))
EOF
) || fail "cannot read the pairs of $CERT with python3"

flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --enable-logging=stderr --v=0)
profile() { mktemp -d -p "$work" profile.XXXXXX; }
url="file://$OUT/report.html"

# --- (a) screenshot --------------------------------------------------------------
timeout 120 "$CHROMIUM" "${flags[@]}" --user-data-dir="$(profile)" \
  --screenshot="$OUT/report.png" --window-size=1400,4000 "$url" \
  >"$work/shot.out" 2>"$OUT/chromium-screenshot.log" ||
  fail "chromium --screenshot exited $? (log: $OUT/chromium-screenshot.log)"
[ "$(head -c 8 "$OUT/report.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] ||
  fail "chromium wrote no PNG at $OUT/report.png (log: $OUT/chromium-screenshot.log)"

# --- (b) DOM after load, with the net log for (d) ---------------------------------
timeout 120 "$CHROMIUM" "${flags[@]}" --user-data-dir="$(profile)" \
  --log-net-log="$work/netlog.json" --dump-dom "$url" \
  >"$OUT/report.dom.html" 2>"$OUT/chromium-dom.log" ||
  fail "chromium --dump-dom exited $? (log: $OUT/chromium-dom.log)"
grep -q "</html>" "$OUT/report.dom.html" || fail "chromium --dump-dom printed no document (log: $OUT/chromium-dom.log)"
cells=$(grep -o 'data-cell' "$OUT/report.dom.html" | wc -l)
maps=$(grep -o 'class="heatmap"' "$OUT/report.dom.html" | wc -l)
[ "$cells" -eq "$expected_cells" ] ||
  fail "the rendered DOM has $cells data-cell rect(s), the certificate has $expected_cells measured pair cell(s)"
[ "$maps" -eq "$expected_maps" ] ||
  fail "the rendered DOM has $maps heatmap(s), the certificate has $expected_maps pair matrix(es)"
for external in 'http://' 'https://' '<link' 'src='; do
  ! grep -qF "$external" "$OUT/report.dom.html" || fail "the rendered DOM contains '$external': the report must not reference anything outside itself"
done

# --- (c) console ---------------------------------------------------------------
grep -hE ':CONSOLE[:(]|Uncaught' "$OUT/chromium-screenshot.log" "$OUT/chromium-dom.log" >"$work/console" || true
if [ -s "$work/console" ]; then
  kind="console message(s)"
  grep -qE ':ERROR:CONSOLE|Uncaught' "$work/console" && kind="console error(s)"
  fail "Chromium logged $(wc -l <"$work/console") $kind for the report, which has no script and should log none: $(head -c 600 "$work/console")"
fi

# --- (d) network -----------------------------------------------------------------
python3 - "$work/netlog.json" >"$work/network" 2>&1 <<'EOF'
# Requests the page made are the URL requests whose network isolation key is
# the file:// page; Chromium's own background requests (updates, time) carry
# other keys and are not the report's doing.
import json, sys
text = open(sys.argv[1]).read()
try:
    log = json.loads(text)
except ValueError:
    log = json.loads(text.rstrip().rstrip(",") + "]}")  # cut short at exit
events = log.get("events", [])
urls = {}
for event in events:
    params = event.get("params", {})
    if "url" in params:
        urls.setdefault(event["source"]["id"], params["url"])
for event in events:
    params = event.get("params", {})
    key = params.get("network_isolation_key", "")
    if key.startswith("file://"):
        url = params.get("url") or urls.get(event["source"]["id"], "?")
        if not url.startswith("file:"):
            print(url)
EOF
[ $? -eq 0 ] || fail "cannot read Chromium's net log: $(head -c 300 "$work/network")"
[ ! -s "$work/network" ] || fail "the report made network request(s): $(sort -u "$work/network" | head -5 | tr '\n' ' ')"

# --- junit.xml -------------------------------------------------------------------
python3 "$VALIDATE" "$OUT/junit.xml" >"$work/junit" 2>&1 || fail "$(cat "$work/junit")"

echo "html_report_chromium: pass ($("$CHROMIUM" --version 2>/dev/null | head -1))"
echo "  report:     $CONTROLLER report $CERT --out $OUT wrote report.html, report.md, junit.xml"
echo "  dom:        $cells data-cell rect(s) in $maps heatmap(s), as the certificate implies; no external reference"
echo "  console:    no CONSOLE line and no 'Uncaught' in Chromium's stderr"
echo "  network:    the page made no network request (Chromium net log)"
echo "  junit:      $(cat "$work/junit")"
echo "  screenshot: $OUT/report.png"
exit 0
