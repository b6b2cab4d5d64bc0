"""``python_facts.py`` under the reported interpreter: what C2 and C5 compare against."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cases.models import Case


def framework(case: Case) -> str:
    return case.spec.research.framework if case.spec.research else "torch"


def python_facts(environment: Any, case: Case, progress: Any) -> dict[str, Any] | None:
    """The facts (GPUs visible if any); ``None`` when that interpreter does not run."""
    from ..probing.environment import ProbeScriptError, run_probe_script
    from ..probing.scripts import PYTHON_FACTS, probe_script

    gpus = "all" if environment.gpu_count else "none"
    try:
        return run_probe_script(
            environment,
            probe_script(PYTHON_FACTS),
            "--framework",
            framework(case),
            gpus=gpus,
        )
    except ProbeScriptError as exc:
        progress(f"{case.id}: the reported interpreter gave no facts: {exc}")
        return None
