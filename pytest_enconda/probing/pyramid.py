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
    from .environment import Environment

StageOutcome = Literal["passed", "failed", "skipped", "error"]
_ERROR_LINE = re.compile(r"(Error|Exception|error:|Traceback|Killed)")


class StageResult(BaseModel):
    stage: str
    outcome: StageOutcome
    message: str = ""
    numbers: dict[str, Any] = Field(default_factory=dict)
    runs: list[dict[str, Any]] = Field(default_factory=list, description="ProbeRun dumps")


def failure_line(output: str) -> str:
    """The line that says why: the last one naming an error, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if _ERROR_LINE.search(line) and not line.startswith("Traceback"):
            return line[:300]
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


def run_entry_point(
    environment: Environment, case: Case, stage: Literal["C1", "C3"]
) -> StageResult:
    """C1 with GPUs hidden, C3 on GPU 0: the case's entry point must exit 0."""
    research = case.spec.research
    if research is None:
        return _skip(stage, "not a research case")
    if stage == "C1":
        skip = _declared_skip(case, stage, research.supports_cpu, "CPU")
        gpus: Any = "none"
        budget = research.c1_seconds
    else:
        skip = _declared_skip(case, stage, research.supports_single_gpu, "single GPU")
        if skip is None and environment.gpu_count < 1:
            skip = "no GPU on this host: C3 needs one (never faked)"
        gpus, budget = 0, research.c3_seconds
    if skip is None and not research.entry_point:
        skip = "the case declares no entry point"
    if skip is not None:
        return _skip(stage, skip)
    assert research.entry_point is not None
    run = environment.run(research.entry_point, gpus=gpus, timeout=budget)
    numbers = {"exit_code": run.exit_code, "seconds": round(run.duration, 3), "gpus": str(gpus)}
    if run.ok:
        return StageResult(
            stage=stage,
            outcome="passed",
            message=f"{research.entry_point!r} exited 0 in {run.duration:.1f}s",
            numbers=numbers,
            runs=[run.model_dump()],
        )
    why = f"timed out after {budget:.0f}s" if run.timed_out else f"exit {run.exit_code}"
    return StageResult(
        stage=stage,
        outcome="failed",
        message=f"{research.entry_point!r}: {why}: {failure_line(run.output)}",
        numbers=numbers,
        runs=[run.model_dump()],
    )


def run_ddp(environment: Environment, case: Case, *, ddp_cpu: bool) -> StageResult:
    """C4: ``torchrun --standalone`` over the visible GPUs (NCCL), or 2 CPU processes on gloo."""
    research = case.spec.research
    if research is None:
        return _skip("C4", "not a research case")
    skip = _declared_skip(case, "C4", research.supports_multi_gpu, "multi-GPU")
    if skip is None and not research.ddp_entry_point:
        skip = "the case declares no DDP entry point"
    if skip is not None:
        return _skip("C4", skip)
    assert research.ddp_entry_point is not None
    if environment.gpu_count >= 2:
        nproc, gpus, backend, mode = environment.gpu_count, "all", "nccl", "gpu-nccl"
    elif ddp_cpu:
        nproc, gpus, backend, mode = 2, "none", "gloo", "cpu-gloo"
    else:
        return _skip(
            "C4",
            f"C4 needs 2 or more GPUs (this host has {environment.gpu_count}); "
            "--ddp-cpu runs it as 2 CPU processes on gloo",
        )
    command = f"torchrun --standalone --nproc_per_node={nproc} {research.ddp_entry_point}"
    run = environment.run(
        command,
        gpus=gpus,  # type: ignore[arg-type]
        timeout=research.c4_seconds,
        env={"ENCONDA_DDP_BACKEND": backend},
    )
    numbers = {
        "exit_code": run.exit_code,
        "seconds": round(run.duration, 3),
        "nproc": nproc,
        "mode": mode,
    }
    label = f"[{mode}, {nproc} processes]"
    if run.ok:
        return StageResult(
            stage="C4",
            outcome="passed",
            message=f"{label} {command!r} exited 0 in {run.duration:.1f}s",
            numbers=numbers,
            runs=[run.model_dump()],
        )
    why = (
        f"timed out after {research.c4_seconds:.0f}s" if run.timed_out else f"exit {run.exit_code}"
    )
    return StageResult(
        stage="C4",
        outcome="failed",
        message=f"{label} {command!r}: {why}: {failure_line(run.output)}",
        numbers=numbers,
        runs=[run.model_dump()],
    )
