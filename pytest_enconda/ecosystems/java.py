"""Java (and the JVM): Maven with Surefire, Gradle, JUnit 4's JUnitCore and JUnit 5's console
launcher; the version from the build file's compiler settings."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .record import Checkout, Ecosystem, Found, Outcome, ProfileFields, first, ints, source_error
from .testfiles import TestFiles

# --- JUnit 4 (JUnitCore) ----------------------------------------------------------------------

_JUNIT4_OK = re.compile(r"^OK \((\d+) tests?\)$")
_JUNIT4_FAIL = re.compile(r"^Tests run: (\d+),\s+Failures: (\d+)$")
_JUNIT4_PROGRESS = re.compile(r"^[.EI]+$")
_JUNIT4_INIT = re.compile(r"^\d+\) initializationError\(")


def _junit4(lines: list[str]) -> Found | None:
    if not any(line.startswith("JUnit version ") for line in lines):
        return None
    found = Found("junit4")
    ignored = init_errors = 0
    for line in lines:
        if match := _JUNIT4_OK.match(line):
            found.add("passed", int(match.group(1)))
            found.add("failed", 0)
            found.summary = True
            found.evidence.append(line)
        elif match := _JUNIT4_FAIL.match(line):
            run, failures = ints(match)
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


def _junit5(lines: list[str]) -> Found | None:
    found = Found("junit5")
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


def _maven(lines: list[str]) -> Found | None:
    if not any(line.startswith("[INFO] ") for line in lines):
        return None
    found = Found("maven")
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


# --- per-test lines: JUnit 5's tree (├─ adds() ✔), named Class.adds() ------------------------
# Maven Surefire has only per-class lines in its log (per-test results are its XML reports) and
# JUnitCore prints no names of passing tests: neither gives names here.

_JUNIT5_TREE = re.compile(r"^(?P<indent>[│ ]*)[├└]─ (?P<name>.+?) (?P<mark>[✔✘↷■])(?:\s.*)?$")
# What is not named here failed.
_JUNIT5_OUTCOME: dict[str, Outcome] = {"✔": "passed", "↷": "skipped"}


def _junit5_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    """The tree's containers (classes) by depth; a leaf with ``(`` is a test method."""
    stack: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        match = _JUNIT5_TREE.match(line)
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
            yield index, f"{owner}.{name}" if owner else name, outcome
        else:
            stack.append((depth, name))


def _profile(checkout: Checkout) -> ProfileFields:
    """Maven where there is a ``pom.xml``, else Gradle; each through its wrapper if shipped."""
    if checkout.has("pom.xml"):
        text = checkout.text("pom.xml")
        maven = "./mvnw" if checkout.has("mvnw") else "mvn"
        return ProfileFields(
            package_manager="maven",
            config_file="pom.xml",
            language_version=first(
                r"<(?:maven\.compiler\.(?:source|release)|java\.version|release)>\s*([\d.]+)", text
            ),
            install_command=maven + " -B -DskipTests install",
            test_command=maven + " -B test",
            test_framework="junit" if "junit" in text.lower() else "maven surefire",
            build_tools=["maven"],
        )
    name = "build.gradle" if checkout.has("build.gradle") else "build.gradle.kts"
    text = checkout.text(name)
    gradle = "./gradlew" if checkout.has("gradlew") else "gradle"
    return ProfileFields(
        package_manager="gradle",
        config_file=name,
        language_version=first(r"(?:sourceCompatibility|languageVersion)\D*?(\d+(?:\.\d+)?)", text),
        install_command=gradle + " build -x test",
        test_command=gradle + " test",
        test_framework="junit" if "junit" in text.lower() else "gradle test",
        build_tools=["gradle"],
    )


JAVA = Ecosystem(
    name="java",
    title="Java",
    languages=("java",),
    manifests=("pom.xml", "build.gradle", "build.gradle.kts"),
    debian_packages=("default-jdk-headless",),
    programs=("java", "javac", "mvn", "gradle"),
    test_files=TestFiles(
        paths=("src/test/", "test/", "tests/"),
        configs=("pom.xml", "build.gradle", "build.gradle.kts"),
        sections=("pom.xml", "build.gradle", "build.gradle.kts"),
        sources=("*.java", "*.kt"),
    ),
    toolchain=("java", "javac"),
    test_tools=("mvn", "gradle"),
    build_commands=(
        r"mvn\s+(?:\S+\s+)*(?:compile|package|install)",
        r"(?:\./)?gradlew?\s+(?:\S+\s+)*(?:build|assemble)",
        r"javac\s",
    ),
    test_commands=(
        r"mvn\s+(?:\S+\s+)*test",
        r"(?:\./)?gradlew?\s+(?:\S+\s+)*test",
        r"java\s+.*(?:junit|JUnitCore|ConsoleLauncher)\S*",
    ),
    test_command="mvn -B test",
    verdict_lines=(
        _JUNIT4_OK.pattern,
        _JUNIT4_FAIL.pattern,
        _JUNIT5_LINE.pattern,
        r"^(?:\[(?:INFO|WARNING|ERROR)\] ?)?Tests run: \d+, Failures: \d+",
        r"^(?:\[ERROR\] ?)?COMPILATION ERROR",
    ),
    log_parsers=(_junit4, _junit5, _maven),
    name_parsers=(_junit5_names,),
    compile_errors=(
        source_error("java", "kt", "scala"),
        r"\S+\.java:\d+: error: ",
        r"\[ERROR\] COMPILATION ERROR",
    ),
    profile=_profile,
)
