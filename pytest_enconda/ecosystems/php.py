"""PHP with Composer and PHPUnit; the version from ``require.php``, the extensions it requires
(``ext-*``) as Debian's ``php-*`` packages; each test's name from PHPUnit 9's ``--debug`` log."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .record import Checkout, Ecosystem, Found, Outcome, ProfileFields, table
from .testfiles import TestFiles

# --- PHPUnit ----------------------------------------------------------------------------------

_PHPUNIT_OK = re.compile(r"^OK \((\d+) tests?, (\d+) assertions?\)$")
_PHPUNIT_TOTALS = re.compile(r"^Tests: (\d+), Assertions: (\d+)((?:, [A-Za-z]+: \d+)*)\.$")
_PHP_FATAL = re.compile(r"^(?:PHP )?(?:Parse error|Fatal error):\s+(?:Uncaught )?")


def _phpunit(lines: list[str]) -> Found | None:
    found = Found("phpunit")
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


# --- per-test names: PHPUnit 9's --debug lines and its closing lists -------------------------

_DEBUG_ENDED = re.compile(r"^Test '(?P<name>.+)' ended$")
# "There was 1 failure:", "There were 2 skipped tests:": the lists after the run, each entry
# "1) Class::method" (with its data set, if any) on a line of its own.
_LIST_HEAD = re.compile(
    r"^There (?:was|were) \d+ (?P<kind>failure|error|warning|skipped test|incomplete test|"
    r"risky test)s?:$"
)
_LIST_ENTRY = re.compile(r"^\d+\) (?P<name>\S+::\S.*)$")
_LIST_OUTCOME: dict[str, Outcome] = {
    "failure": "failed",
    "error": "failed",
    # PHPUnit's summary does not count a test with a warning as a success (see _phpunit).
    "warning": "failed",
    "skipped test": "skipped",
    "incomplete test": "skipped",
    "risky test": "passed",
}


def _unlisted_outcome(lines: Sequence[str], listed: dict[str, Outcome]) -> Outcome:
    """The outcome of a test no list names: passed, unless the totals count more skipped or
    incomplete tests than the lists name (without ``--verbose`` PHPUnit 9 lists neither), when
    none of the unlisted tests can be told to have passed."""
    not_run = 0
    for line in lines:
        if match := _PHPUNIT_TOTALS.match(line):
            extra = dict(re.findall(r", ([A-Za-z]+): (\d+)", match.group(3)))
            not_run += int(extra.get("Skipped", 0)) + int(extra.get("Incomplete", 0))
    named = sum(1 for outcome in listed.values() if outcome == "skipped")
    return "skipped" if not_run > named else "passed"


def _phpunit_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    """``--debug`` names every test as it ends (``Test 'NS\\ATest::testX' ended``) but says
    nothing of its outcome there: that is in the lists after the run, which name the tests that
    did not pass (skipped and incomplete ones only with ``--verbose``). A listed test
    with no ``ended`` line (a data provider's error) is still named, with its listed outcome."""
    listed: dict[str, Outcome] = {}
    listed_at: dict[str, int] = {}
    kind: str | None = None
    for index, line in enumerate(lines):
        if match := _LIST_HEAD.match(line):
            kind = match.group("kind")
        elif kind is not None and (match := _LIST_ENTRY.match(line)):
            name = match.group("name")
            outcome = _LIST_OUTCOME[kind]
            if name not in listed or outcome == "failed":
                listed[name] = outcome
            listed_at.setdefault(name, index)
        elif line.startswith(("FAILURES!", "ERRORS!", "OK (", "OK, but")):
            kind = None
    unlisted = (
        _unlisted_outcome(lines, listed)
        if listed_at or any(_DEBUG_ENDED.match(line) for line in lines)
        else "passed"
    )
    ended: set[str] = set()
    for index, line in enumerate(lines):
        if match := _DEBUG_ENDED.match(line):
            name = match.group("name")
            ended.add(name)
            yield index, name, listed.get(name, unlisted)
    for name, index in listed_at.items():
        if name not in ended:
            yield index, name, listed[name]


def _profile(checkout: Checkout) -> ProfileFields:
    data = checkout.json("composer.json")
    require = table(data, "require")
    dev = table(data, "require-dev")
    fields = ProfileFields(
        package_manager="composer",
        config_file="composer.json",
        language_version=str(require.get("php")) if require.get("php") else None,
        install_command="composer install",
        build_tools=["composer"],
        system_packages=[f"php-{name[4:]}" for name in require if name.startswith("ext-")],
    )
    if "phpunit/phpunit" in dev or checkout.has("phpunit.xml.dist"):
        fields.test_framework, fields.test_command = "phpunit", "vendor/bin/phpunit"
    return fields


PHP = Ecosystem(
    name="php",
    title="PHP",
    languages=("php",),
    manifests=("composer.json",),
    debian_packages=("php-cli",),
    programs=("php", "composer", "phpunit"),
    test_files=TestFiles(
        paths=("tests/", "test/"),
        configs=("phpunit.xml", "phpunit.xml.dist"),
        sources=("*.php",),
    ),
    toolchain=("php",),
    test_tools=("composer",),
    build_commands=(r"composer\s+install",),
    test_commands=(r"phpunit",),
    test_command="vendor/bin/phpunit --debug --verbose",
    verdict_lines=(_PHPUNIT_OK.pattern, _PHPUNIT_TOTALS.pattern, _PHP_FATAL.pattern),
    log_parsers=(_phpunit,),
    name_parsers=(_phpunit_names,),
    compile_errors=(r"(?:PHP )?(?:Parse|Fatal) error: ",),
    profile=_profile,
)
