"""Pass@1: replay the agent's setup script in a fresh box, then the case's test command.

The record is written to the case's artifact folder; grading reads it without Docker.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
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


class ExecutionRecord(BaseModel):
    case_id: str
    image: str
    steps: list[StepRecord] = Field(default_factory=list)
    duration: float = 0.0
    junit: str | None = Field(
        default=None,
        description="the test runner's JUnit XML report, relative to the case folder (cases "
        "with a verified PASS set); None when it wrote none",
    )


def _tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def run_execution(
    backend: Backend | Sandbox,
    image: str,
    case: Case,
    setup_script: str,
    case_dir: CaseDir,
    *,
    scale: float = 1.0,
    tests: Sequence[tuple[str, str]] | None = None,
) -> ExecutionRecord:
    """Run setup then tests; the test step is skipped (not run) when setup fails.

    ``scale`` (``--budget-scale``) multiplies the case's setup and test budgets: a slow or
    loaded machine must not turn a correct script into a failure.

    With a verified reference the test step installs the test tools first and writes pytest's
    JUnit XML report, copied next to the logs for grading against the PASS set.

    ``tests``: the test steps as (step name, command), each run after the setup in the same box
    and the setup's environment (AEC: the agent's test command, then the reference one); by
    default the case's ``test_command`` as step ``test``.
    """
    from ..backends import as_backend
    from ..backends.base import started as box_of
    from .junit import JUNIT_PATH, run_tests_command
    from .shell import in_setup_env, setup_command

    started = time.monotonic()
    budgets = case.spec.budgets
    record = ExecutionRecord(case_id=case.id, image=image)
    reference = case.reference if case.reference is not None and case.reference.verified else None
    test_command = str(case.spec.test_command)
    if tests is not None:
        reference = None
    elif reference is not None:
        test_command = run_tests_command(
            test_command, list(reference.test_tools), list(reference.test_requirements)
        )
    with box_of(as_backend(backend), image, case_id=case.id, role="execution") as container:
        container.copy_in(setup_script.encode(), SCRIPT_PATH)
        # The record names the command as the user knows it; the shell plumbing that carries the
        # setup's environment into the test step (probing/shell.py) is the harness's, not theirs.
        plan = [
            (
                "setup",
                f"source {SCRIPT_PATH}",
                setup_command(SCRIPT_PATH),
                budgets.setup_seconds * scale,
            ),
        ]
        for step_name, command in tests if tests is not None else [("test", test_command)]:
            plan.append((step_name, command, in_setup_env(command), budgets.test_seconds * scale))
        for name, shown, command, budget in plan:
            log = case_dir.execution_log(name)
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
        if reference is not None and len(record.steps) == 2:
            report = case_dir.junit
            try:
                container.copy_out(JUNIT_PATH, report)
                record.junit = case_dir.relative(report)
            except FileNotFoundError:
                record.junit = None
    record.duration = time.monotonic() - started
    return record
