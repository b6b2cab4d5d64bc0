"""Pass@1: replay the agent's setup script in a fresh container, then the case's test command.

The record is written to the case's artifact folder; grading reads it without Docker.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from ..artifacts import CaseDir
    from ..cases.models import Case
    from ..sandbox.containers import Sandbox

SCRIPT_PATH = "/tmp/enconda/setup.sh"
WORKDIR = "/data/project"


class StepRecord(BaseModel):
    name: Literal["setup", "test"]
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


def _tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def run_execution(
    sandbox: Sandbox, image: str, case: Case, setup_script: str, case_dir: CaseDir
) -> ExecutionRecord:
    """Run setup then tests; the test step is skipped (not run) when setup fails."""
    started = time.monotonic()
    budgets = case.spec.budgets
    record = ExecutionRecord(case_id=case.id, image=image)
    with sandbox.container(image, case_id=case.id, role="execution") as container:
        container.copy_in(setup_script.encode(), SCRIPT_PATH)
        plan = [
            ("setup", f"bash -eo pipefail {SCRIPT_PATH}", budgets.setup_seconds),
            ("test", case.spec.test_command, budgets.test_seconds),
        ]
        for name, command, budget in plan:
            log = case_dir.execution_log(name)
            result = container.exec(command, timeout=budget, workdir=WORKDIR, log_path=log)
            record.steps.append(
                StepRecord(
                    name=name,  # type: ignore[arg-type]
                    command=command,
                    exit_code=result.exit_code,
                    timed_out=result.timed_out,
                    duration=result.duration,
                    budget=budget,
                    output_tail=_tail(result.output),
                    log=str(log.relative_to(case_dir.root)),
                )
            )
            if result.exit_code != 0:
                break
    record.duration = time.monotonic() - started
    return record
