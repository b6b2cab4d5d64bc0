"""Pass@1: replay the agent's setup script in a fresh box, then the case's test command.

The record is written to the case's artifact folder; grading reads it without Docker.

**Budget calibration.** A step's budget is the case's (``[budgets]``) times ``--budget-scale``,
and never less. A pip install that takes 100 s on an idle machine can take 400 s on a loaded
one, so a step that runs out of that budget is not yet a timeout: the case's golden setup (the
reference) is measured on this machine, in this run (``golden_timing``: once per case, kept in
the case's ``execution/golden/`` folder and reused by ``--resume``), and the replay is run again
with ``max(case budget x scale, CALIBRATION_FACTOR x the golden's time)`` for each step. Only a
step that runs out of that calibrated budget is a timeout. A script that finishes within the
case's budget is not affected (a larger budget would not change what it did), so only timed-out
replays pay for the measurement. A script identical to the golden one (the oracle's) is measured
and replayed at once: the measurement is its replay.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from pathlib import Path

    from ..aec.guard import GradedGuard
    from ..backends.base import Backend
    from ..cases.models import Case
    from ..records import CaseDir
    from ..sandbox.containers import Sandbox

SCRIPT_PATH = "/tmp/enconda/setup.sh"
WORKDIR = "/data/project"


class StepRecord(BaseModel):
    name: Literal["setup", "test", "reference_test"]
    command: str
    exit_code: int | None
    timed_out: bool = False
    duration: float = 0.0
    budget: float
    output_tail: str = ""
    log: str = Field(description="log file, relative to the case folder")


# The calibrated budget of a step is this many times the golden setup's time on this machine
# (a reference that took 100 s gives a replay 300 s), never less than the case's budget.
CALIBRATION_FACTOR = 3.0


class GoldenTiming(BaseModel):
    """The golden setup (and the test command after it) run on this machine in this run: what
    the execution budgets are calibrated against. Each step ran with a ceiling of
    ``CALIBRATION_FACTOR`` x its case budget x ``--budget-scale``."""

    case_id: str
    image: str
    script_sha256: str = Field(description="sha256 of the golden setup script measured")
    steps: list[StepRecord] = Field(default_factory=list)
    measured_at: float = Field(description="when it was measured (seconds since the epoch)")

    def seconds(self, step: str) -> float | None:
        return next((s.duration for s in self.steps if s.name == step), None)


class Calibration(BaseModel):
    """How a replay's budgets were set: the case's, or stretched by the golden's time."""

    factor: float = CALIBRATION_FACTOR
    case_budgets: dict[str, float] = Field(
        description="each step's budget before calibration: the case's times --budget-scale"
    )
    golden_seconds: dict[str, float] = Field(
        default_factory=dict, description="each step's time in the golden run on this machine"
    )
    budgets: dict[str, float] = Field(description="each step's budget the replay ran with")
    golden_stopped: dict[str, float] = Field(
        default_factory=dict,
        description="steps where the golden run itself was stopped at its limit, with that limit",
    )
    golden: str | None = Field(
        default=None, description="the golden run's record, relative to the case folder"
    )
    note: str = ""


class ExecutionRecord(BaseModel):
    case_id: str
    image: str
    steps: list[StepRecord] = Field(default_factory=list)
    duration: float = 0.0
    calibration: Calibration | None = Field(
        default=None,
        description="present when a step ran out of the case's budget and the golden setup was "
        "measured to calibrate it",
    )
    first_attempt: list[StepRecord] | None = Field(
        default=None,
        description="the replay's steps under the case's budgets, when one of them timed out and "
        "the replay was run again with calibrated budgets",
    )
    junit: str | None = Field(
        default=None,
        description="the test runner's JUnit XML report, relative to the case folder (cases "
        "with a verified PASS set); None when it wrote none",
    )


def _tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def script_digest(script: str) -> str:
    return hashlib.sha256(script.encode("utf-8")).hexdigest()


# (the calibration ceilings) -> the golden's timing, measured once per case, or None when the
# case has no golden setup to measure.
GoldenTimer = Callable[[dict[str, float]], GoldenTiming | None]


def case_budgets(case: Case, scale: float) -> dict[str, float]:
    budgets = case.spec.budgets
    return {"setup": budgets.setup_seconds * scale, "test": budgets.test_seconds * scale}


def calibrated_budgets(
    base: dict[str, float], golden: GoldenTiming, factor: float = CALIBRATION_FACTOR
) -> dict[str, float]:
    """Each step's ``max(base, factor x golden's time)``; a step the golden did not reach keeps
    its base budget."""
    out = {}
    for name, budget in base.items():
        seconds = golden.seconds(name)
        out[name] = budget if seconds is None else max(budget, round(factor * seconds, 3))
    return out


