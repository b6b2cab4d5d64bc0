"""Test outcomes from a runner's own JUnit XML report (pytest's ``--junitxml``), never its text.

A test id is ``classname::name`` as the report writes them; a test reported twice (pytest writes
a teardown error as a second ``testcase``) keeps its worst outcome.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .. import textio

if TYPE_CHECKING:
    from ..repo.ci_services import CiService

Outcome = Literal["passed", "failed", "error", "skipped"]
_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
# A report far beyond any real suite's is refused rather than parsed into memory.
MAX_REPORT_BYTES = 256 * 1024 * 1024


class JUnitError(ValueError):
    pass


def parse_junit(data: bytes) -> dict[str, Outcome]:
    """``{test id: outcome}``; ``JUnitError`` if ``data`` is not a JUnit XML report."""
    if len(data) > MAX_REPORT_BYTES:
        raise JUnitError(f"report larger than {MAX_REPORT_BYTES} bytes")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise JUnitError(f"not XML: {exc}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"root element is <{root.tag}>, expected <testsuites> or <testsuite>")
    outcomes: dict[str, Outcome] = {}
    for case in root.iter("testcase"):
        classname = case.get("classname") or ""
        name = case.get("name") or ""
        test_id = f"{classname}::{name}" if classname else name
        outcome: Outcome = "passed"
        for child in case:
            if child.tag == "error":
                outcome = "error"
            elif child.tag == "failure" and outcome != "error":
                outcome = "failed"
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        previous = outcomes.get(test_id)
        if previous is None or _RANK[outcome] > _RANK[previous]:
            outcomes[test_id] = outcome
    return outcomes


def read_junit(path: Path, root: Path | None = None) -> dict[str, Outcome]:
    """The outcomes in a report file; with ``root``, the file must lie under it with no link
    on the way (a run directory's record cannot point the verdict at another file)."""
    path = Path(path)
    try:
        data = textio.read_input(path, MAX_REPORT_BYTES, root)
    except OSError as exc:
        raise JUnitError(f"{path}: cannot read: {exc}") from None
    except ValueError as exc:
        raise JUnitError(f"{path}: {exc}") from None
    try:
        return parse_junit(data)
    except JUnitError as exc:
        raise JUnitError(f"{path}: {exc}") from None


def counts(outcomes: dict[str, Outcome]) -> dict[str, int]:
    result = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for outcome in outcomes.values():
        result[outcome] += 1
    return result


PYTEST_CACHE = "/tmp/enconda/pytest-cache"
JUNIT_PATH = "/tmp/enconda/junit.xml"
# A test that waits on the network (the sandbox reaches only package indexes) must fail alone,
# not hold the whole run until its budget kills pytest before it writes the report.
PER_TEST_SECONDS = 120
TIMEOUT_TOOL = "pytest-timeout"
# Printed by the test step right before the test command: why_no_tests reads what follows it.
TESTS_START = "enconda: the test command starts"
# Where the project is checked out in every box.
CHECKOUT = "/data/project"
KEEP_CHECKOUT = "/tmp/enconda/keep-checkout.txt"
# probes/enconda_fixed_order.py, written into the box by the test step and loaded with ``-p``:
# a project's test-order plugin draws the same order in every run.
FIXED_ORDER = "enconda_fixed_order"
PLUGIN_DIR = "/tmp/enconda/plugins"
# The fixed-order plugin writes here the id of each test as it starts: a run the kernel kills
# (the box's memory limit) leaves no report, and this names the test it died in.
CURRENT_TEST = "/tmp/enconda/current-test"
# The Hugging Face hub's clients retry an unreachable hub with backoff: 23 s for each file a
# test asks for (measured in a box: 5 retries, 1 s to 8 s apart), and litgpt's 150 tokenizer
# tests, each rerun 5 times by its flaky marker, ran past every test timeout. Told that they are
# offline, the same clients fail at once from their empty cache (0.002 s): the tests that need the
# hub fail either way, the others run. Only where the hub answers nothing (an HTTP error is an
# answer), and never over a setting the setup made.
HUB_OFFLINE_ENV = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
_HUB_REACHABLE = (
    "import os, urllib.error, urllib.request as r\n"
    "url = os.environ.get('HF_ENDPOINT') or 'https://huggingface.co'\n"
    "try:\n"
    "    r.urlopen(r.Request(url, method='HEAD'), timeout=10)\n"
    "except urllib.error.HTTPError:\n"
    "    pass\n"
)


def hub_offline_lines() -> list[str]:
    """Shell lines declaring the model hub offline to its clients when the box cannot reach it."""
    import shlex

    preset = " || ".join(f'[ -n "${{{name}:-}}" ]' for name in HUB_OFFLINE_ENV)
    exports = " ".join(f"{name}=1" for name in HUB_OFFLINE_ENV)
    return [
        f"if ! {{ {preset}; }} && ! python -c {shlex.quote(_HUB_REACHABLE)} >/dev/null 2>&1; then",
        f"  export {exports}",
        "  echo 'enconda: the Hugging Face hub is unreachable from the box: its clients are "
        "told they are offline' >&2",
        "fi",
    ]


# Each distribution installed from the checkout, as ``name==version``, given to every install
# of the test step beside what it installs, so that pip's resolver weighs the project and its
# dependencies: a test requirement that wanted a newer qibo installed the release over the
# checkout (after the checkout proof was taken, so the tests ran on the release), and
# dash-bio's pinned ``click==7.1.2`` broke the Flask its setup installed. Such a requirement
# now fails alone. A version that is no PEP 440 one (an old setuptools installed "unknown") is
# not named: pip refuses such a requirement, and every install of the step with it.
_LIST_CHECKOUT_DISTS = (
    "import importlib.metadata as m, re; "
    '[print(d.metadata.get("Name") + "==" + d.version) for d in m.distributions() '
    'if d.metadata.get("Name") and re.fullmatch(r"v?[0-9][0-9a-zA-Z.+!_-]*", d.version or "") '
    'and re.search(r\'"url": *"file://'
    + CHECKOUT
    + '(/[^"]*)?"\', d.read_text("direct_url.json") or "")]'
)


def run_tests_command(
    test_command: str,
    tools: list[str],
    requirements: list[str] | tuple[str, ...] = (),
    per_test_seconds: int = PER_TEST_SECONDS,
    *,
    packages_before: str = "",
    services: Sequence[CiService] = (),
    runtime: Collection[str] | None = (),
) -> str:
    """The test step: install the test tools and the test requirements, start the services CI
    runs beside the tests (``repo.ci_services``), then the test command writing its JUnit report.

    ``packages_before`` (a reference made with the dependencies of its revision's day) holds
    these installs to packages uploaded before it, through pip's ``PIP_UPLOADED_PRIOR_TO``; a
    pip older than 26 ignores the variable and installs today's.

    The step never does the setup's job: a requirement that installs the checkout (``.``,
    ``.[test]``) or is named in ``runtime`` (the project's runtime requirements, canonical names;
    ``repo.runtime_requirements``) is left out and said.

    A failed tools install does not stop the tests: the environment may already hold them. Test
    requirements go in one pip call, and one by one when that fails, so one unavailable or
    conflicting declaration costs only itself. Neither may replace what was installed from the
    checkout or break its dependencies: each install names the distributions installed from the
    checkout at their versions (``KEEP_CHECKOUT``), so pip resolves against them.
    pytest-timeout is always a tool; its limit is given as an ini override, which a pytest
    without the plugin ignores rather than refusing to start.
    """
    import shlex

    from ..cases.operands import option_shaped
    from ..repo.runtime_requirements import graded_requirements

    # Tools and requirements come from a case's sidecar: one beginning with '-' would be a pip
    # option (--index-url, -r FILE), so it is left out and said.
    refused = [spec for spec in [*tools, *requirements] if option_shaped(spec)]
    tools = [tool for tool in tools if not option_shaped(tool)]
    requirements = [spec for spec in requirements if not option_shaped(spec)]
    requirements, runtime_left = graded_requirements(requirements, runtime)
    names = {re.split(r"[<>=!~\[; ]", tool, maxsplit=1)[0].lower() for tool in tools}
    if tools and TIMEOUT_TOOL not in names:
        tools = [*tools, TIMEOUT_TOOL]
    lines = ["mkdir -p /tmp/enconda", f"rm -f {JUNIT_PATH}"]
    # No display in a box: Qt (pytest-qt, napari) aborts the whole session on xcb unless told to
    # draw offscreen, as CI's headless runners are; a setup that chose a platform keeps it.
    lines.append('export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"')
    lines += hub_offline_lines()
    lines += [
        f"echo {shlex.quote(f'enconda: {spec!r} is not a requirement (an option); left out')} >&2"
        for spec in refused
    ]
    if runtime_left:
        said = f"enconda: left to the setup (the project's own runtime needs): {runtime_left}"
        lines.append(f"echo {shlex.quote(said)} >&2")
    if packages_before:
        lines.append(f"export PIP_UPLOADED_PRIOR_TO={shlex.quote(packages_before)}")
    if tools or requirements:
        lines.append(
            f"python -c {shlex.quote(_LIST_CHECKOUT_DISTS)} > {KEEP_CHECKOUT} 2>/dev/null "
            f"|| : > {KEEP_CHECKOUT}"
        )
        lines.append(f'_enconda_own="$(cat {KEEP_CHECKOUT})"')
    pip = "python -m pip install -q"
    own = " $_enconda_own"  # unquoted: one word per pin, none when nothing is pinned
    if tools:
        words = " ".join(shlex.quote(tool) for tool in tools)
        # Pins that cannot be met together are retried as bare names before giving up.
        bare = " ".join(
            sorted({shlex.quote(re.split(r"[<>=!~\[; ]", tool, maxsplit=1)[0]) for tool in tools})
        )
        lines.append(
            f"{pip} {words}{own} || {pip} {bare}{own} "
            "|| echo 'enconda: the test tools did not install' >&2"
        )
    if requirements:
        words = " ".join(shlex.quote(spec) for spec in requirements)
        lines.append(
            f"{pip} {words}{own} || for spec in {words}; do "
            f'{pip} "$spec"{own} || echo "enconda: test requirement $spec did not install" >&2; '
            "done"
        )
    # One test module that cannot be imported (rdmo: 2 of 19,482 items need Django 5's
    # django.contrib.messages.test) must not stop the session before any test runs: its error
    # is reported and counts against the reference, the other modules' tests still run.
    # pytest's cache lives outside the checkout and starts empty each run: disabling the
    # cacheprovider instead removed its options, and a repository whose addopts name one
    # (spec-bioimage-io: --failed-first) ended in a usage error before any test ran.
    if services:
        from ..repo.ci_services import services_prelude

        lines += services_prelude(services)
    lines.append(f"rm -rf {PYTEST_CACHE}")
    lines += _fixed_order_lines()
    lines.append(f"echo {shlex.quote(TESTS_START)}")
    lines.append(
        f"{test_command} -p {FIXED_ORDER} -o cache_dir={PYTEST_CACHE} "
        f"-o timeout={per_test_seconds} --continue-on-collection-errors --junitxml={JUNIT_PATH}"
    )
    return "\n".join(lines)


def _fixed_order_lines() -> list[str]:
    """Shell lines writing the fixed-order plugin into the box and putting it on the path."""
    from .scripts import probe_script

    source = probe_script(f"{FIXED_ORDER}.py").read_text()
    end = "_ENCONDA_PLUGIN_END"
    if end in source:  # a heredoc ends at the first such line
        raise ValueError(f"{FIXED_ORDER}.py must not contain {end}")
    return [
        f"mkdir -p {PLUGIN_DIR}",
        f"cat > {PLUGIN_DIR}/{FIXED_ORDER}.py <<'{end}'\n{source.rstrip()}\n{end}",
        f'export PYTHONPATH="{PLUGIN_DIR}${{PYTHONPATH:+:$PYTHONPATH}}"',
        f"rm -f {CURRENT_TEST}",
        f"export ENCONDA_CURRENT_TEST={CURRENT_TEST}",
    ]


# What pytest prints when it stops before writing its report, most telling first: a usage error
# (an option of a plugin that is not installed, a test path that does not exist), a conftest
# that cannot be imported, an internal error, pytest itself missing.
_NO_REPORT_SIGNS = (
    # argparse: "python -m pytest: error: unrecognized arguments: --nomigrations"
    re.compile(r"^(?:[^:]*\bpytest|\S+\.py): error: (.+)$"),
    # "ERROR: file or directory not found: tests" (pip's ERROR lines come before TESTS_START)
    re.compile(r"^ERROR: (?!usage:)(.+)$"),
    re.compile(r"^(ImportError while loading conftest .+)$"),
    re.compile(r"^INTERNALERROR> (\w*(?:Error|Exception)\b.*)$"),
    re.compile(r"(No module named pytest\b.*)$"),
    _UNCAUGHT := re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception): .+)$"),
)
# The exception under "ImportError while loading conftest": the module that is missing.
# Qualified names too: btrack's "E   pydantic.errors.PydanticUserError: ..." named no cause.
_EXCEPTION_LINE = re.compile(r"^E\s+((?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception)\b.+)$")


