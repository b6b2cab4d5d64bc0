"""One attempt of the ladder: set the reference up in a box, prove it uses the checkout, then run
the tests twice, each in a fresh box of the set-up snapshot, and keep as the PASS set the tests
that passed in both runs (pytest's JUnit XML report). What a failed attempt's logs show (programs
and shared libraries the image lacked) is recorded for the next one.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shlex
import time
from collections.abc import Collection
from pathlib import Path

from .. import __version__, textio
from ..backends.base import Box
from ..cases.operands import option_shaped
from ..cases.sidecar import NullSetup, RepoVerification, TestRun, timing_tag
from ..errors import EncondaError
from ..pipeline import heartbeat
from ..probing.junit import (
    CURRENT_TEST,
    JUNIT_PATH,
    JUnitError,
    first_error,
    read_junit,
    run_tests_command,
    why_no_tests,
)
from ..probing.shell import in_setup_env, setup_command
from .checkout import checkout_proof
from .context import Stopped, VerifyContext, VerifyOptions

__all__ = [
    "LDD_SCAN",
    "attempt",
    "graded_step",
    "null_setup",
    "oom_kills",
    "run_setup",
    "setup_budget",
    "step_digest",
    "unresolved_libraries",
]

SETUP_SCRIPT = "/tmp/enconda/setup.sh"


def setup_budget(options: VerifyOptions, label: str) -> float:
    """Seconds a strategy's setup may take: the agent's attempt is bounded apart when the
    recipe follows it."""
    if label.startswith("agent:") and options.recipe_fallback:
        return min(options.agent_setup_seconds, options.setup_seconds)
    return options.setup_seconds


def attempt(
    ctx: VerifyContext,
    record: RepoVerification,
    image: str,
    label: str,
    script: str,
    logs: Path,
    packages: list[str],
    distribution: str = "",
) -> bool:
    """Set up once, snapshot, run the tests twice in fresh containers; True when verified.
    ``packages`` and ``distribution`` (the declared name) are what the checkout proof looks for."""
    options = ctx.options
    tag = timing_tag(label)
    phase = time.monotonic()
    snapshot = None
    try:
        with ctx.box(record, image, "verify-setup") as box:
            budget = setup_budget(options, label)
            why = run_setup(ctx, record, box, label, script, logs / f"{tag}-setup.log", budget)
            record.timings[f"{tag}_setup_s"] = round(time.monotonic() - phase, 1)
            if why:
                record.attempts.append(f"{label}: setup {why}")
                # A build calling a program the image lacks fails the setup, not a test: its
                # package is retried as a test's would be.
                record.undeclared_programs = _missing_programs(logs / f"{tag}-setup.log")
                return False
            if packages or distribution:
                # A repository with nothing to look for never reaches an attempt: the ladder
                # records it unverified first (``no-packages`` proves nothing).
                proof = checkout_proof(box, packages, logs / f"{tag}-checkout.json", distribution)
                record.checkout_proof = proof
                if proof.refuses:
                    record.attempts.append(
                        f"{label}: not a reference of the checkout: {proof.detail}"
                    )
                    return False
            snapshot = box.snapshot(f"verify-{record.repository}")
        runs, record_runs, missing = _two_runs(ctx, record, snapshot, label, tag, logs)
        record.timings[f"{tag}_tests_s"] = round(time.monotonic() - phase, 1)
        verified = _verdict(
            ctx, record, snapshot, label, tag, logs, script, runs, record_runs, missing
        )
        if verified:
            null_setup(ctx, record, image, logs)
        return verified
    finally:
        if snapshot is not None:
            with contextlib.suppress(Exception):
                ctx.forget_image(snapshot)


def run_setup(
    ctx: VerifyContext,
    record: RepoVerification,
    box: Box,
    label: str,
    script: str,
    log: Path,
    budget: float,
) -> str:
    """``script`` run in ``box`` as every reference's setup runs: sourced in the setup shell
    (``setup_command``, which saves what it exports for the steps after it), within ``budget``
    seconds, with a heartbeat on the progress line. "" when it exited 0, else why it failed
    (``exited with 1: <the line saying what failed>``)."""
    box.copy_in(script.encode(), SETUP_SCRIPT)
    step = f"{record.repository}: {label}: setup"
    ctx.progress(step)
    with heartbeat(ctx.progress, step, budget):
        setup = box.exec(setup_command(SETUP_SCRIPT), timeout=budget, log_path=log)
    if setup.exit_code == 0:
        return ""
    why = f"timed out after {budget:g} s" if setup.timed_out else f"exited with {setup.exit_code}"
    return f"{why}: {_failure_line(setup.output)}"


def null_setup(ctx: VerifyContext, record: RepoVerification, image: str, logs: Path) -> None:
    """The graded test step in a box of the task image as it is (an empty setup script): the
    share of the PASS set it reaches. Where it reaches all of it, the grading step's own
    installs (test tools and requirements) or the image already do what the setup should, and
    an agent's Pass@1 there measures nothing of its setup (``trivial``)."""
    started = time.monotonic()
    ctx.progress(f"{record.repository}: the test step after an empty setup")
    outcomes, _run, _why, _killed = _test_run(ctx, record, image, logs / "null-setup-test.log")
    passed = sum(1 for test in record.pass_set if outcomes.get(test) == "passed")
    size = len(record.pass_set)
    record.null_setup = NullSetup(
        passed=passed,
        pass_set=size,
        share=round(passed / size, 4) if size else 0.0,
        trivial=bool(size) and passed == size,
        step_sha256=step_digest(record),
    )
    record.timings["null_setup_s"] = round(time.monotonic() - started, 1)