def setup_budget_problem(case: Case, scale: float = 1.0) -> str | None:
    """Why the case's setup budget cannot be met, when the golden setup is known to take
    longer: the reference setup's duration when it was verified. A correct script would time
    out, so the case is mislabelled, and its execution item a harness error, not the agent's
    failure."""
    reference = case.reference
    if reference is None or not reference.verified or reference.setup_seconds is None:
        return None
    budget = case.spec.budgets.setup_seconds * scale
    if budget >= reference.setup_seconds:
        return None
    return (
        f"{case.id}: budgets.setup_seconds ({budget:g} s"
        + (f", scaled by --budget-scale {scale:g}" if scale != 1 else "")
        + f") is shorter than the reference setup took when verified "
        f"({reference.setup_seconds:g} s, {reference.sidecar or 'the verification sidecar'}): "
        "a correct setup would time out; raise the budget or --budget-scale"
    )


def run_execution(
    backend: Backend | Sandbox,
    image: str,
    case: Case,
    setup_script: str,
    case_dir: CaseDir,
    *,
    scale: float = 1.0,
    golden: GoldenTimer | None = None,
    tests: Sequence[tuple[str, str]] | None = None,
    restore: Mapping[str, bytes] | None = None,
    guard: GradedGuard | None = None,
) -> ExecutionRecord:
    """Run setup then tests; the test step is skipped (not run) when setup fails.

    ``scale`` (``--budget-scale``) multiplies the case's setup and test budgets: a slow or
    loaded machine must not turn a correct script into a failure. ``golden`` measures the case's
    golden setup on this machine: a step that runs out of its budget is run again with budgets
    calibrated on it (the module's docstring).

    With a verified reference the test step installs the test tools first and writes pytest's
    JUnit XML report, copied next to the logs for grading against the PASS set.

    ``tests``: the test steps as (step name, command), each run after the setup in the same box
    and the setup's environment (AEC: the agent's test command, then the reference one); by
    default the case's ``test_command`` as step ``test``.

    ``restore``: files (a path in the checkout: its content) written over the checkout after the
    setup, before the tests: the repository's own README where the agent was given one with
    injected errors. The tests then meet the tree the reference was verified on, and a test
    reading the README (nevergrad checks its links) does not fail on the diagnosis task's
    errors; the agent's setup has ended, so it never reads the original.

    ``guard``: AEC's graded step, checks before and after the setup (``aec.guard``).
    """
    from ..errors import HarnessError

    problem = setup_budget_problem(case, scale)
    if problem is not None:
        raise HarnessError(problem)
    base = case_budgets(case, scale)
    ceilings = {name: CALIBRATION_FACTOR * budget for name, budget in base.items()}
    if (
        golden is not None
        and tests is None
        and case.golden_setup_text == setup_script
        and setup_script.strip()
    ):
        # The oracle's script: the golden's measurement is its replay, with the budgets its
        # own time calibrates (it can only run out of one at the measurement's ceiling).
        timing = golden(ceilings)
        if timing is not None and timing.script_sha256 == script_digest(setup_script):
            budgets = calibrated_budgets(base, timing)
            # A step the measurement's ceiling stopped had that ceiling as its budget.
            for step in timing.steps:
                if step.timed_out:
                    budgets[step.name] = step.budget
            steps = [
                step.model_copy(
                    update={
                        "budget": budgets[step.name],
                        "timed_out": step.timed_out or step.duration > budgets[step.name],
                    }
                )
                for step in timing.steps
            ]
            stopped = any(step.timed_out for step in timing.steps)
            return ExecutionRecord(
                case_id=case.id,
                image=image,
                steps=steps,
                duration=sum(step.duration for step in steps),
                junit=_golden_junit(case_dir, timing),
                calibration=_calibration(
                    base,
                    timing,
                    budgets,
                    case_dir,
                    note=(
                        f"the golden setup itself ran out of {CALIBRATION_FACTOR:g} x the "
                        "case's budget here"
                        if stopped
                        else "the script is the golden setup: its measurement is its replay"
                    ),
                ),
            )
    record = replay(backend, image, case, setup_script, case_dir, base, tests=tests,
                    restore=restore, guard=guard)  # fmt: skip
    if golden is None or not any(step.timed_out for step in record.steps):
        return record
    timing = golden(ceilings)
    if timing is None:
        return record
    budgets = calibrated_budgets(base, timing)
    calibration = _calibration(base, timing, budgets, case_dir)
    if all(budgets[s.name] <= base[s.name] for s in record.steps if s.timed_out):
        calibration.note = "the golden setup was fast enough: the case's budgets stand"
        record.calibration = calibration
        return record
    first = record.steps
    # The first attempt's logs are kept beside the new ones.
    for step in first:
        log = case_dir.execution_log(step.name)
        if log.is_file():
            moved = case_dir.execution_log(f"{step.name}.first-attempt")
            log.replace(moved)
            step.log = case_dir.relative(moved)
    record = replay(
        backend, image, case, setup_script, case_dir, budgets, tests=tests, restore=restore,
        guard=guard,
    )  # fmt: skip
    record.first_attempt = first
    record.calibration = calibration
    return record


