"""Reading a test runner's log: counts of passed, failed and skipped tests and a verdict.

Runners: pytest, unittest, cargo test, go test (plain and ``-v``), ctest, Automake's
``make check``, JUnit 4 (JUnitCore),
JUnit 5 (ConsoleLauncher), Maven Surefire, node's test runner (TAP and spec), Jest, Mocha, PHPUnit.

Verdict rules, in order (the README's "Reading test logs" repeats them):

1. A summary that counts a failed test or an error -> ``failure``.
2. A compile error or a collection error the runner itself reports (``could not compile``,
   ``[build failed]``, ``COMPILATION ERROR``, pytest's "errors during collection", a test file that
   failed to load) -> ``failure``, whatever else passed.
3. Summaries that executed no test at all ("no tests ran", ``Ran 0 tests``, ``[no test files]``,
   ``No tests were found!!!``) -> ``failure``: the runner ran and proved nothing.
4. Summaries that pass: ``success``, unless an exit code was given and is not 0, then
   ``inconclusive`` (the process failed after or around a passing summary: a later step, a
   coverage gate, or a summary printed by another command than the one that failed).
5. No summary: a compiler's error lines -> ``failure``; else a non-zero exit code -> ``failure``;
   else ``inconclusive`` (exit 0 with no summary, or prose claiming success, proves nothing).

Several runs in one log (cargo's per-binary ``test result:`` lines, go's packages, Maven's modules,
two commands' outputs) are summed. A count is ``None`` where the log does not say it (plain
``go test`` names packages, not tests; a compile error prints no counts).

Logs are bounded: past ``MAX_CHARS`` only the head and the tail are read (summaries sit at the end,
banners at the start), and ``truncated`` says so. Standard library and pydantic only.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..textio import open_regular

Verdict = Literal["success", "failure", "inconclusive"]

HEAD_CHARS = 200_000
TAIL_CHARS = 800_000
MAX_CHARS = HEAD_CHARS + TAIL_CHARS
# Regexes below are anchored and unambiguous, but a single megabyte-long line (a minified
# bundle, a progress bar without newlines) is still cut before matching.
MAX_LINE = 2_000
MAX_EVIDENCE = 6
# A stream (standard input, a FIFO, a device) has no end to seek to: past this much it is cut,
# so that `test-log /dev/zero` ends.
MAX_STREAM_BYTES = 1 << 30

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]")


class TestLogResult(BaseModel):
    """What a test log says: runner(s), counts, verdict and the lines that decided it."""

    __test__ = False  # a pydantic model named Test*, not a test class for pytest to collect

    framework: str = Field(description="runner name, several joined by '+', or 'unknown'")
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    errors: int | None = Field(default=None, description="errors apart from failed assertions")
    verdict: Verdict
    reason: str
    evidence: list[str] = Field(default_factory=list)
    truncated: bool = False

    def summary(self) -> dict[str, object]:
        """The CLI's JSON: the five documented keys, plus errors and the reason."""
        return {
            "framework": self.framework,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "verdict": self.verdict,
            "errors": self.errors,
            "reason": self.reason,
        }


@dataclass
class _Found:
    """One runner's reading of the log."""

    framework: str
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    errors: int | None = None
    summary: bool = False  # a counting summary (or the runner's own "no tests") was seen
    ran: bool | None = None  # whether a test executed, where counts cannot say (plain go test)
    compile_error: bool = False
    collection_error: bool = False
    evidence: list[str] = field(default_factory=list)

    def add(self, name: str, value: int) -> None:
        setattr(self, name, (getattr(self, name) or 0) + value)

    def executed(self) -> int:
        return (self.passed or 0) + (self.failed or 0) + (self.errors or 0)


def _clean(text: str) -> list[str]:
    return [line[:MAX_LINE].rstrip() for line in _ANSI.sub("", text).splitlines()]


def _ints(match: re.Match[str]) -> list[int]:
    return [int(group or 0) for group in match.groups()]


# --- pytest -----------------------------------------------------------------------------------

_PYTEST_SUMMARY = re.compile(
    r"^(?:=+ )?(no tests ran|\d+ \w+(?:, \d+ \w+)*) in [\d.]+s(?: \([^)]*\))?(?: =+)?$"
)
_PYTEST_COLLECT = re.compile(r"^(?:!+ )?Interrupted: \d+ errors? during collection(?: !+)?$")


def _pytest(lines: list[str]) -> _Found | None:
    found = _Found("pytest")
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