def graded_step(record: RepoVerification) -> str:
    """The test step as grading runs it for an instance of ``record`` (``probing.execution``):
    its test tools, the test requirements that are none of the project's runtime ones, its
    package cutoff and CI services, then the test command."""
    return run_tests_command(
        record.test_command,
        record.test_tools,
        record.test_requirements,
        packages_before=record.packages_before,
        services=record.services,
        runtime=record.runtime_requirements,
    )


def step_digest(record: RepoVerification) -> str:
    """The SHA-256 (hex) of the harness version and ``record``'s graded step: a null setup
    measured by another version or with another step is out of date."""
    return hashlib.sha256(f"{__version__}\n{graded_step(record)}".encode()).hexdigest()


def _two_runs(
    ctx: VerifyContext, record: RepoVerification, snapshot: str, label: str, tag: str, logs: Path
) -> tuple[list[dict[str, str]], list[TestRun], list[str]]:
    """The test command run twice, each in a fresh box of the snapshot: each run's outcome per
    test, its record and why it has no report or tests. A test the kernel killed the run for
    (the box's memory) is deselected and both runs start again, up to MAX_MEMORY_DESELECTS."""
    deselected = 0
    while True:
        runs: list[dict[str, str]] = []
        record_runs: list[TestRun] = []
        missing: list[str] = []
        outgrown = ""
        for index in (1, 2):
            ctx.progress(f"{record.repository}: {label}: test run {index} of 2")
            outcomes, run, why, killed_in = _test_run(
                ctx, record, snapshot, logs / f"{tag}-test{index}.log"
            )
            runs.append(outcomes)
            record_runs.append(run)
            missing.append(why)
            # The node id is read from the run's output: one beginning with '-' would be a
            # pytest option after --deselect, and is no test pytest could name anyway.
            if killed_in and not option_shaped(killed_in) and deselected < MAX_MEMORY_DESELECTS:
                outgrown = killed_in
                break
        if not outgrown:
            return runs, record_runs, missing
        # lifelines: one test outgrew the 4 GB box and the kernel's kill took the whole
        # run's report with it. The command goes on without that test, in grading too.
        deselected += 1
        record.test_command = f"{record.test_command} --deselect {shlex.quote(outgrown)}"
        record.attempts.append(
            f"{label}: {outgrown} outgrew the box's memory and took the run with it; "
            "the test command deselects it"
        )
        ctx.progress(f"{record.repository}: {label}: {outgrown} outgrew the box; deselected")


