"""JavaScript and TypeScript: node's test runner (TAP and spec), Jest and Mocha; npm, yarn or
pnpm by the lock file; the version from ``engines.node``.

A ``package.json`` is common in repositories of other languages (tooling, documentation sites),
so this ecosystem is chosen only where no other one's files are there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .record import Checkout, Ecosystem, Found, Outcome, ProfileFields, table
from .testfiles import TestFiles

# --- node --test ------------------------------------------------------------------------------

# The TAP reporter starts its totals with "#", the spec reporter with an information sign.
_NODE_COUNT = re.compile(r"^(#|\u2139) (tests|pass|fail|cancelled|skipped|todo) (\d+)$")
_SCRIPT = r"\S*[/\\]\S+\.[cm]?[jt]sx?"
_NODE_FILE_TAP = re.compile(rf"^(ok|not ok) \d+ - ({_SCRIPT})$")
_NODE_FILE_SPEC = re.compile(rf"^(✔|✖) ({_SCRIPT}) \([\d.]+ms\)$")


def _node(lines: list[str]) -> Found | None:
    found = Found("node")
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


def _jest(lines: list[str]) -> Found | None:
    found = Found("jest")
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


def _mocha(lines: list[str]) -> Found | None:
    found = Found("mocha")
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


# --- per-test lines: node's TAP (ok 1 - name) and spec (✔ name (1ms)) reporters ----------------

_TAP = re.compile(
    r"^(?P<indent>\s*)(?P<not>not )?ok \d+ - (?P<name>.+?)(?P<skip>\s+#\s*(?:SKIP|TODO)\b.*)?$"
)
_NODE_SPEC = re.compile(
    r"^(?P<indent>\s*)(?P<mark>[✔✖﹣]) (?P<name>.+?) \([\d.]+m?s\)(?P<skip> # SKIP.*)?$"
)


def _node_names(lines: Sequence[str]) -> Iterator[tuple[int, str, Outcome]]:
    """TAP lines where the log declares TAP, else the spec reporter's marks."""
    tap = any(line.startswith("TAP version") for line in lines)
    for index, line in enumerate(lines):
        if tap and (match := _TAP.match(line)):
            if match.group("skip"):
                yield index, match.group("name"), "skipped"
            else:
                yield index, match.group("name"), "failed" if match.group("not") else "passed"
        elif not tap and (match := _NODE_SPEC.match(line)):
            mark = match.group("mark")
            if match.group("skip") or mark == "﹣":
                yield index, match.group("name"), "skipped"
            else:
                yield index, match.group("name"), "passed" if mark == "✔" else "failed"


def _profile(checkout: Checkout) -> ProfileFields:
    data = checkout.json("package.json")
    engines = table(data, "engines")
    fields = ProfileFields(
        config_file="package.json",
        language_version=str(engines["node"]) if engines.get("node") else None,
    )
    for lock, manager in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn")):
        if checkout.has(lock):
            fields.package_manager = manager
            break
    else:
        fields.package_manager = "npm"
    manager = fields.package_manager
    lock = checkout.has("package-lock.json")
    fields.install_command = "npm ci" if manager == "npm" and lock else f"{manager} install"
    scripts = table(data, "scripts")
    deps = {**(data.get("dependencies") or {}), **(data.get("devDependencies") or {})}
    if "test" in scripts:
        fields.test_command = f"{manager} test"
    for name in ("jest", "mocha", "vitest", "ava", "tap"):
        if name in deps:
            fields.test_framework = name
            break
    else:
        if "node --test" in str(scripts.get("test", "")):
            fields.test_framework = "node:test"
    for name in ("typescript", "webpack", "vite", "rollup", "esbuild", "babel"):
        if name in deps or f"@{name}/core" in deps:
            fields.build_tools.append(name)
    return fields


JAVASCRIPT = Ecosystem(
    name="javascript",
    title="JavaScript/TypeScript",
    languages=("javascript", "typescript"),
    aliases={"js": "javascript", "ts": "typescript"},
    manifests=("package.json",),
    fallback=True,
    debian_packages=("nodejs",),
    programs=("node", "npm", "npx", "yarn", "pnpm"),
    test_files=TestFiles(
        paths=("test/", "tests/", "__tests__/", "*.test.[jt]s", "*.spec.[jt]s", "*.test.mjs"),
        configs=("package.json", "jest.config.*", ".mocharc*", "vitest.config.*"),
        sections=("package.json",),
        sources=("*.js", "*.mjs", "*.cjs", "*.ts", "*.mts"),
    ),
    toolchain=("node",),
    test_tools=("npm", "npx"),
    build_commands=(
        r"(?:npm|pnpm)\s+(?:install|ci|i)(?:\s|$)",
        r"yarn(?:\s+install)?$",
        r"yarn\s+install\s",
        r"(?:npm|yarn|pnpm)\s+(?:run\s+)?build",
    ),
    test_commands=(
        r"(?:npm|yarn|pnpm)\s+(?:run\s+)?test",
        r"node\s+(?:\S+\s+)*--test",
        r"jest",
        r"mocha",
    ),
    test_command="npm test",
    verdict_lines=(
        _NODE_COUNT.pattern,
        _JEST_TESTS.pattern,
        _JEST_SUITES.pattern,
        _MOCHA.pattern,
        _MOCHA_NO_FILES.pattern,
    ),
    log_parsers=(_node, _jest, _mocha),
    name_parsers=(_node_names,),
    profile=_profile,
)