def _unittest(lines: list[str]) -> _Found | None:
    found = _Found("unittest")
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


# --- cargo test -------------------------------------------------------------------------------

_CARGO_RESULT = re.compile(
    r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; "
    r"(\d+) measured; (\d+) filtered out"
)
_CARGO_COMPILE = re.compile(r"^error: could not compile `[^`]+`")
_CARGO_MARK = re.compile(r"^\s+(?:Compiling|Running|Doc-tests) \S+")


def _cargo(lines: list[str]) -> _Found | None:
    found = _Found("cargo")
    marked = False
    for line in lines:
        match = _CARGO_RESULT.match(line)
        if match:
            passed, failed, ignored, _measured, _filtered = _ints(match)
            found.add("passed", passed)
            found.add("failed", failed)
            found.add("skipped", ignored)
            found.summary = True
            found.evidence.append(line)
        elif _CARGO_COMPILE.match(line):
            found.compile_error = True
            found.evidence.append(line)
        elif _CARGO_MARK.match(line):
            marked = True
    return found if found.summary or (found.compile_error and marked) else None


# --- go test ----------------------------------------------------------------------------------

_GO_OK = re.compile(r"^ok\s+\S+\s+(?:[\d.]+s|\(cached\))(.*)$")
_GO_FAIL_PKG = re.compile(r"^FAIL\s+\S+\s+(?:[\d.]+s|\[(build|setup) failed\])")
_GO_NO_FILES = re.compile(r"^\?\s+\S+\s+\[no test files\]$")
_GO_TEST = re.compile(r"^--- (PASS|FAIL|SKIP): \S+ \(")


def _go(lines: list[str]) -> _Found | None:
    found = _Found("go")
    verbose = any(line.startswith("=== RUN ") for line in lines)
    packages = ran_packages = 0
    tests = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for line in lines:
        if match := _GO_OK.match(line):
            packages += 1
            if "[no tests to run]" not in match.group(1):
                ran_packages += 1
            found.evidence.append(line)
        elif match := _GO_FAIL_PKG.match(line):
            packages += 1
            if match.group(1):
                found.compile_error = True
            else:
                ran_packages += 1
            found.evidence.append(line)
        elif _GO_NO_FILES.match(line):
            packages += 1
        elif match := _GO_TEST.match(line):
            # Only top-level tests: subtests print indented and fail with their parent.
            tests[match.group(1)] += 1
    if not packages:
        return None
    found.summary = True
    found.failed = tests["FAIL"]
    if verbose:
        found.passed, found.skipped = tests["PASS"], tests["SKIP"]
    else:
        # Plain go test names packages, not tests: passes and skips are not in the log.
        found.ran = ran_packages > 0
    found.evidence = found.evidence[-MAX_EVIDENCE:]
    return found


# --- ctest ------------------------------------------------------------------------------------

_CTEST_SUMMARY = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)$")
_CTEST_NOT_RUN = re.compile(r"^\s*\d+ - \S+ \((Skipped|Disabled|Not Run)\)$")


def _ctest(lines: list[str]) -> _Found | None:
    found = _Found("ctest")
    not_run = 0
    for line in lines:
        if match := _CTEST_SUMMARY.match(line):
            failed, total = _ints(match)
            found.add("failed", failed)
            found.add("passed", total - failed)
            found.summary = True
            found.evidence.append(line)
        elif _CTEST_NOT_RUN.match(line):
            not_run += 1
        elif line == "No tests were found!!!":
            found.add("passed", 0)
            found.add("failed", 0)
            found.summary = True
            found.evidence.append(line)
    if not found.summary:
        return None
    # "out of N" counts the skipped and disabled tests among those that "passed".
    found.passed = max((found.passed or 0) - not_run, 0)
    found.skipped = not_run
    return found


# --- Automake's test harness (make check) --------------------------------------------------------

# The parallel harness's closing block ("Testsuite summary for jq 1.7", then "# TOTAL: 7",
# "# PASS:  6", ...): read only inside it, so a "# PASS: 3" elsewhere counts nothing.
_AUTOMAKE_HEAD = re.compile(r"^Testsuite summary for \S")
_AUTOMAKE_COUNT = re.compile(r"^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):\s+(\d+)$")


