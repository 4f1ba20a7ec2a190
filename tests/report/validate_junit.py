#!/usr/bin/env python3
"""Structural check of a JUnit XML file as `controller report` writes it.

usage: validate_junit.py JUNIT.xml

Checks that the root is <testsuites>, that every <testsuite> holds only
<properties> and <testcase> children, that every <testcase> has a name and a
classname and at most one of <failure>, <error>, <skipped>, that the
tests/failures/errors/skipped attributes are non-negative integers and
time attributes non-negative numbers, and that the counts on each suite match
its cases and the root's match the sum over the suites. Standard library only
(xml.etree). Exit 0 when valid; 1 when not well-formed or inconsistent, with
one line per problem on stderr; 2 on bad usage or an unreadable file.
"""

import sys
import xml.etree.ElementTree as ET

COUNTS = ("tests", "failures", "errors", "skipped")
OUTCOMES = ("failure", "error", "skipped")


def integer(element, name, where, problems, required=True):
    value = element.get(name)
    if value is None:
        if required:
            problems.append(f"{where}: attribute {name} is missing")
        return None
    try:
        number = int(value)
    except ValueError:
        problems.append(f"{where}: {name}=\"{value}\" is not an integer")
        return None
    if number < 0:
        problems.append(f"{where}: {name}=\"{value}\" is negative")
        return None
    return number


def seconds(element, where, problems):
    value = element.get("time")
    if value is None:
        return
    try:
        number = float(value)
    except ValueError:
        problems.append(f"{where}: time=\"{value}\" is not a number")
        return
    if not number >= 0:  # also catches NaN
        problems.append(f"{where}: time=\"{value}\" is not a non-negative number")


def check_case(case, where, problems):
    if not case.get("name"):
        problems.append(f"{where}: <testcase> without a name")
    if not case.get("classname"):
        problems.append(f"{where}: <testcase name=\"{case.get('name')}\"> without a classname")
    seconds(case, where, problems)
    outcomes = [child.tag for child in case if child.tag in OUTCOMES]
    if len(outcomes) > 1:
        problems.append(f"{where}: <testcase name=\"{case.get('name')}\"> has "
                        f"{len(outcomes)} outcomes ({', '.join(outcomes)}); at most one")
    for child in case:
        if child.tag in ("failure", "error") and child.get("message") is None:
            problems.append(f"{where}: <{child.tag}> in \"{case.get('name')}\" has no message")
        if child.tag not in OUTCOMES + ("system-out", "system-err"):
            problems.append(f"{where}: unexpected <{child.tag}> in <testcase>")
    return outcomes[0] if outcomes else "pass"


def validate(root):
    problems = []
    if root.tag != "testsuites":
        return [f"the root element is <{root.tag}>, expected <testsuites>"]
    totals = dict.fromkeys(COUNTS, 0)
    suites = [child for child in root if child.tag == "testsuite"]
    for child in root:
        if child.tag != "testsuite":
            problems.append(f"unexpected <{child.tag}> under <testsuites>")
    if not suites:
        problems.append("<testsuites> holds no <testsuite>")
    names = set()
    for index, suite in enumerate(suites):
        where = f"testsuite {index} ({suite.get('name')!r})"
        if not suite.get("name"):
            problems.append(f"{where}: no name")
        elif suite.get("name") in names:
            problems.append(f"{where}: a second suite with this name")
        names.add(suite.get("name"))
        seconds(suite, where, problems)
        seen = dict.fromkeys(COUNTS, 0)
        case_names = set()
        for child in suite:
            if child.tag == "properties":
                continue
            if child.tag != "testcase":
                problems.append(f"{where}: unexpected <{child.tag}>")
                continue
            seen["tests"] += 1
            key = (child.get("classname"), child.get("name"))
            if key in case_names:
                problems.append(f"{where}: testcase {key[1]!r} appears twice")
            case_names.add(key)
            outcome = check_case(child, where, problems)
            if outcome == "failure":
                seen["failures"] += 1
            elif outcome == "error":
                seen["errors"] += 1
            elif outcome == "skipped":
                seen["skipped"] += 1
        for name in COUNTS:
            declared = integer(suite, name, where, problems, required=name in ("tests",))
            if declared is not None and declared != seen[name]:
                problems.append(f"{where}: {name}=\"{declared}\" but it holds {seen[name]}")
            totals[name] += seen[name]
    for name in COUNTS:
        declared = integer(root, name, "testsuites", problems, required=False)
        if declared is not None and declared != totals[name]:
            problems.append(f"testsuites: {name}=\"{declared}\" but its suites add up to "
                            f"{totals[name]}")
    seconds(root, "testsuites", problems)
    return problems


def main(argv):
    if len(argv) != 2:
        print("usage: validate_junit.py JUNIT.xml", file=sys.stderr)
        return 2
    path = argv[1]
    try:
        root = ET.parse(path).getroot()
    except OSError as error:
        print(f"{path}: cannot read: {error}", file=sys.stderr)
        return 2
    except ET.ParseError as error:
        print(f"{path}: not well-formed XML: {error}", file=sys.stderr)
        return 1
    problems = validate(root)
    if problems:
        for problem in problems:
            print(f"{path}: {problem}", file=sys.stderr)
        return 1
    suites = [s for s in root if s.tag == "testsuite"]
    cases = sum(1 for s in suites for c in s if c.tag == "testcase")
    print(f"{path}: valid JUnit XML, {len(suites)} suite(s), {cases} testcase(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
