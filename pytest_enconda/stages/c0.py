"""C0: do the repository's imports resolve in the agent's interpreter? (pyright)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Stage, StageContext

if TYPE_CHECKING:
    from ..probing.pyramid import StageResult


def run(ctx: StageContext) -> StageResult:
    from ..probing.pyramid import StageResult

    budget = STAGE.budget(ctx.case)
    # Where pyright runs (beside the files, or lent into a box) is the environment's business.
    result = ctx.environment.check_imports(budget)
    numbers = {
        "missing_count": result.missing_count,
        "total": result.total,
        "missing": result.missing,
        "unparsable": result.unparsable,
        "pyright_version": result.pyright_version,
        # C0 runs for every research case: the efficiency columns are there for `-k C0` too.
        **ctx.efficiency(),
    }
    if result.error is not None:
        # The agent's interpreter not starting is the agent's failure; anything else means
        # C0 could not be measured, which is never "0 missing".
        outcome = "failed" if result.error_kind == "interpreter" else "error"
        return StageResult(stage="C0", outcome=outcome, message=result.summary())
    outcome = "passed" if result.ok else "failed"
    return StageResult(stage="C0", outcome=outcome, message=result.summary(), numbers=numbers)


STAGE = Stage(
    name="C0",
    title="C0 missing/total",
    run=run,
    probe="test_c0_imports_resolve",
    description="Every import in the repository resolves in the agent's interpreter (pyright).",
    budget_field="c0_seconds",
    summary="imports",
)