def _automake(lines: list[str]) -> _Found | None:
    found = _Found("automake")
    counts: dict[str, int] | None = None
    for line in lines:
        if _AUTOMAKE_HEAD.match(line):
            counts = {}
        elif counts is not None and (match := _AUTOMAKE_COUNT.match(line)):
            counts[match.group(1)] = int(match.group(2))
            if len(counts) == 7:
                # An expected failure is what the suite asks for (passed); an unexpected pass is
                # a failure, as Automake makes `make check` fail on it.
                found.add("passed", counts["PASS"] + counts["XFAIL"])
                found.add("failed", counts["FAIL"] + counts["XPASS"])
                found.add("skipped", counts["SKIP"])
                found.add("errors", counts["ERROR"])
                found.summary = True
                found.evidence.append(f"automake: {counts}")
                counts = None
    return found if found.summary else None


# --- JUnit 4 (JUnitCore) ----------------------------------------------------------------------

_JUNIT4_OK = re.compile(r"^OK \((\d+) tests?\)$")
_JUNIT4_FAIL = re.compile(r"^Tests run: (\d+),\s+Failures: (\d+)$")
_JUNIT4_PROGRESS = re.compile(r"^[.EI]+$")
_JUNIT4_INIT = re.compile(r"^\d+\) initializationError\(")


def _junit4(lines: list[str]) -> _Found | None:
    if not any(line.startswith("JUnit version ") for line in lines):
        return None
    found = _Found("junit4")
    ignored = init_errors = 0
    for line in lines:
        if match := _JUNIT4_OK.match(line):
            found.add("passed", int(match.group(1)))
            found.add("failed", 0)
            found.summary = True
            found.evidence.append(line)
        elif match := _JUNIT4_FAIL.match(line):
            run, failures = _ints(match)
            found.add("passed", run - failures)
            found.add("failed", failures)
            found.summary = True
            found.evidence.append(line)
        elif _JUNIT4_PROGRESS.match(line):
            # JUnitCore prints ignored tests only as an "I" here; its totals leave them out.
            ignored += line.count("I")
        elif _JUNIT4_INIT.match(line):
            # A class JUnit could not run (no runnable methods, bad constructor) is counted as a
            # failed test by JUnitCore; it is an error of the suite, not a test.
            init_errors += 1
            found.evidence.append(line)
    if not found.summary:
        return None
    found.failed = max((found.failed or 0) - init_errors, 0)
    found.errors = init_errors
    found.skipped = ignored
    found.collection_error = init_errors > 0
    return found


# --- JUnit 5 (ConsoleLauncher) ----------------------------------------------------------------

_JUNIT5_LINE = re.compile(
    r"^\[\s*(\d+) (tests|containers) (found|skipped|started|aborted|successful|failed)\s*\]$"
)


def _junit5(lines: list[str]) -> _Found | None:
    found = _Found("junit5")
    for line in lines:
        match = _JUNIT5_LINE.match(line)
        if not match:
            continue
        number, kind, what = int(match.group(1)), match.group(2), match.group(3)
        if kind == "tests" and what in ("successful", "failed", "skipped", "aborted"):
            # Aborted tests are failed assumptions: JUnit's own word for a skip at run time.
            key = {"successful": "passed", "aborted": "skipped"}.get(what, what)
            found.add(key, number)
            found.summary = True
            if what in ("successful", "failed"):
                found.evidence.append(line)
        elif kind == "containers" and what == "failed":
            found.add("errors", number)
            if number:
                found.collection_error = True
                found.evidence.append(line)
    return found if found.summary else None


# --- Maven Surefire ---------------------------------------------------------------------------

_MAVEN_LEVEL = re.compile(r"^\[(?:INFO|WARNING|ERROR)\] ?")
_SUREFIRE = re.compile(r"^Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(.*)$")


def _maven(lines: list[str]) -> _Found | None:
    if not any(line.startswith("[INFO] ") for line in lines):
        return None
    found = _Found("maven")
    per_class: list[tuple[int, int, int, int]] = []
    surefire = build_success = False
    for raw in lines:
        line = _MAVEN_LEVEL.sub("", raw)
        if match := _SUREFIRE.match(line):
            run, failures, errors, skipped = (int(match.group(i)) for i in range(1, 5))
            if "Time elapsed" in match.group(5):
                per_class.append((run, failures, errors, skipped))
                continue
            # A module's "Results:" total; each module of a reactor build prints its own.
            found.add("passed", run - failures - errors - skipped)
            found.add("failed", failures)
            found.add("errors", errors)
            found.add("skipped", skipped)
            found.summary = True
            found.evidence.append(raw)
        elif line.startswith("COMPILATION ERROR") or line.endswith(": Compilation failure"):
            found.compile_error = True
            found.evidence.append(raw)
        elif "maven-surefire-plugin:" in line and line.startswith("--- "):
            surefire = True
        elif line == "No tests to run.":
            found.evidence.append(raw)
        elif line == "BUILD SUCCESS":
            build_success = True
    if not found.summary and per_class:
        # No totals (a forked JVM crashed, the log was cut): the per-class lines still count.
        for run, failures, errors, skipped in per_class:
            found.add("passed", run - failures - errors - skipped)
            found.add("failed", failures)
            found.add("errors", errors)
            found.add("skipped", skipped)
        found.summary = True
    if not found.summary and surefire and build_success:
        # Surefire ran and reported nothing: there was no test to run.
        found.passed = found.failed = found.errors = found.skipped = 0
        found.summary = True
        found.evidence.append("surefire ran no test (BUILD SUCCESS without a 'Tests run:' line)")
    return found if found.summary or found.compile_error else None