def _verdict(
    ctx: VerifyContext,
    record: RepoVerification,
    snapshot: str,
    label: str,
    tag: str,
    logs: Path,
    script: str,
    runs: list[dict[str, str]],
    record_runs: list[TestRun],
    missing: list[str],
) -> bool:
    """The PASS set (the tests that passed in both runs) and whether it verifies the attempt;
    what the logs say the image lacked is recorded either way, for the next attempt."""
    options = ctx.options
    passed = sorted(
        test
        for test, outcome in runs[0].items()
        if outcome == "passed" and runs[1].get(test) == "passed"
    )
    summary = ", ".join(
        f"run {i}: {r.passed} passed {r.failed} failed {r.errors} errors {r.skipped} skipped"
        + (
            f" (no JUnit report: {why})"
            if not r.report
            else ""
            if not why
            else f" (no tests: {why})"
            if not r.passed + r.failed + r.errors
            else f" (first error: {why})"
        )
        for i, (r, why) in enumerate(zip(record_runs, missing, strict=True), 1)
    )
    ran = sum(1 for outcome in runs[0].values() if outcome != "skipped")
    share = len(passed) / ran if ran else 0.0
    record.pass_share = round(share, 4)
    record.min_pass_share = options.min_pass_share
    record.undeclared_programs = _missing_programs(logs / f"{tag}-test1.log")
    named = [n for n in record.undeclared_programs if _SONAME.fullmatch(n)]
    if snapshot is not None and named:
        # The loader names one missing library per failure (OpenPulse's VTK: libXrender,
        # then libGLU, then libXcursor, one recipe round each); ldd names them all at once.
        unresolved = _unresolved_libraries(ctx, record, snapshot, logs / f"{tag}-ldd.log", named)
        record.undeclared_programs += [
            name for name in unresolved if name not in record.undeclared_programs
        ][:40]
    if not passed:
        record.attempts.append(f"{label}: no test passed in both runs ({summary})")
        return False
    if share < options.min_pass_share:
        record.attempts.append(
            f"{label}: only {len(passed)} of {ran} tests passed in both runs ({share:.0%}, "
            f"below {options.min_pass_share:.0%}; {summary})"
        )
        return False
    record.attempts.append(
        f"{label}: {len(passed)} of {ran} tests passed in both runs ({share:.0%}; {summary})"
    )
    record.pass_set = passed
    record.runs = record_runs
    record.reference_setup = script
    record.reference_source = label
    return True


MAX_MEMORY_DESELECTS = 3


def _test_run(
    ctx: VerifyContext, record: RepoVerification, image: str, log: Path
) -> tuple[dict[str, str], TestRun, str, str]:
    """One test run's outcomes and counts, with why it left no JUnit report ("" if it did), and
    the test it was in when the box's memory limit killed it ("" if none)."""
    with ctx.box(record, image, "verify-test") as box:
        command = in_setup_env(graded_step(record))
        result = box.exec(command, timeout=ctx.options.test_seconds, log_path=log)
        junit = log.with_suffix(".xml")
        outcomes: dict[str, str] = {}
        report = True
        try:
            box.copy_out(JUNIT_PATH, junit)
            outcomes = dict(read_junit(junit))
        except (FileNotFoundError, JUnitError):
            report = False
        killed = 0 if report or result.timed_out else oom_kills(box)
        killed_in = _current_test(box) if killed else ""
    counted = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for outcome in outcomes.values():
        counted[outcome] += 1
    run = TestRun(
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        duration=round(result.duration, 1),
        passed=counted["passed"],
        failed=counted["failed"],
        errors=counted["error"],
        skipped=counted["skipped"],
        report=report,
    )
    # An empty report (pytest exits 4 on a test path that does not exist) says no more than none.
    why = "" if outcomes else why_no_tests(result.output, result.exit_code, result.timed_out)
    if killed:
        # paz: a model test outgrew the box twice, and both runs said only "no JUnit report".
        why = (
            f"out of memory: the box's {ctx.settings.memory} limit killed {killed} "
            f"process(es) (ENCONDA_MEMORY raises it); {why}"
        )
    if outcomes and not counted["passed"] and counted["error"]:
        why = first_error(result.output)  # trafilatura: 13 modules errored, the log was lost
    if why and not counted["passed"]:
        opened = [path for path in record.absent_files if path in result.output]
        if opened:
            # cellrank's conftest opens an .h5ad its snapshot lacks: no setup could pass.
            why = f"the snapshot lacks {opened[0]}, which the tests open; {why}"
    return outcomes, run, why, killed_in


def _current_test(box: Box) -> str:
    """The id of the test the fixed-order plugin saw start last ("" if none or not one id)."""
    shown = box.exec(f"cat {CURRENT_TEST}", timeout=30)
    nodeid = (shown.output or "").strip()
    ok = shown.exit_code == 0 and "::" in nodeid and len(nodeid) < 1000 and "\n" not in nodeid
    return nodeid if ok else ""


_OOM_KILL = re.compile(r"^oom_kill (\d+)$", re.MULTILINE)


