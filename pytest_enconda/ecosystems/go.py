"""Go: ``go test``'s package lines (plain) and per-test lines (``-v``), the version from
``go.mod``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .record import (
    MAX_EVIDENCE,
    Checkout,
    Ecosystem,
    Found,
    Outcome,
    ProfileFields,
    first,
    source_error,
)
from .testfiles import TestFiles

# --- go test ----------------------------------------------------------------------------------

_GO_OK = re.compile(r"^ok\s+\S+\s+(?:[\d.]+s|\(cached\))(.*)$")
_GO_FAIL_PKG = re.compile(r"^FAIL\s+\S+\s+(?:[\d.]+s|\[(build|setup) failed\])")
_GO_NO_FILES = re.compile(r"^\?\s+\S+\s+\[no test files\]$")
_GO_TEST = re.compile(r"^--- (PASS|FAIL|SKIP): \S+ \(")
# What a test binary prints when it dies without a failing test's line: evidence only.
_GO_PANIC = re.compile(r"^panic: ")


def _go(lines: list[str]) -> Found | None:
    found = Found("go")
    verbose = any(line.startswith("=== RUN ") for line in lines)
    packages = ran_packages = 0
    tests = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    # A package's `--- FAIL` lines come before its `FAIL <package>` line (go test prints each
    # package's output whole). A failing package with none of them failed without a failing
    # test: the test binary panicked on `-timeout`, crashed, or its TestMain exited non-zero.
    failures_since_package = 0
    for line in lines:
        if match := _GO_OK.match(line):
            packages += 1
            if "[no tests to run]" not in match.group(1):
                ran_packages += 1
            found.evidence.append(line)
            failures_since_package = 0
        elif match := _GO_FAIL_PKG.match(line):
            packages += 1
            if match.group(1):
                found.compile_error = True
            else:
                ran_packages += 1
                if not failures_since_package:
                    found.add("errors", 1)
            found.evidence.append(line)
            failures_since_package = 0
        elif _GO_NO_FILES.match(line):
            packages += 1
            failures_since_package = 0
        elif match := _GO_TEST.match(line):
            # Only top-level tests: subtests print indented and fail with their parent.
            tests[match.group(1)] += 1
            failures_since_package += match.group(1) == "FAIL"
        elif _GO_PANIC.match(line):
            found.evidence.append(line)
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


# --- per-test lines: --- PASS: TestX (subtests as TestX/sub) ---------------------------------

_GO_TEST_LINE = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")
# What is not named here failed.
_GO_OUTCOME: dict[str, Outcome] = {"PASS": "passed", "SKIP": "skipped"}


def _go_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    for index, line in enumerate(lines):
        if match := _GO_TEST_LINE.match(line):
            yield index, match.group(2), _GO_OUTCOME.get(match.group(1), "failed")


def _profile(checkout: Checkout) -> ProfileFields:
    return ProfileFields(
        package_manager="go modules",
        config_file="go.mod",
        language_version=first(r"^go\s+(\d[\d.]*)", checkout.text("go.mod")),
        install_command="go mod download",
        test_command="go test ./...",
        test_framework="go test",
        build_tools=["go"],
    )


GO = Ecosystem(
    name="go",
    title="Go",
    languages=("go",),
    aliases={"golang": "go"},
    manifests=("go.mod",),
    debian_packages=("golang-go",),
    programs=("go",),
    test_files=TestFiles(paths=("*_test.go", "testdata/"), sources=("*_test.go",)),
    toolchain=("go",),
    build_commands=(r"go\s+(?:build|mod\s+download|get|vet)",),
    test_commands=(r"go\s+test",),
    # Verbose, uncached: every test's line is printed, every time.
    test_command="go test -v -count=1 ./...",
    log_parsers=(_go,),
    name_parsers=(_go_names,),
    compile_errors=(source_error("go"), r"FAIL\s+\S+\s+\[build failed\]"),
    verdict_lines=(_GO_FAIL_PKG.pattern, r"^\s*--- FAIL: ", _GO_PANIC.pattern),
    count_lines=(_GO_OK.pattern, _GO_NO_FILES.pattern, r"^\s*--- (?:PASS|SKIP): "),
    profile=_profile,
)
