"""What a runtime pyramid stage is (``Stage``) and what it may ask of the run (``StageContext``).

Standard library only at import: collection reads the stage table (names, keywords, GPU needs)
in every benchmark run, and only a stage that runs needs pydantic or Docker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..caserun import StageContext
from ..registry import Registry

if TYPE_CHECKING:
    from ..caserun import CaseRun
    from ..cases.models import Case
    from ..probing.pyramid import StageResult

__all__ = ["STAGES", "Stage", "StageContext", "SummaryKind", "skipped"]

# How a stage's rows enter the pyramid summary: ``funnel`` counts passed of applicable (C1-C4
# and most new stages); ``imports`` (C0) and ``audit`` (C5) have summaries of their own.
SummaryKind = Literal["funnel", "imports", "audit"]


@dataclass(frozen=True)
class Stage:
    name: str
    title: str
    """Column header in the pyramid tables, e.g. ``"C1 CPU"``."""
    run: Callable[[StageContext], StageResult]
    probe: str
    """The shipped probe's test function (``probe_pyramid.py::<probe>``): the item's name."""
    description: str = ""
    """The probe's docstring: what passing the stage means."""
    gpus: int = 0
    """GPUs the stage needs where it applies: a cluster task asks for them (``--dispatch ray``)
    and its probe carries the ``gpu`` marker."""
    needs_gpu: bool = False
    """``gpus > 0``; given alone, the stage needs one."""
    budget_field: str | None = None
    """The case's budget that bounds this stage, by name: a ``[research]`` field for C0-C4 (as
    the released cases write them), else a key of the case's ``[budgets]`` table that a plugin's
    stage declares (``c9_seconds``; ``CaseSpec.stage_budget``)."""
    budget_seconds: float | None = None
    """The stage's budget where the case gives none: a plugin stage's default."""
    applies: Callable[[Case], bool] | None = None
    """Whether ``case`` declares what the stage runs (its support flag, its entry point);
    what the host lacks is the stage's own skip, at run time. None: every case of its kind."""
    cpu_fallback: bool = False
    """``--ddp-cpu`` may run it on CPU processes instead of its GPUs: its summary row counts
    those runs (``cpu_mode``)."""
    summary: SummaryKind = "funnel"
    own_gpu_skip: bool = False
    """The stage's ``run`` says itself why it skips on a host with fewer than ``gpus`` GPUs
    (C2-C4, whose reasons put a case's declared skip first); otherwise ``run_for`` skips it
    before it runs."""
    task_kind: str = "research"
    keyword: str = ""
    """Added to the item's keywords (``-k``); the stage's name unless given."""

    def __post_init__(self) -> None:
        if not self.keyword:
            object.__setattr__(self, "keyword", self.name)
        # One fact, two spellings: a plugin written for ``needs_gpu`` keeps working.
        if self.needs_gpu and self.gpus == 0:
            object.__setattr__(self, "gpus", 1)
        object.__setattr__(self, "needs_gpu", self.gpus > 0)

    @property
    def has_budget(self) -> bool:
        return self.budget_field is not None or self.budget_seconds is not None

    def budget(self, case: Case, default: float = 600) -> float:
        """The stage's time budget for ``case`` (``default`` when it has none)."""
        if self.budget_field is not None:
            given = case.spec.stage_budget(self.budget_field)
            if given is not None:
                return given
        if self.budget_seconds is not None:
            return float(self.budget_seconds)
        return default

    def gpu_shortfall(self, gpu_count: int, *, ddp_cpu: bool) -> str | None:
        """Why the stage cannot run on a host with ``gpu_count`` GPUs, or None: it needs none,
        has them, or runs on CPU processes instead (``cpu_fallback`` under ``--ddp-cpu``)."""
        if gpu_count >= self.gpus or (self.cpu_fallback and ddp_cpu):
            return None
        needs = "a GPU" if self.gpus == 1 else f"{self.gpus} GPUs"
        reason = f"{self.name} needs {needs} (this host has {gpu_count})"
        return reason + ("; --ddp-cpu runs it on CPU processes" if self.cpu_fallback else "")

    def run_for(self, run: CaseRun, case: Case) -> StageResult:
        """The stage's result for ``case``: its ``run`` with its budget in the context, or
        skipped where the host has too few GPUs, as C2-C4 skip themselves."""
        budget = self.budget(case) if self.has_budget else None
        ctx = StageContext(run, case, budget=budget)
        if not self.own_gpu_skip and self.gpus:
            reason = self.gpu_shortfall(ctx.environment.gpu_count, ddp_cpu=ctx.ddp_cpu)
            if reason is not None:
                return skipped(self.name, reason)
        return self.run(ctx)

    def applies_to(self, case: Case) -> bool:
        """Whether the stage runs for ``case`` by what the case declares: its kind, no declared
        skip reason, and the stage's own ``applies``."""
        if self.task_kind != case.spec.suite:
            return False
        research = case.spec.research
        if research is not None and self.name in research.skip_reasons:
            return False
        return self.applies is None or self.applies(case)


STAGES: Registry[Stage] = Registry("pyramid stage", "pytest_enconda.stages")


def skipped(stage: str, reason: str) -> StageResult:
    from ..probing.pyramid import StageResult

    return StageResult(stage=stage, outcome="skipped", message=reason)