# --- node --test ------------------------------------------------------------------------------

# The TAP reporter starts its totals with "#", the spec reporter with an information sign.
_NODE_COUNT = re.compile(r"^(#|\u2139) (tests|pass|fail|cancelled|skipped|todo) (\d+)$")
_SCRIPT = r"\S*[/\\]\S+\.[cm]?[jt]sx?"
_NODE_FILE_TAP = re.compile(rf"^(ok|not ok) \d+ - ({_SCRIPT})$")
_NODE_FILE_SPEC = re.compile(rf"^(✔|✖) ({_SCRIPT}) \([\d.]+ms\)$")


def _node(lines: list[str]) -> _Found | None:
    found = _Found("node")
    counts: dict[str, int] = dict.fromkeys(
        ("tests", "pass", "fail", "cancelled", "skipped", "todo"), 0
    )
    loaded = failed_files = 0
    # Node prints its totals as a block, "tests" and "pass" always among them: a lone "# pass 1"
    # (a TAP comment from anything) is not node's summary.
    seen: dict[str, set[str]] = {}
    for line in lines:
        if line == "✖ failing tests:":
            break  # the spec reporter's recap repeats the failures
        if match := _NODE_COUNT.match(line):
            counts[match.group(2)] += int(match.group(3))
            seen.setdefault(match.group(1), set()).add(match.group(2))
            if match.group(2) in ("tests", "pass", "fail"):
                found.evidence.append(line)
        elif match := _NODE_FILE_TAP.match(line) or _NODE_FILE_SPEC.match(line):
            # Node reports a test file as a test of its own only when the file yielded no
            # test: "ok" means it loaded and declared none, "not ok" that it failed to load.
            if match.group(1) in ("ok", "✔"):
                loaded += 1
            else:
                failed_files += 1
                found.evidence.append(line)
    found.summary = any({"tests", "pass"} <= names for names in seen.values())
    if not found.summary:
        return None
    found.passed = max(counts["pass"] - loaded, 0)
    found.failed = max(counts["fail"] - failed_files, 0)
    found.errors = counts["cancelled"] + failed_files
    found.skipped = counts["skipped"] + counts["todo"]
    found.collection_error = failed_files > 0
    return found


# --- Jest -------------------------------------------------------------------------------------

_JEST_TESTS = re.compile(r"^Tests:\s+((?:\d+ \w+, )*)(\d+) total$")
_JEST_SUITES = re.compile(r"^Test Suites:\s+((?:\d+ \w+, )*)(\d+) total$")


def _jest(lines: list[str]) -> _Found | None:
    found = _Found("jest")
    not_run = 0
    recap = False
    for line in lines:
        if match := _JEST_TESTS.match(line):
            parts = dict.fromkeys(("passed", "failed", "skipped", "todo"), 0)
            for part in match.group(1).rstrip(", ").split(", ") if match.group(1) else []:
                number, word = part.split(" ", 1)
                if word in parts:
                    parts[word] += int(number)
            found.add("passed", parts["passed"])
            found.add("failed", parts["failed"])
            found.add("skipped", parts["skipped"] + parts["todo"])
            found.add("errors", 0)
            found.summary = True
            found.evidence.append(line)
        elif _JEST_SUITES.match(line) and " failed, " in line:
            found.evidence.append(line)
        elif line == "Summary of all failing tests":
            # Past 20 suites Jest prints every failure again: not new suites.
            recap = True
        elif line.strip() == "● Test suite failed to run" and not recap:
            # A suite that did not load (a syntax error, no test in it): its tests are in no
            # count of the Tests: line, so it is counted here, as an error.
            not_run += 1
            found.collection_error = True
            found.evidence.append(line.strip())
        elif line.startswith("No tests found, exiting with code"):
            for key in ("passed", "failed", "skipped", "errors"):
                found.add(key, 0)
            found.summary = True
            found.evidence.append(line)
    if not found.summary:
        return None
    found.add("errors", not_run)
    return found


