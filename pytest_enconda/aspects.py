"""Graded aspects and task kinds: the registries every module reads for "which items does a
case have, and how is each graded".

A diagnosis case is one pytest item per aspect of its kind (collection order = registration
order); a research case runs its kind's stages (``pytest_enconda.stages``) as probes. Standard
library only at import: the xdist scheduler and the plugin's hooks read these in every run, so
grading modules (pydantic, judges) are imported inside the grade functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .caserun import AspectContext
from .kinds import TASK_KINDS, TaskKind
from .registry import Registry

if TYPE_CHECKING:
    from .grading.verdict import ItemVerdict

EXECUTION = "execution"


@dataclass(frozen=True)
class Aspect:
    name: str
    grade: Callable[[AspectContext], ItemVerdict]
    contract_file: str | None = None
    """The output file (``setup.sh``, ``diagnosis.json``) it grades: missing or malformed, the
    aspect fails with the reason."""
    graded_by: str = ""
    """How it is graded, in a phrase (shown by docs and reports)."""
    needs_gpu: bool = False
    needs_errors: bool = False
    """Graded only when the case injects errors: a missing contract file does not fail it then."""
    task_kind: str = "diagnosis"


ASPECTS: Registry[Aspect] = Registry("aspect", "pytest_enconda.aspects")

__all__ = ["ASPECTS", "TASK_KINDS", "Aspect", "AspectContext", "TaskKind"]


def _kind_name(kind: TaskKind | str) -> str:
    return kind if isinstance(kind, str) else kind.name


def kind_aspects(kind: TaskKind | str) -> list[Aspect]:
    """A task kind's graded items, in collection order."""
    name = _kind_name(kind)
    return [aspect for aspect in ASPECTS.values() if aspect.task_kind == name]


def aspect_names(kind: TaskKind | str) -> tuple[str, ...]:
    return tuple(aspect.name for aspect in kind_aspects(kind))


def stage_names(kind: TaskKind | str) -> tuple[str, ...]:
    """A task kind's pyramid stages, run as probes (imports the stage modules: cheap)."""
    from .stages import STAGES

    name = _kind_name(kind)
    return tuple(stage.name for stage in STAGES.values() if stage.task_kind == name)


def _grade_execution(ctx: AspectContext) -> ItemVerdict:
    from .grading.execution import grade_execution
    from .grading.verdict import ItemVerdict

    reference = ctx.case.reference
    if reference is not None and not reference.verified:
        # Imported data without a verified PASS set: Pass@1 has nothing to compare against.
        return ItemVerdict(outcome="skipped", message=f"no verified reference: {reference.reason}")
    if not ctx.existing_environment:
        ctx.check_setup_budget()
    missing = ctx.missing_output()
    if missing is not None:
        return missing
    if ctx.existing_environment:
        return ctx.not_graded_here()
    return grade_execution(ctx.execution_record(), reference, ctx.case_root)


def _grade_diagnosis(ctx: AspectContext) -> ItemVerdict:
    from .grading.verdict import ItemVerdict

    missing = ctx.missing_output()
    if missing is not None:
        return missing
    if ctx.existing_environment:
        return ctx.not_graded_here()
    if not ctx.case.golden.errors and ctx.aspect.needs_errors:
        return ItemVerdict(
            outcome="skipped", message="no injected errors: nothing to describe or fix"
        )
    return ctx.diagnosis_grade().items[ctx.aspect.name]  # type: ignore[no-any-return]


_BUILTIN_ASPECTS = (
    Aspect(
        EXECUTION,
        _grade_execution,
        contract_file="setup.sh",
        graded_by="the case's tests after setup.sh, against the reference PASS set (Pass@1)",
    ),
    Aspect(
        "error_types",
        _grade_diagnosis,
        contract_file="diagnosis.json",
        graded_by="predicted error types against the golden ones (precision, recall, F1)",
    ),
    Aspect(
        "descriptions",
        _grade_diagnosis,
        contract_file="diagnosis.json",
        graded_by="the judge: each golden error's description matched",
        needs_errors=True,
    ),
    Aspect(
        "fixes",
        _grade_diagnosis,
        contract_file="diagnosis.json",
        graded_by="the judge: each golden error's fix matched",
        needs_errors=True,
    ),
)
for _aspect in _BUILTIN_ASPECTS:
    ASPECTS.register(_aspect)


def _grade_aec(ctx: AspectContext) -> ItemVerdict:
    from .aec.grading import grade_aec

    missing = ctx.missing_output()
    if missing is not None:
        return missing
    if ctx.existing_environment:
        return ctx.not_graded_here()
    return grade_aec(ctx)


for _aspect in (
    Aspect(
        "aec_tests_run",
        _grade_aec,
        contract_file="setup.sh",
        graded_by="setup.sh replayed in a fresh container, then the agent's test command (or "
        "the reference one): a runner summary with at least one test executed",
        task_kind="aec",
    ),
    Aspect(
        "aec_pass_set",
        _grade_aec,
        contract_file="setup.sh",
        graded_by="the share of the reference PASS set that passes (where a reference exists)",
        task_kind="aec",
    ),
    Aspect(
        "aec_success",
        _grade_aec,
        contract_file="setup.sh",
        graded_by="hybrid: the test log's parsed verdict, the trajectory judge where the log is "
        "inconclusive",
        task_kind="aec",
    ),
):
    ASPECTS.register(_aspect)

# The aspects the judge grades from ``diagnosis.json`` (one grading per case serves all three).
DIAGNOSIS_ASPECTS: tuple[str, ...] = tuple(
    aspect.name for aspect in _BUILTIN_ASPECTS if aspect.contract_file == "diagnosis.json"
)


def get_aspect(name: str) -> Aspect:
    return ASPECTS.get(name)


def all_aspect_names() -> frozenset[str]:
    """Every item name a case's own items may end in: aspects and stages of every kind."""
    names = set(ASPECTS.names())
    for kind in TASK_KINDS.values():
        names.update(stage_names(kind))
    return frozenset(names)
