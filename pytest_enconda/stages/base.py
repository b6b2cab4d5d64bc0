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
    needs_gpu: bool = False
    budget_field: str | None = None
    """The field of the case's ``[research]`` budgets that bounds this stage, if any."""
    summary: SummaryKind = "funnel"
    task_kind: str = "research"
    keyword: str = ""
    """Added to the item's keywords (``-k``); the stage's name unless given."""

    def __post_init__(self) -> None:
        if not self.keyword:
            object.__setattr__(self, "keyword", self.name)

    def budget(self, case: Case, default: float = 600) -> float:
        """The stage's time budget for ``case`` (``default`` when it has none)."""
        research = case.spec.research
        if self.budget_field is None or research is None:
            return default
        return float(getattr(research, self.budget_field))


STAGES: Registry[Stage] = Registry("pyramid stage", "pytest_enconda.stages")


def skipped(stage: str, reason: str) -> StageResult:
    from ..probing.pyramid import StageResult

    return StageResult(stage=stage, outcome="skipped", message=reason)
