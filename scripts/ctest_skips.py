#!/usr/bin/env python3
"""Runs ctest, and under CI=true fails when a selected test did not run.

usage: ctest_skips.py ctest [CTEST ARGS...]

The rule of docs/testing.md ("A skip in CI is a failure") at ctest's level:
a test ctest reports "Skipped" (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION),
"Not Run" (its binary was not built: *_NOT_BUILT, "Unable to find
executable") or "Disabled" fails the stage under CI=true, named, unless it
skipped for a key of tests/allowed_skips.txt: its output then carries the
marker tests/support/environment_skip.h and tests/support/skip.sh print
("allowed skip: KEY (tests/allowed_skips.txt)"). A test excluded from the
selection (-E, -L, -LE) is not run at all and is no concern of this.

ctest runs with --output-junit, read back here. Outside CI the skips are
listed and ctest's own exit status stands. Exit: ctest's status, or 1 when
that was 0 and a test did not run under CI=true.
"""

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOWED_LIST = os.path.join(ROOT, "tests", "allowed_skips.txt")
MARKER = re.compile(r"allowed skip: ([a-z0-9-]+) \(tests/allowed_skips\.txt\)")
KEY = re.compile(r"^[a-z0-9-]+$")


def allowed_keys(path):
    """The keys of the list: first words of lines that carry a reason."""
    keys = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            words = line.split()
            if len(words) >= 2 and not words[0].startswith("#") and KEY.match(words[0]):
                keys.add(words[0])
    return keys


def not_run(junit_path):
    """(name, what ctest said, output) of each test that did not run."""
    found = []
    for case in ElementTree.parse(junit_path).getroot().iter("testcase"):
        status = case.get("status", "")
        if status == "run" or status == "fail":
            continue
        skipped = case.find("skipped")
        why = skipped.get("message", "") if skipped is not None else status
        found.append((case.get("name", "?"), why, case.findtext("system-out") or ""))
    return found


def judge(cases, keys):
    """The tests that must fail the stage: those without an allowed key."""
    failing = []
    for name, why, output in cases:
        allowed = [key for key in MARKER.findall(output) if key in keys]
        if not allowed or why == "Unable to find executable" or why == "disabled":
            failing.append((name, why))
    return failing


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    in_ci = os.environ.get("CI") == "true"
    with tempfile.TemporaryDirectory(prefix="ctest_skips_") as work:
        junit = os.path.join(work, "junit.xml")
        status = subprocess.run(argv[1:] + ["--output-junit", junit], check=False).returncode
        if not os.path.exists(junit):
            if in_ci and status == 0:
                print("ctest_skips: FAIL: ctest wrote no JUnit report to %s, so its skips "
                      "cannot be judged; run ctest 3.21 or newer" % junit, file=sys.stderr)
                return 1
            return status
        cases = not_run(junit)
    try:
        keys = allowed_keys(ALLOWED_LIST)
    except OSError as error:
        print("ctest_skips: cannot read %s (%s): no skip is allowed" % (ALLOWED_LIST, error),
              file=sys.stderr)
        keys = set()
    failing = judge(cases, keys)
    for name, why in failing:
        if in_ci:
            print("ctest_skips: FAIL: %s did not run under CI=true (%s): a test may skip in "
                  "CI only for a key of tests/allowed_skips.txt; build it, give CI's host what "
                  "it lacks (scripts/install-deps.sh), or fix the test" % (name, why),
                  file=sys.stderr)
        else:
            print("ctest_skips: %s did not run (%s); under CI=true that fails" % (name, why))
    allowed = len(cases) - len(failing)
    if allowed:
        print("ctest_skips: %d test(s) skipped for a key of tests/allowed_skips.txt" % allowed)
    if in_ci and failing and status == 0:
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
