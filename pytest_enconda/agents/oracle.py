"""The oracle: returns the golden diagnosis and setup. It validates harness and cases.

For an imported EnConda-Bench instance the golden setup is the verified reference setup of its
repository, from the verification sidecar (``pytest-enconda verify``); without one the execution
item is skipped before the oracle's empty script could be run.
"""

from __future__ import annotations

import time
from typing import Any

from .base import AgentOutcome, AgentTask, PredictedError


def _graded_by_environment(suite: str) -> bool:
    from ..kinds import TASK_KINDS

    return TASK_KINDS.get(suite).graded_by_environment


class OracleAgent:
    name = "oracle"

    def __init__(self, **_: Any) -> None:
        pass

    def run(self, task: AgentTask) -> AgentOutcome:
        start = time.monotonic()
        case = task.case
        if _graded_by_environment(case.spec.suite) and case.golden_setup_text is None:
            # A research or AEC case is graded only on the environment the setup builds:
            # without a golden setup the oracle has nothing to build, and that gap is the
            # case's, not an agent's failure (an imported ResearchEnvBench repository ships
            # none).
            from ..errors import HarnessError

            raise HarnessError(
                f"{case.id}: the oracle needs the case's golden_setup, and it has none "
                "(run a real agent on it, or add golden_setup to the case)"
            )
        diagnosis = [
            PredictedError(
                error_type=error.error_type,
                error_description=error.error_description,
                fix_suggestion=error.golden_answer,
            )
            for error in case.golden.errors
        ]
        status = "completed" if case.golden_setup_text is not None else "no_prediction"
        reference = case.spec.aec.reference if case.spec.aec is not None else None
        return AgentOutcome(
            case_id=case.id,
            agent=self.name,
            diagnosis=diagnosis,
            setup_script=case.golden_setup_text or "",
            # AEC: the reference test command is the golden one (none: the grader's default).
            test_command=reference.test_command if reference is not None else "",
            wall_time=time.monotonic() - start,
            status=status,
            message="" if status == "completed" else "case has no golden_setup",
        )
