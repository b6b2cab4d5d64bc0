"""C1 and C3: the case's entry point must exit 0 (with GPUs hidden, or on GPU 0)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..probing.environment import Environment
    from ..probing.pyramid import StageResult


def run_entry_point(
    environment: Environment, case: Case, stage: Literal["C1", "C3"]
) -> StageResult:
    """C1 with GPUs hidden, C3 on GPU 0: the case's entry point must exit 0."""
    from ..probing.pyramid import StageResult, _declared_skip, _skip, failure_line

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