# --- Mocha ------------------------------------------------------------------------------------

# Mocha's epilogue (every reporter but TAP and JSON) indents its totals by two spaces, also when
# colour is on; an unindented "1 passing (3ms)" is some other text quoting a summary.
_MOCHA = re.compile(r"^ {2}(\d+) (passing|failing|pending)(?: \(\d+(?:\.\d+)?m?s\))?$")
# Mocha's own message when its spec patterns match no file (it exits 1 and prints no totals).
_MOCHA_NO_FILES = re.compile(r"^Error: No test files found(?:: .*)?$")


def _mocha(lines: list[str]) -> _Found | None:
    found = _Found("mocha")
    for line in lines:
        if _MOCHA_NO_FILES.match(line):
            for key in ("passed", "failed", "skipped"):
                found.add(key, 0)
            found.summary = True
            found.evidence.append(line)
            continue
        match = _MOCHA.match(line)
        if not match or (match.group(2) == "passing" and "(" not in line):
            continue
        key = {"passing": "passed", "failing": "failed", "pending": "skipped"}[match.group(2)]
        if match.group(2) == "passing":
            found.summary = True
            found.add("failed", 0)
            found.add("skipped", 0)
        found.add(key, int(match.group(1)))
        found.evidence.append(line.strip())
    return found if found.summary else None


# --- PHPUnit ----------------------------------------------------------------------------------

_PHPUNIT_OK = re.compile(r"^OK \((\d+) tests?, (\d+) assertions?\)$")
_PHPUNIT_TOTALS = re.compile(r"^Tests: (\d+), Assertions: (\d+)((?:, [A-Za-z]+: \d+)*)\.$")
_PHP_FATAL = re.compile(r"^(?:PHP )?(?:Parse error|Fatal error):\s+(?:Uncaught )?")


def _phpunit(lines: list[str]) -> _Found | None:
    found = _Found("phpunit")
    marked = False
    no_tests_in_class = 0
    for line in lines:
        if match := _PHPUNIT_OK.match(line):
            found.add("passed", int(match.group(1)))
            for key in ("failed", "errors", "skipped"):
                found.add(key, 0)
            found.summary = True
            found.evidence.append(line)
        elif match := _PHPUNIT_TOTALS.match(line):
            extra = {
                key: int(value)
                for key, value in re.findall(r", ([A-Za-z]+): (\d+)", match.group(3))
            }
            skipped = extra.get("Skipped", 0) + extra.get("Incomplete", 0)
            failed = extra.get("Failures", 0)
            errors = extra.get("Errors", 0)
            # A warning stands in for a test that did not run cleanly (in PHPUnit 9, also for a
            # class with no test in it), so it is not a pass.
            warnings = extra.get("Warnings", 0)
            found.add("passed", max(int(match.group(1)) - failed - errors - skipped - warnings, 0))
            found.add("failed", failed)
            found.add("errors", errors)
            found.add("skipped", skipped)
            found.summary = True
            found.evidence.append(line)
        elif line == "No tests executed!":
            found.add("passed", 0)
            found.summary = True
            found.evidence.append(line)
        elif line.startswith("No tests found in class"):
            no_tests_in_class += 1
        elif _PHP_FATAL.match(line):
            found.compile_error = True
            found.evidence.append(line)
        elif line.startswith("PHPUnit ") or "PHPUnit\\" in line:
            marked = True
    return found if found.summary or (found.compile_error and marked) else None


# --- generic signs of a failed build, for logs with no runner summary --------------------------

_COMPILE_SIGNS = re.compile(
    r"^(?:"
    r"\S+\.(?:c|cc|cpp|cxx|h|hpp|java|go|rs|kt|scala|cs|swift)"
    r":\[?\d+[:,]\d*\]?:? (?:fatal )?error:?"
    r"|\S+\.java:\d+: error: "
    r"|error(?:\[E\d{4}\])?: "
    r"|g?make(?:\[\d+\])?: \*\*\* "
    r"|ninja: build stopped"
    r"|CMake Error"
    r"|(?:PHP )?(?:Parse|Fatal) error: "
    r"|SyntaxError: "
    r"|\[ERROR\] COMPILATION ERROR"
    r"|FAIL\s+\S+\s+\[build failed\]"
    r")"
)

