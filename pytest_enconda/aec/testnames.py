"""Each test's name and outcome from a runner's verbose log: what a PASS set is made of.

Counts (``testlogs``) say whether tests ran; a PASS set needs names. Read here, from the lines
each runner prints per test in its verbose form (which AEC references use):

- pytest ``-v`` (``path::test PASSED``) and ``-rA`` (``PASSED path::test``);
- unittest ``-v`` (``test_x (module.Class.test_x) ... ok``), named ``module.Class.test_x``;
- cargo test (``test path::name ... ok``);
- go test ``-v`` (``--- PASS: TestX``, subtests as ``TestX/sub``);
- ctest (``1/3 Test #1: name .....   Passed``);
- Automake's ``make check`` (``PASS: tests/jqtest``; XFAIL passes, XPASS fails);
- JUnit 5's console launcher tree (``├─ adds() ✔``), named ``Class.adds()``;
- node's test runner, TAP (``ok 1 - name``) and spec (``✔ name (1ms)``);
- Maven Surefire has only per-class lines in its log (its per-test results are XML reports);
  JUnit 4's ``JUnitCore`` prints no names of passing tests: neither gives names here.

A name seen twice keeps its worst outcome (a failure is never hidden by a later pass).
Standard library only.
"""

from __future__ import annotations

import re
from typing import Literal

Outcome = Literal["passed", "failed", "skipped"]
_RANK = {"passed": 0, "skipped": 1, "failed": 2}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
MAX_LINE = 2_000

_PYTEST_V = re.compile(
    r"^(\S+::\S+(?:\[[^\]]*\])?)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?:\s|$)"
)
_PYTEST_RA = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+::\S+?)(?:\s+-\s.*)?$")
_UNITTEST = re.compile(r"^(\w+) \(([\w.]+)\)(?:\s*\n?.*?)? \.\.\. (ok|FAIL|ERROR|skipped\b.*)$")
_CARGO = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)\b")
_GO = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")
_CTEST = re.compile(
    r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(\*+)?\s*([A-Za-z][A-Za-z ]*?)\s+[\d.]+ sec"
)
_AUTOMAKE = re.compile(r"^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): (\S+)$")
_JUNIT5 = re.compile(r"^(?P<indent>[│ ]*)[├└]─ (?P<name>.+?) (?P<mark>[✔✘↷■])(?:\s.*)?$")
_TAP = re.compile(
    r"^(?P<indent>\s*)(?P<not>not )?ok \d+ - (?P<name>.+?)(?P<skip>\s+#\s*(?:SKIP|TODO)\b.*)?$"
)
_NODE_SPEC = re.compile(
    r"^(?P<indent>\s*)(?P<mark>[✔✖﹣]) (?P<name>.+?) \([\d.]+m?s\)(?P<skip> # SKIP.*)?$"
)

_AUTOMAKE_OUTCOME: dict[str, Outcome] = {
    "PASS": "passed",
    "XFAIL": "passed",
    "SKIP": "skipped",
    "FAIL": "failed",
    "XPASS": "failed",
    "ERROR": "failed",
}
_PYTEST_OUTCOME: dict[str, Outcome] = {
    "PASSED": "passed",
    "XPASS": "passed",
    "FAILED": "failed",
    "ERROR": "failed",
    "SKIPPED": "skipped",
    "XFAIL": "skipped",
}
# What is not named here failed.
_JUNIT5_OUTCOME: dict[str, Outcome] = {"✔": "passed", "↷": "skipped"}
_CARGO_OUTCOME: dict[str, Outcome] = {"ok": "passed", "ignored": "skipped"}
_GO_OUTCOME: dict[str, Outcome] = {"PASS": "passed", "SKIP": "skipped"}


def _set(found: dict[str, Outcome], name: str, outcome: Outcome) -> None:
    name = name.strip()
    if not name:
        return
    if name not in found or _RANK[outcome] > _RANK[found[name]]:
        found[name] = outcome


def _junit5(lines: list[str], found: dict[str, Outcome]) -> None:
    """The tree's containers (classes) by depth; a leaf with ``(`` is a test method."""
    stack: list[tuple[int, str]] = []
    for line in lines:
        match = _JUNIT5.match(line)
        if not match:
            continue
        depth = len(match.group("indent"))
        name, mark = match.group("name"), match.group("mark")
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if "(" in name and name.endswith(")"):
            owner = next(
                (n for _, n in reversed(stack) if not n.startswith("JUnit ")),
                stack[-1][1] if stack else "",
            )
            outcome = _JUNIT5_OUTCOME.get(mark, "failed")
            _set(found, f"{owner}.{name}" if owner else name, outcome)
        else:
            stack.append((depth, name))


def test_outcomes(text: str) -> dict[str, Outcome]:
    """Every test the log names, with its outcome (empty: the log names none)."""
    lines = [line[:MAX_LINE].rstrip() for line in _ANSI.sub("", text).splitlines()]
    found: dict[str, Outcome] = {}
    tap_seen = any(line.startswith("TAP version") for line in lines)
    for line in lines:
        if match := _PYTEST_V.match(line):
            _set(found, match.group(1), _PYTEST_OUTCOME[match.group(2)])
        elif match := _PYTEST_RA.match(line):
            _set(found, match.group(2), _PYTEST_OUTCOME[match.group(1)])
        elif match := _UNITTEST.match(line):
            method, where, status = match.groups()
            name = where if where.endswith("." + method) else f"{where}.{method}"
            outcome: Outcome = (
                "passed"
                if status == "ok"
                else "skipped"
                if status.startswith("skipped")
                else "failed"
            )
            _set(found, name, outcome)
        elif match := _CARGO.match(line):
            status = match.group(2)
            _set(found, match.group(1), _CARGO_OUTCOME.get(status, "failed"))
        elif match := _GO.match(line):
            status = match.group(1)
            _set(found, match.group(2), _GO_OUTCOME.get(status, "failed"))
        elif match := _CTEST.match(line):
            status = match.group(3).strip()
            if status == "Passed":
                _set(found, match.group(1), "passed")
            elif status in ("Not Run", "Skipped") or "Disabled" in status:
                _set(found, match.group(1), "skipped")
            else:
                _set(found, match.group(1), "failed")
        elif match := _AUTOMAKE.match(line):
            _set(found, match.group(2), _AUTOMAKE_OUTCOME[match.group(1)])
        elif tap_seen and (match := _TAP.match(line)):
            if match.group("skip"):
                _set(found, match.group("name"), "skipped")
            else:
                _set(found, match.group("name"), "failed" if match.group("not") else "passed")
        elif not tap_seen and (match := _NODE_SPEC.match(line)):
            mark = match.group("mark")
            if match.group("skip") or mark == "﹣":
                _set(found, match.group("name"), "skipped")
            else:
                _set(found, match.group("name"), "passed" if mark == "✔" else "failed")
    _junit5(lines, found)
    return found
