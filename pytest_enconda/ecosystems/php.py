"""PHP with Composer and PHPUnit; the version from ``require.php``, the extensions it requires
(``ext-*``) as Debian's ``php-*`` packages."""

from __future__ import annotations

import re

from .record import Checkout, Ecosystem, Found, ProfileFields, table
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
    test_command="vendor/bin/phpunit",
    verdict_lines=(_PHPUNIT_OK.pattern, _PHPUNIT_TOTALS.pattern, _PHP_FATAL.pattern),
    log_parsers=(_phpunit,),
    compile_errors=(r"(?:PHP )?(?:Parse|Fatal) error: ",),
    profile=_profile,
)
