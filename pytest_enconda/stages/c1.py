"""C1: the case's entry point runs one step with GPUs hidden."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Stage, StageContext
from .entry_point import run_entry_point

if TYPE_CHECKING:
    from ..probing.pyramid import StageResult


def run(ctx: StageContext) -> StageResult:
    return run_entry_point(ctx.environment, ctx.case, "C1")


STAGE = Stage(
    name="C1",
    title="C1 CPU",
    run=run,
    probe="test_c1_entry_point_on_cpu",
    description="The case's entry point runs one step with GPUs hidden.",
    budget_field="c1_seconds",
)
