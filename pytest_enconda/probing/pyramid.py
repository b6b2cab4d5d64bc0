"""Runtime pyramid stages that run the case's entry points: C1 (CPU), C3 (one GPU), C4 (DDP).

Each returns a ``StageResult``; the session keeps one per case and stage, so probes and the C5
audit read the same run. A stage that does not apply (the case says so, or this host lacks the
hardware) is *skipped* with its reason and leaves the denominator; an applicable stage that
could not run counts as a failure.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from ..cases.models import Case

StageOutcome = Literal["passed", "failed", "skipped", "error"]
_ERROR_LINE = re.compile(r"(Error|Exception|error:|Traceback|Killed)")


class StageResult(BaseModel):
    stage: str
    outcome: StageOutcome
    message: str = ""
    numbers: dict[str, Any] = Field(default_factory=dict)
    runs: list[dict[str, Any]] = Field(default_factory=list, description="ProbeRun dumps")


# torchrun's own report of a failed child ends the output; the child's error is the cause.
_LAUNCHER_LINE = re.compile(r"ChildFailedError|torch\.distributed\.elastic|torch/distributed/")
_RANK_PREFIX = re.compile(r"^\[(?:default)?rank\d+\]:\s*")


def failure_line(output: str) -> str:
    """The line that says why: the last one naming an error that is not the launcher's (a
    rank's ``[rank0]:`` prefix dropped), else the last error line, else the last line."""
    lines = [_RANK_PREFIX.sub("", line.strip()) for line in output.splitlines() if line.strip()]
    errors = [
        line for line in lines if _ERROR_LINE.search(line) and not line.startswith("Traceback")
    ]
    for line in reversed(errors):
        if not _LAUNCHER_LINE.search(line):
            return line[:300]
    if errors:
        return errors[-1][:300]
    return lines[-1][:300] if lines else "(no output)"


def _skip(stage: str, reason: str) -> StageResult:
    return StageResult(stage=stage, outcome="skipped", message=reason)


def _declared_skip(case: Case, stage: str, supported: bool, what: str) -> str | None:
    research = case.spec.research
    assert research is not None
    if not supported:
        reason = research.skip_reasons.get(stage)  # type: ignore[call-overload]
        return f"not applicable to this case ({what}): {reason or 'declared unsupported'}"
    return None
