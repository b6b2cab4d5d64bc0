"""Each test's name and outcome from a runner's verbose log: what a PASS set is made of.

Counts (``testlogs``) say whether tests ran; a PASS set needs names. Read here, from the lines
each runner prints per test in its verbose form (which AEC references use), by the name parsers
of the ecosystems (``pytest_enconda.ecosystems``):

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

A line is read by one parser only, the first in registration order that claims it, so one
runner's line never also counts as another's test. A name seen twice keeps its worst outcome (a
failure is never hidden by a later pass). Standard library only.
"""

from __future__ import annotations

import re

from ..ecosystems import ECOSYSTEMS, Outcome

_RANK = {"passed": 0, "skipped": 1, "failed": 2}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
MAX_LINE = 2_000


def _set(found: dict[str, Outcome], name: str, outcome: Outcome) -> None:
    name = name.strip()
    if not name:
        return
    if name not in found or _RANK[outcome] > _RANK[found[name]]:
        found[name] = outcome


def test_outcomes(text: str) -> dict[str, Outcome]:
    """Every test the log names, with its outcome (empty: the log names none)."""
    lines = [line[:MAX_LINE].rstrip() for line in _ANSI.sub("", text).splitlines()]
    claimed: dict[int, tuple[str, Outcome]] = {}
    for ecosystem in ECOSYSTEMS.values():
        for parser in ecosystem.name_parsers:
            for index, name, outcome in parser(lines):
                claimed.setdefault(index, (name, outcome))
    found: dict[str, Outcome] = {}
    for index in sorted(claimed):
        _set(found, *claimed[index])
    return found