def first_error(output: str) -> str:
    """The first exception line pytest printed (``E   ModuleNotFoundError: ...``): what a run
    whose every test errored at collection says about why, kept when its log is long gone."""
    for line in output.splitlines():
        match = _EXCEPTION_LINE.match(line.strip())
        if match:
            return match.group(1).strip()[:240]
    return ""


def why_no_tests(output: str, exit_code: int | None, timed_out: bool) -> str:
    """Why a test command reported no test (no JUnit report, or one with no test case), from its
    exit and its output's own words: the attempt line shows "unrecognized arguments:
    --nomigrations" instead of only "no JUnit report" (pytest exits 4 on a usage error before
    its reporter starts; on a test path that does not exist it writes an empty report)."""
    if timed_out:
        return "timed out"
    # Only what the test command printed: the installs before it print ERROR lines of their own
    # (cellrank's pip conflict note hid its conftest's error).
    output = output.rpartition(TESTS_START)[2]
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    said = ""
    for sign in _NO_REPORT_SIGNS:
        hits = [m.group(1).strip() for line in lines if (m := sign.search(line.strip()))]
        if hits:
            # The last of an internal error's lines, or of a traceback (what it ended in: a
            # conftest's ImportError before pytest-django's note about the project it found).
            last = sign is _UNCAUGHT or sign.pattern.startswith("^INTERNALERROR")
            said = hits[-1] if last else hits[0]
            if said.startswith("ImportError while loading conftest"):
                said = f"{said} {first_error(output)}".strip()
            break
    if not said and lines:
        said = lines[-1].strip()
    code = "no exit code" if exit_code is None else f"exit {exit_code}"
    return f"{code}: {said[:240]}" if said else code
