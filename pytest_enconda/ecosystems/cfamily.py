"""C and C++: CMake with CTest, meson, Autotools (Automake's ``make check``) and plain make.

The profile's version is CMake's ``CMAKE_CXX_STANDARD``; CMake's ``find_package`` names become
the Debian development packages they most likely mean.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .record import Checkout, Ecosystem, Found, Outcome, ProfileFields, first, ints, source_error
from .testfiles import TestFiles

# --- ctest ------------------------------------------------------------------------------------

_CTEST_SUMMARY = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)$")
# Only a skipped or disabled test is "not run" for the counts: CTest counts it among the passed
# ("out of N"). A "(Not Run)" test (its program missing, a fixture failed) is among the failed,
# listed under "The following tests FAILED:", and stays a failure.
_CTEST_NOT_RUN = re.compile(r"^\s*\d+ - \S+ \((Skipped|Disabled)\)$")


def _ctest(lines: list[str]) -> Found | None:
    found = Found("ctest")
    not_run = 0
    for line in lines:
        if match := _CTEST_SUMMARY.match(line):
            failed, total = ints(match)
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


def _automake(lines: list[str]) -> Found | None:
    found = Found("automake")
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


# --- per-test lines: ctest (1/3 Test #1: name ....   Passed), make check (PASS: tests/x) ------

_CTEST_LINE = re.compile(
    r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(\*+)?\s*([A-Za-z][A-Za-z ]*?)\s+[\d.]+ sec"
)
_AUTOMAKE_LINE = re.compile(r"^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): (\S+)$")
# An expected failure passes; an unexpected pass fails, as Automake has it.
_AUTOMAKE_OUTCOME: dict[str, Outcome] = {
    "PASS": "passed",
    "XFAIL": "passed",
    "SKIP": "skipped",
    "FAIL": "failed",
    "XPASS": "failed",
    "ERROR": "failed",
}


def _ctest_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    for index, line in enumerate(lines):
        if match := _CTEST_LINE.match(line):
            status = match.group(3).strip()
            if status == "Passed":
                yield index, match.group(1), "passed"
            elif status == "Skipped" or "Disabled" in status:
                yield index, match.group(1), "skipped"
            # "Not Run" too: CTest counts it failed (its program is missing, a fixture failed).
            else:
                yield index, match.group(1), "failed"


def _automake_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    for index, line in enumerate(lines):
        if match := _AUTOMAKE_LINE.match(line):
            yield index, match.group(2), _AUTOMAKE_OUTCOME[match.group(1)]


# CMake ``find_package`` names whose Debian development package is not ``lib<name>-dev``.
_CMAKE_DEBIAN = {
    "boost": "libboost-all-dev",
    "openssl": "libssl-dev",
    "zlib": "zlib1g-dev",
    "threads": "",
    "gtest": "libgtest-dev",
    "catch2": "catch2",
    "fmt": "libfmt-dev",
    "curl": "libcurl4-openssl-dev",
    "pkgconfig": "pkg-config",
    "python3": "python3-dev",
    "python": "python3-dev",
}


def _debian_dev(package: str) -> str:
    name = package.lower()
    return _CMAKE_DEBIAN.get(name, f"lib{name}-dev")


def _profile(checkout: Checkout) -> ProfileFields:
    """From the first build system it has: CMake, meson, Autotools, then a Makefile."""
    fields = ProfileFields()
    if checkout.has("CMakeLists.txt"):
        text = checkout.text("CMakeLists.txt")
        fields.config_file, fields.package_manager = "CMakeLists.txt", "cmake"
        standard = first(r"CMAKE_CXX_STANDARD\s+(\d+)", text)
        fields.language_version = f"C++{standard}" if standard else None
        fields.install_command = "cmake -S . -B build && cmake --build build -j"
        fields.build_tools.append("cmake")
        if re.search(r"enable_testing|add_test|ctest", text, re.I):
            fields.test_framework, fields.test_command = "ctest", "ctest --test-dir build"
        packages = re.findall(r"find_package\s*\(\s*(\w+)", text)
        fields.system_packages = [_debian_dev(p) for p in packages if _debian_dev(p)]
    elif checkout.has("meson.build"):
        fields.config_file, fields.package_manager = "meson.build", "meson"
        fields.install_command = "meson setup build && ninja -C build"
        fields.test_framework, fields.test_command = "meson test", "meson test -C build"
        fields.build_tools += ["meson", "ninja"]
    elif checkout.has("configure.ac"):
        fields.config_file, fields.package_manager = "configure.ac", "autotools"
        fields.install_command = "autoreconf -fi && ./configure && make"
        fields.build_tools += ["autoconf", "make"]
    else:
        fields.config_file, fields.package_manager = "Makefile", "make"
        fields.install_command = "make"
        if re.search(r"^(test|check):", checkout.text("Makefile"), re.MULTILINE):
            fields.test_framework, fields.test_command = "make", "make test"
    return fields


C_FAMILY = Ecosystem(
    name="c-family",
    title="C/C++",
    languages=("c", "c++"),
    aliases={"cpp": "c++", "c/c++": "c++"},
    manifests=("CMakeLists.txt", "meson.build", "configure.ac"),
    # A Makefile alone makes a C project, though it is no dependency manifest.
    markers=("Makefile",),
    debian_packages=("build-essential", "cmake"),
    programs=("cmake", "ctest", "make", "meson", "ninja", "gcc", "g++", "cc"),
    test_files=TestFiles(
        paths=("tests/", "test/"),
        configs=("CMakeLists.txt", "CTestTestfile.cmake", "CTestCustom.cmake", "meson.build"),
        sections=("CMakeLists.txt", "meson.build"),
        sources=("*.c", "*.cc", "*.cpp", "*.cxx", "*.h", "*.hpp"),
        generated=("CTestTestfile.cmake",),
    ),
    toolchain=("cmake", "ctest", "make", "cc", "c++"),
    test_tools=("meson", "ninja"),
    build_commands=(
        r"cmake(?:\s|$)",
        r"meson\s+(?:setup|compile)",
        r"ninja(?:\s|$)",
        r"\./configure",
        r"autoreconf",
    ),
    test_commands=(r"ctest", r"make\s+(?:test|check)"),
    test_command="cmake -S . -B build && cmake --build build && ctest --test-dir build",
    log_parsers=(_ctest, _automake),
    name_parsers=(_ctest_names, _automake_names),
    compile_errors=(
        source_error("c", "cc", "cpp", "cxx", "h", "hpp"),
        r"g?make(?:\[\d+\])?: \*\*\* ",
        r"ninja: build stopped",
        r"CMake Error",
    ),
    verdict_lines=(
        _CTEST_SUMMARY.pattern,
        r"^No tests were found!!!$",
        r"^\s*\d+/\d+ Test\s+#\d+: \S+ \.*\*",  # a failed or not-run test
        _AUTOMAKE_HEAD.pattern,
        _AUTOMAKE_COUNT.pattern,
        r"^(?:FAIL|XPASS|ERROR): \S",
    ),
    count_lines=(
        _CTEST_NOT_RUN.pattern,
        r"^\s*\d+/\d+ Test\s+#\d+: \S+ \.*\s+Passed",
        r"^(?:PASS|SKIP|XFAIL): \S",
    ),
    profile=_profile,
)
