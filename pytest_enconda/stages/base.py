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
    """The field of the case's ``[research]`` budgets that bounds this stage, if any."""
    budget_seconds: float | None = None
    """The budget of a stage without a ``[research]`` field of its own (one a plugin adds)."""
    applies: Callable[[Case], bool] | None = None
    """Whether ``case`` declares what the stage runs (its support flag, its entry point);
    what the host lacks is the stage's own skip, at run time. None: every case of its kind."""
    cpu_fallback: bool = False
    """``--ddp-cpu`` may run it on CPU processes instead of its GPUs: its summary row counts
    those runs (``cpu_mode``)."""
    summary: SummaryKind = "funnel"
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
        research = case.spec.research
        if self.budget_field is not None and research is not None:
            return float(getattr(research, self.budget_field))
        if self.budget_seconds is not None:
            return float(self.budget_seconds)
        return default

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
