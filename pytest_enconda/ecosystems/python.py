"""Python: pytest and unittest.

The profile reads Python repositories itself (requires-python, extras, the CI matrix, the
package manager), so this record has no profile function; its runners' logs and per-test lines
are read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .record import Ecosystem, Found, Outcome
from .testfiles import TestFiles

# --- pytest -----------------------------------------------------------------------------------

_PYTEST_SUMMARY = re.compile(
    r"^(?:=+ )?(no tests ran|\d+ \w+(?:, \d+ \w+)*) in [\d.]+s(?: \([^)]*\))?(?: =+)?$"
)
_PYTEST_COLLECT = re.compile(r"^(?:!+ )?Interrupted: \d+ errors? during collection(?: !+)?$")


def _pytest(lines: list[str]) -> Found | None:
    found = Found("pytest")
    for line in lines:
        match = _PYTEST_SUMMARY.match(line)
        if match:
            body = match.group(1)
            words: dict[str, int] = dict.fromkeys(("passed", "failed", "skipped", "errors"), 0)
            counted = body == "no tests ran"
            for part in body.split(", ") if not counted else []:
                number, word = part.split(" ", 1)
                key = {
                    "passed": "passed",
                    "xpassed": "passed",
                    "failed": "failed",
                    "skipped": "skipped",
                    "xfailed": "skipped",
                    "error": "errors",
                    "errors": "errors",
                }.get(word)
                if key:
                    words[key] += int(number)
                    counted = True
                elif word not in ("warning", "warnings", "deselected", "rerun", "subtests"):
                    counted = False
                    break
            if not counted:
                continue
            for key, value in words.items():
                found.add(key, value)
            found.summary = True
            found.evidence.append(line)
        elif _PYTEST_COLLECT.match(line) or line.startswith("ERROR collecting "):
            found.collection_error = True
            found.evidence.append(line)
    return found if found.summary or found.collection_error else None


# --- unittest ---------------------------------------------------------------------------------

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$")
_UNITTEST_END = re.compile(r"^(OK|FAILED|NO TESTS RAN)(?: \(([a-z =\d,]*)\))?$")


def _unittest(lines: list[str]) -> Found | None:
    found = Found("unittest")
    for index, line in enumerate(lines):
        ran = _UNITTEST_RAN.match(line)
        if ran:
            end = next((x for x in lines[index + 1 : index + 4] if x.strip()), "")
            status = _UNITTEST_END.match(end)
            if not status:
                continue
            extra = dict.fromkeys(
                ("failures", "errors", "skipped", "expected failures", "unexpected successes"), 0
            )
            for part in (status.group(2) or "").split(", "):
                key, _, value = part.partition("=")
                if key in extra and value.isdigit():
                    extra[key] = int(value)
            total = int(ran.group(1))
            failed = extra["failures"] + extra["unexpected successes"]
            skipped = extra["skipped"] + extra["expected failures"]
            found.add("passed", max(total - failed - extra["errors"] - skipped, 0))
            found.add("failed", failed)
            found.add("errors", extra["errors"])
            found.add("skipped", skipped)
            found.summary = True
            found.evidence += [line, end]
        elif "unittest.loader._FailedTest" in line or line.startswith(
            "ImportError: Failed to import test module"
        ):
            found.collection_error = True
            found.evidence.append(line)
    return found if found.summary else None


# --- per-test lines: pytest -v (path::test PASSED), -rA (PASSED path::test), unittest -v -------

_PYTEST_V = re.compile(
    # "::" is looked for ahead: two runs around it could split a long id every way.
    r"^(?=\S+::\S)(\S+(?:\[[^\]]*\])?)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?:\s|$)"
)
_PYTEST_RA = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+::\S+?)(?:\s+-\s.*)?$")
_UNITTEST_V = re.compile(r"^(\w+) \(([\w.]+)\)(?:\s*\n?.*?)? \.\.\. (ok|FAIL|ERROR|skipped\b.*)$")
_PYTEST_OUTCOME: dict[str, Outcome] = {
    "PASSED": "passed",
    "XPASS": "passed",
    "FAILED": "failed",
    "ERROR": "failed",
    "SKIPPED": "skipped",
    "XFAIL": "skipped",
}


def _pytest_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    for index, line in enumerate(lines):
        if match := _PYTEST_V.match(line):
            yield index, match.group(1), _PYTEST_OUTCOME[match.group(2)]
        elif match := _PYTEST_RA.match(line):
            yield index, match.group(2), _PYTEST_OUTCOME[match.group(1)]


def _unittest_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    """Named ``module.Class.test_x``, as unittest's own ids are."""
    for index, line in enumerate(lines):
        if match := _UNITTEST_V.match(line):
            method, where, status = match.groups()
            name = where if where.endswith("." + method) else f"{where}.{method}"
            outcome: Outcome = (
                "passed"
                if status == "ok"
                else "skipped"
                if status.startswith("skipped")
                else "failed"
            )
            yield index, name, outcome


PYTHON = Ecosystem(
    name="python",
    title="Python",
    languages=("python",),
    manifests=("pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "requirements.txt"),
    debian_packages=("python3", "python3-pip", "python3-venv"),
    programs=("python3", "pip3"),
    test_files=TestFiles(
        paths=("tests/", "test/", "testing/", "test_*.py", "*_test.py", "conftest.py"),
        configs=("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "noxfile.py"),
        sections=("setup.cfg", "pyproject.toml"),
        sources=("*.py",),
    ),
    toolchain=("python", "python3"),
    test_tools=("pytest",),
    test_commands=(
        r"pytest",
        r"py\.test",
        r"tox",
        r"nox",
        r"python3?\s+-m\s+(?:pytest|unittest)",
    ),
    test_command="python -m pytest -rA",
    verdict_lines=(
        _PYTEST_SUMMARY.pattern,
        _PYTEST_COLLECT.pattern,
        r"^ERROR collecting ",
        r"^(?:FAILED|ERROR) \S",
        r"^\S+ (?:FAILED|ERROR)\b",
        _UNITTEST_RAN.pattern,
        _UNITTEST_END.pattern,
        r"^ImportError: Failed to import test module",
        r"^(?:FAIL|ERROR): \w",
    ),
    # `path::test PASSED` (-v) and `PASSED path::test` (-rA); `\S+ ` has one way to match.
    count_lines=(r"^\S+ (?:PASSED|SKIPPED|XFAIL|XPASS)\b", r"^(?:PASSED|SKIPPED|XFAIL|XPASS) \S"),
    log_parsers=(_pytest, _unittest),
    name_parsers=(_pytest_names, _unittest_names),
)
