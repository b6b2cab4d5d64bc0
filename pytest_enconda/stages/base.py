"""What a runtime pyramid stage is (``Stage``) and what it may ask of the run (``StageContext``).

Standard library only at import: collection reads the stage table (names, keywords, GPU needs)
in every benchmark run, and only a stage that runs needs pydantic or Docker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..registry import Registry

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..pipeline import CasePipeline
    from ..probing.pyramid import StageResult

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


class StageContext:
    """One case's view of the run, handed to ``Stage.run``.

    Everything is computed once per case by the pipeline (and kept for ``--resume``): a stage
    asking for ``facts()`` or another stage's result does not run them again.
    """

    def __init__(self, pipeline: CasePipeline, case: Case) -> None:
        self._pipeline = pipeline
        self.case = case

    @property
    def environment(self) -> Any:
        """The agent's final state: ``run(command, gpus=..., timeout=..., env=..., mounts=...)``."""
        return self._pipeline.environment(self.case)

    @property
    def ddp_cpu(self) -> bool:
        return bool(self._pipeline.settings.ddp_cpu)

    @property
    def exact_versions(self) -> bool:
        return bool(self._pipeline.settings.exact_versions)

    def facts(self) -> dict[str, Any] | None:
        """``python_facts.py`` under the reported interpreter; ``None`` when it does not run."""
        return self._pipeline.facts(self.case)  # type: ignore[no-any-return]

    def stage(self, name: str) -> StageResult:
        """Another stage's result (run now if it has not run for this case)."""
        return self._pipeline.stage(self.case, name)  # type: ignore[no-any-return]

    def efficiency(self) -> dict[str, Any]:
        """Time to ready, tokens, cost and sizes of the agent's run on this case."""
        return self._pipeline.efficiency(self.case)  # type: ignore[no-any-return]

    def self_report(self) -> dict[str, Any] | None:
        return self._pipeline.self_report(self.case)  # type: ignore[no-any-return]

    def report_read(self) -> Any:
        """The self-report checked against ResearchEnvBench's schema (``ReportRead``)."""
        return self._pipeline.report_read(self.case)

    def progress(self, message: str) -> None:
        self._pipeline.progress(f"{self.case.id}: {message}")


def skipped(stage: str, reason: str) -> StageResult:
    from ..probing.pyramid import StageResult

    return StageResult(stage=stage, outcome="skipped", message=reason)