def oom_kills(box: Box) -> int:
    """How many processes the box's memory limit has killed: its memory cgroup's count
    (``memory.events`` under cgroup v2, ``memory.oom_control`` under v1); 0 where neither is
    readable. A test run's box is fresh, so the count is that run's."""
    events = "/sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control"
    result = box.exec(f"cat {events} 2>/dev/null", timeout=30)
    match = _OOM_KILL.search(result.output or "")
    return int(match.group(1)) if match else 0


# A test calling a program the image lacks: Python's FileNotFoundError and the shell's message.
_MISSING_PROGRAM = re.compile(
    r"No such file or directory: '([A-Za-z0-9_.+-]+)'"
    r"|(?:^|\s)([A-Za-z0-9_.+-]+): (?:command )?not found"
    # A build script's own words (tensorflow/model-analysis's setup.py: "protoc is not installed
    # nor found in ../src"); a name no Debian package installs as a program costs nothing.
    r"|(?:^|\s)([A-Za-z0-9_.+-]+) is not installed"
    # protoc's word for a plugin it cannot run (protoletariat: protoc-gen-mypy, mypy-protobuf's).
    r"|(?:^|\s)([A-Za-z0-9_.+-]+): program not found or is not executable"
)


# A shared library the loader did not find (datamol: RDKit's drawing needs libXrender.so.1).
_SONAME = re.compile(r"lib[\w.+-]*\.so(?:\.\d+)*")


# From a name's start only: from each "lib" of a long word the rest was rescanned.
_MISSING_LIBRARY = re.compile(rf"(?<![\w.+-])({_SONAME.pattern}): cannot open shared object file")


# For each Python extension (a ``*.so*`` under site-/dist-packages) that links against a library
# the box lacks: the extension and that library, one tab-separated pair a line. Bounded in files
# and lines.
LDD_SCAN = (
    "find / -xdev \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f "
    "-name '*.so*' -path '*-packages/*' -print 2>/dev/null | head -n 20000 "
    # /dev/null first: ldd names each file only when given two or more.
    "| xargs -r -d '\\n' ldd /dev/null 2>/dev/null "
    "| awk '/:$/ { file = $0 } /=> not found/ { print file \"\\t\" $1 }' | head -n 2000"
)


def unresolved_libraries(scan_output: str, named: Collection[str]) -> list[str]:
    """What the extensions that lack a library the loader ``named`` lack besides: the libraries
    those extensions need, not every optional plugin's (PyQt5's Qt plugins link to Qt3D and
    WebEngine, which no test loaded). Sorted, once each; a library bundled under a hashed name
    (``libXau-154567c4.so.6.0.0``, auditwheel's) is left out: no package has it."""
    lacks: dict[str, set[str]] = {}
    for line in scan_output.splitlines():
        extension, _, library = line.rpartition("\t")
        if extension and _SONAME.fullmatch(library) and not _BUNDLED.search(library):
            lacks.setdefault(extension, set()).add(library)
    wanted = set(named)
    found = {lib for libs in lacks.values() if libs & wanted for lib in libs}
    return sorted(found)


_BUNDLED = re.compile(r"-[0-9a-f]{8}\.so")


def _unresolved_libraries(
    ctx: VerifyContext, record: RepoVerification, snapshot: str, log: Path, named: list[str]
) -> list[str]:
    """``LDD_SCAN`` in a fresh box of the attempt's snapshot; none if it cannot run."""
    try:
        with ctx.box(record, snapshot, "verify-ldd") as box:
            result = box.exec(LDD_SCAN, timeout=300, workdir="/", log_path=log)
    except Stopped:
        raise
    except EncondaError:
        return []
    return unresolved_libraries(result.output, named)


def _missing_programs(log: Path) -> list[str]:
    """Names the tests' log says are missing, a program the image lacks most often (a name with a
    dot or a slash is taken for a data file and left out), then shared libraries the loader did
    not find: a hint, listed in the sidecar, and what the next recipe installs packages for."""
    text = textio.tails_text([log], 2_000_000)
    names = {next(filter(None, groups), "") for groups in _MISSING_PROGRAM.findall(text)}
    programs = sorted(name for name in names if name and "." not in name)
    return (programs + sorted(set(_MISSING_LIBRARY.findall(text))))[:20]


def _failure_line(output: str) -> str:
    """The line saying what failed: pip's closing "note: This error originates from a
    subprocess" named 5 of 10 failed setups in the dev split's sidecar, never the cause above it."""
    from ..memory.normalise import signature

    return signature(output, limit=300) or _last_line(output)


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"
