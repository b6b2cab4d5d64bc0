"""The oracle: returns the golden diagnosis and setup. It validates harness and cases.

For an imported EnConda-Bench instance the golden setup is the verified reference setup of its
repository, from the verification sidecar (``pytest-enconda verify``); without one the execution
item is skipped before the oracle's empty script could be run.
"""

from __future__ import annotations

import time
from typing import Any

from .base import AgentOutcome, AgentTask, PredictedError


class OracleAgent:
    name = "oracle"

    def __init__(self, **_: Any) -> None:
        pass

    def run(self, task: AgentTask) -> AgentOutcome:
        start = time.monotonic()
        case = task.case
        if case.spec.suite == "research" and case.golden_setup_text is None:
            # A research case is graded only on the environment the setup builds: without a
            # golden setup the oracle has nothing to build, and that gap is the case's, not an
            # agent's failure (an imported ResearchEnvBench repository ships none).
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
        return AgentOutcome(
            case_id=case.id,
            agent=self.name,
            diagnosis=diagnosis,
            setup_script=case.golden_setup_text or "",
            wall_time=time.monotonic() - start,
            status=status,
            message="" if status == "completed" else "case has no golden_setup",
        )
