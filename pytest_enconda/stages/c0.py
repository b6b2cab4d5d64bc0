"""C0: do the repository's imports resolve in the agent's interpreter? (pyright)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Stage, StageContext

if TYPE_CHECKING:
    from ..probing.imports import ImportsResult
    from ..probing.pyramid import StageResult


def run(ctx: StageContext) -> StageResult:
    from ..probing.pyramid import StageResult

    environment = ctx.environment
    budget = STAGE.budget(ctx.case)
    if environment.backend == "host":
        result = _host_imports(environment, budget)
    else:
        result = _container_imports(environment, budget)
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


def _host_imports(environment: Any, budget: float) -> ImportsResult:
    # The one branch on the backend left: it becomes a backend method with the Backend protocol.
    from ..probing import imports

    return imports.check_imports_host(
        Path(environment.repo_dir), environment.python, timeout=budget
    )


def _container_imports(environment: Any, budget: float) -> ImportsResult:
    import shutil

    from ..probing import imports
    from ..probing.environment import run_probe_script
    from ..probing.scripts import IMPORTS_SCAN, probe_script

    # The image's own python3 scans, so a broken agent interpreter cannot hide imports.
    document = run_probe_script(
        environment, probe_script(IMPORTS_SCAN), environment.repo_dir, python="python3"
    )
    scan = imports.parse_scan(document)
    invocation = imports.container_pyright(
        environment.python, environment.repo_dir, scan.paths, timeout=budget
    )
    try:
        run = environment.run(invocation.command, timeout=budget + 30, mounts=invocation.mounts)
    finally:
        shutil.rmtree(invocation.config_dir, ignore_errors=True)
    report = imports.parse_pyright_output(run.output, run.exit_code)
    return imports.imports_result(
        scan, report, python=environment.python, repo=environment.repo_dir
    )


STAGE = Stage(
    name="C0",
    title="C0 missing/total",
    run=run,
    probe="test_c0_imports_resolve",
    description="Every import in the repository resolves in the agent's interpreter (pyright).",
    budget_field="c0_seconds",
    summary="imports",
)