_PARSERS: tuple[Callable[[list[str]], _Found | None], ...] = (
    _pytest,
    _unittest,
    _cargo,
    _go,
    _ctest,
    _automake,
    _junit4,
    _junit5,
    _maven,
    _node,
    _jest,
    _mocha,
    _phpunit,
)


def _total(values: Iterable[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _bound(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_CHARS:
        return text, False
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:], True


def parse_test_log(
    text: str, exit_code: int | None = None, *, truncated: bool = False
) -> TestLogResult:
    """Read a test log (the runner detected from its text) into counts and a verdict.

    ``truncated``: the caller already cut the text (``read_log`` does); it is reported as such.
    """
    text, cut = _bound(text)
    truncated = truncated or cut
    lines = _clean(text)
    found = [parsed for parser in _PARSERS if (parsed := parser(lines)) is not None]
    framework = "+".join(parsed.framework for parsed in found) or "unknown"
    counts = {
        key: _total(getattr(parsed, key) for parsed in found)
        for key in ("passed", "failed", "skipped", "errors")
    }
    evidence = [line for parsed in found for line in parsed.evidence]

    def result(verdict: Verdict, reason: str, extra: Iterable[str] = ()) -> TestLogResult:
        lines_ = list(dict.fromkeys([*evidence, *extra]))[-MAX_EVIDENCE:]
        return TestLogResult(
            framework=framework,
            verdict=verdict,
            reason=reason,
            evidence=[line[:300] for line in lines_],
            truncated=truncated,
            **counts,
        )

    summaries = [item for item in found if item.summary]
    failed, errors = counts["failed"] or 0, counts["errors"] or 0
    if failed or errors:
        parts = [f"{failed} failed"] * bool(failed) + [f"{errors} errors"] * bool(errors)
        return result("failure", ", ".join(parts))
    if any(item.compile_error for item in found):
        return result("failure", "compile error")
    if any(item.collection_error for item in found):
        return result("failure", "collection error: a test file or class failed to load")
    if summaries:
        ran = any(item.executed() > 0 or item.ran for item in summaries)
        if not ran:
            return result("failure", "no tests ran")
        if exit_code not in (None, 0):
            return result("inconclusive", f"the summary passes but the command exited {exit_code}")
        return result("success", "tests ran and none failed")
    signs = [line for line in lines if _COMPILE_SIGNS.match(line)]
    if signs:
        return result("failure", "build or compile error, no runner summary", signs[:3])
    if exit_code not in (None, 0):
        return result("failure", f"no runner summary and the command exited {exit_code}")
    return result("inconclusive", "no runner summary")


def read_log(source: str | Path) -> tuple[str, bool]:
    """A log's text from a path (``-``: standard input), bounded as ``parse_test_log`` bounds it.

    Only the head and the tail of a large file are read, so a multi-gigabyte log costs as much
    as a small one; a stream is read up to ``MAX_STREAM_BYTES``. Bytes that are not UTF-8 are
    replaced, as logs mix encodings.
    """
    if str(source) == "-":
        return _read_stream(sys.stdin.buffer)
    # A regular file only (``ValueError`` otherwise): a FIFO without a writer would block the
    # read for ever, a device never end; a stream comes on standard input.
    with open_regular(Path(source), 1 << 62) as handle:
        if os.fstat(handle.fileno()).st_size > MAX_CHARS:
            head = handle.read(HEAD_CHARS)
            handle.seek(-TAIL_CHARS, os.SEEK_END)
            tail = handle.read(TAIL_CHARS)
            return _decode(head) + "\n" + _decode(tail), True
        return _read_stream(handle)


def _read_stream(stream: io.BufferedIOBase | io.RawIOBase | object) -> tuple[str, bool]:
    read = stream.read  # type: ignore[attr-defined]
    head = b""
    tail = bytearray()
    truncated = False
    total = 0
    while total < MAX_STREAM_BYTES and (chunk := read(1 << 16)):
        total += len(chunk)
        if len(head) < HEAD_CHARS:
            take = HEAD_CHARS - len(head)
            head += chunk[:take]
            chunk = chunk[take:]
        tail += chunk
        if len(tail) > TAIL_CHARS:
            del tail[: len(tail) - TAIL_CHARS]
            truncated = True
    truncated = truncated or total >= MAX_STREAM_BYTES
    joiner = "\n" if truncated else ""
    return _decode(head) + joiner + _decode(bytes(tail)), truncated


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