def _calibration(
    base: dict[str, float],
    timing: GoldenTiming,
    budgets: dict[str, float],
    case_dir: CaseDir,
    note: str = "",
) -> Calibration:
    """The calibration from the golden run's ``timing``: its times, and the limits it was
    stopped at (a time that is a limit, not what the golden setup needs here)."""
    return Calibration(
        case_budgets=base,
        golden_seconds={s.name: s.duration for s in timing.steps},
        golden_stopped={s.name: s.budget for s in timing.steps if s.timed_out},
        budgets=budgets,
        golden=case_dir.relative(case_dir.golden_record),
        note=note,
    )


def _golden_junit(case_dir: CaseDir, timing: GoldenTiming) -> str | None:
    report = case_dir.golden_dir / "junit.xml"
    return case_dir.relative(report) if report.is_file() else None


def measure_golden(
    backend: Backend | Sandbox,
    image: str,
    case: Case,
    case_dir: CaseDir,
    ceilings: dict[str, float],
    restore: Mapping[str, bytes] | None = None,
) -> GoldenTiming | None:
    """The case's golden setup and test command run with ``ceilings``; None without one.
    ``restore``: as ``run_execution``'s."""
    script = case.golden_setup_text
    if not script or not script.strip():
        return None
    started = time.time()
    record = replay(
        backend,
        image,
        case,
        script,
        case_dir,
        ceilings,
        folder=case_dir.golden_dir,
        restore=restore,
    )
    return GoldenTiming(
        case_id=case.id,
        image=image,
        script_sha256=script_digest(script),
        steps=record.steps,
        measured_at=started,
    )


def replay(
    backend: Backend | Sandbox,
    image: str,
    case: Case,
    setup_script: str,
    case_dir: CaseDir,
    budgets: dict[str, float],
    *,
    folder: Path | None = None,
    tests: Sequence[tuple[str, str]] | None = None,
    restore: Mapping[str, bytes] | None = None,
    guard: GradedGuard | None = None,
) -> ExecutionRecord:
    """One replay in a fresh box with the given step budgets; logs (and the JUnit report) go
    to ``folder`` (the case's ``execution/`` folder unless given). ``tests`` and ``restore``:
    see ``run_execution``."""
    from ..backends import as_backend
    from ..backends.base import download_cache_key
    from ..backends.base import started as box_of
    from ..package_cutoff import cutoff_env
    from .junit import JUNIT_PATH, run_tests_command
    from .shell import in_setup_env, setup_command

    started = time.monotonic()
    record = ExecutionRecord(case_id=case.id, image=image)
    reference = case.reference if case.reference is not None and case.reference.verified else None
    test_command = str(case.spec.test_command)
    if tests is not None:
        reference = None
    elif reference is not None:
        test_command = run_tests_command(
            test_command,
            list(reference.test_tools),
            list(reference.test_requirements),
            packages_before=reference.packages_before,
            services=reference.services,
            # An older record may list a runtime requirement among its test requirements.
            runtime=reference.runtime_requirements,
        )
    with box_of(
        as_backend(backend),
        image,
        case_id=case.id,
        role="execution",
        # The reference's package cutoff is the instance's: the replay's installs see it too.
        env=cutoff_env(case),
        download_cache=download_cache_key(case),
    ) as container:
        container.copy_in(setup_script.encode(), SCRIPT_PATH)
        if guard is not None:
            guard.before_setup(container)
        # The record names the command as the user knows it; the shell plumbing that carries the
        # setup's environment into the test step (probing/shell.py) is the harness's, not theirs.
        plan = [
            ("setup", f"source {SCRIPT_PATH}", setup_command(SCRIPT_PATH), budgets["setup"]),
        ]
        for step_name, command in tests if tests is not None else [("test", test_command)]:
            plan.append((step_name, command, in_setup_env(command), budgets["test"]))
        for name, shown, command, budget in plan:
            log = (folder / f"{name}.log") if folder else case_dir.execution_log(name)
            log.parent.mkdir(parents=True, exist_ok=True)
            if log.is_file():
                log.unlink()  # a rerun's log is its own, not appended to an earlier one
            if guard is not None and name != "setup":
                command = guard.graded_command(container, shown)
            result = container.exec(command, timeout=budget, workdir=WORKDIR, log_path=log)
            record.steps.append(
                StepRecord(
                    name=name,  # type: ignore[arg-type]
                    command=shown,
                    exit_code=result.exit_code,
                    timed_out=result.timed_out,
                    duration=result.duration,
                    budget=budget,
                    output_tail=_tail(result.output),
                    log=case_dir.relative(log),
                )
            )
            if result.exit_code != 0 and name == "setup":
                break
            if name == "setup":
                for path, data in (restore or {}).items():
                    container.copy_in(data, f"{WORKDIR}/{path}")
                if guard is not None:
                    guard.after_setup(container, WORKDIR)
        if reference is not None and len(record.steps) == 2:
            report = (folder / "junit.xml") if folder else case_dir.junit
            try:
                container.copy_out(JUNIT_PATH, report)
                record.junit = case_dir.relative(report)
            except FileNotFoundError:
                record.junit = None
    record.duration = time.monotonic() - started
    return record
