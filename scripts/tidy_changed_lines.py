"""Runs clang-tidy on the lines changed since a base commit (check_tidy.sh).

argv: BASE BUILD_DIR JOBS. Each changed production .cc file that the build's
compile_commands.json knows is checked once, with a line filter holding the
changed lines of every changed file, so a changed header's new lines are
judged in the changed sources that include it (a header changed alone is
not). Exit 1 when clang-tidy warns or cannot parse a file, with its output.
"""
import concurrent.futures
import json
import re
import subprocess
import sys

SOURCE_DIRS = ("agent/", "controller/", "common/", "sweep/", "workers/")
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
# A line that only opens or closes a namespace: a hunk of nothing else (a
# namespace renamed across the tree) gives clang-tidy nothing to judge and
# is not worth parsing a file for.
NAMESPACE_LINE = re.compile(r"^\s*(namespace [\w:]+ \{|\}\s*// namespace [\w:]*)?\s*$")


def changed_lines(base):
    """{path: [[first, last], ...]} of lines added or changed since `base`.

    A file moved since `base` (collective/ -> sweep/) counts by the lines its
    move changed, not as new: moving code does not write it again."""
    diff = subprocess.run(["git", "diff", "-U0", "--no-color", "--find-renames", base, "--",
                           "*.cc", "*.h"], check=True, capture_output=True, text=True).stdout
    ranges, path, hunk, added = {}, None, None, []

    def close_hunk():
        if path and hunk and not all(NAMESPACE_LINE.match(text) for text in added):
            ranges.setdefault(path, []).append(hunk)

    for line in diff.splitlines():
        if line.startswith("+++ "):
            close_hunk()
            path, hunk, added = (line[6:] if line.startswith("+++ b/") else None), None, []
        elif match := HUNK.match(line):
            close_hunk()
            first, count = int(match.group(1)), int(match.group(2) or 1)
            hunk, added = ([first, first + count - 1] if count > 0 else None), []
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    close_hunk()
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "--",
                                "*.cc", "*.h"], check=True, capture_output=True,
                               text=True).stdout.split()
    for path in untracked:
        ranges[path] = [[1, 1_000_000]]
    return {p: r for p, r in ranges.items() if p.startswith(SOURCE_DIRS)}


def main():
    base, build, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ranges = changed_lines(base)
    with open(f"{build}/compile_commands.json") as f:
        known = {entry["file"] for entry in json.load(f)}
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True,
                          capture_output=True, text=True).stdout.strip()
    sources = sorted(p for p in ranges if p.endswith(".cc") and f"{root}/{p}" in known)
    if not sources:
        print(f"check_tidy: no changed source since {base[:12]}: nothing to check")
        return 0
    line_filter = json.dumps([{"name": p, "lines": r} for p, r in sorted(ranges.items())])

    def tidy(path):
        run = subprocess.run(["clang-tidy", "-p", build, "--quiet",
                              f"--line-filter={line_filter}", path],
                             capture_output=True, text=True)
        return path, run.returncode, run.stdout + run.stderr

    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, code, out in pool.map(tidy, sources):
            warnings = [l for l in out.splitlines() if re.search(r": (warning|error): ", l)]
            if code != 0 or warnings:
                failed.append(path)
                print(out, end="")
    print(f"check_tidy: {len(sources)} changed file(s) since {base[:12]} checked, "
          f"{len(failed)} with findings")
    if failed:
        print("check_tidy: fix the lines above (or, where a check is wrong for this code, say "
              "why in .clang-tidy and leave it out there)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
