"""C3: the case's entry point runs one step on GPU 0."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Stage, StageContext
from .entry_point import run_entry_point

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..probing.pyramid import StageResult


def run(ctx: StageContext) -> StageResult:
    return run_entry_point(ctx.environment, ctx.case, "C3")


def applies(case: Case) -> bool:
    research = case.spec.research
    return research is not None and research.supports_single_gpu and bool(research.entry_point)


STAGE = Stage(
    name="C3",
    title="C3 1 GPU",
    run=run,
    probe="test_c3_entry_point_on_one_gpu",
    description="The case's entry point runs one step on GPU 0.",
    gpus=1,
    own_gpu_skip=True,
    applies=applies,
    budget_field="c3_seconds",
)
