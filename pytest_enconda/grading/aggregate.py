"""Run-level metrics from per-case grades, under both definitions, overall and by level.

Aggregation is a pure function of the cases given, so any subset (``-k``, one level, a resumed
run) gives the numbers of exactly those cases. ``Summary.to_summary_json`` is the stable,
script-facing form written to ``summary.json``: fractions in [0, 1], ``null`` where a number cannot
be computed (no prediction, no golden error, no execution).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ..error_types import ERROR_TYPES
from .diagnosis import DiagnosisGrade
from .judges.base import JudgeStats

SCHEMA_VERSION = 1

DEFINITIONS = {
    "paper": (
        "EnConda-Bench's published definition: per instance, sets of predicted and golden error "
        "types; TP/FP/FN summed over instances, precision/recall/F1 computed once (micro). A "
        "prediction matches a golden error of the same type, greedily in prediction order. "
        "Description (fix) accuracy: per instance, accepted matched pairs / matched pairs (0 when "
        "nothing matched), averaged over instances with at least one golden error (the official "
        "script also averages in instances without errors, as 0; they are excluded here and "
        "counted in instances_without_errors)."
    ),
    "per_error": (
        "Stricter: multisets of types per instance (two E1 errors need two E1 predictions); "
        "predictions assigned one-to-one to same-type golden errors by optimal assignment "
        "(scipy linear_sum_assignment) maximising accepted descriptions and fixes; description "
        "(fix) accuracy = accepted matched pairs / golden errors, summed over instances (micro)."
    ),
    "missing_diagnosis": (
        "A case whose agent left no readable diagnosis.json (none, or malformed). paper: left "
        "out of every number, as the official evaluator evaluates only the prediction files it "
        "finds and skips one it cannot parse. per_error: graded as no prediction, so each of its "
        "golden errors is a false negative and an unaccepted description and fix. Either way it "
        "lowers diagnosis_coverage (cases with a readable diagnosis / diagnosis cases run)."
    ),
    "judge_errors": (
        "A pair the judge could not grade is left out of both numerator and denominator of the "
        "accuracies and counted in the judge_error fields, never scored as 'not similar'."
    ),
    "pass_at_1": "setup script and tests passed in a fresh container / cases whose execution ran",
    "pass_at_1_non_trivial": (
        "Pass@1 over the cases whose reference an empty setup does not pass (verify's null "
        "setup: the graded test step after an empty setup script reached less than the whole "
        "PASS set); the headline figure. On a trivial case any setup that does not break the "
        "image passes, so its Pass@1 says nothing of the agent's setup."
    ),
    "e1_e2_merged": (
        "Type precision/recall/F1 with E1 (dependency installation) and E2 (command usage) counted "
        "as one type, under both definitions; not the official figure. The dataset labels one "
        "kind of error under either (a misspelled package name is E1 in some repositories and "
        "E2 in others; `pytest-enconda audit` counts them), so the gap between this figure and "
        "the official one is the part of the type score such label noise can explain."
    ),
}

# The two types the dataset's labels mix up most (issue 47: a misspelled package is either).
MERGED_TYPES = ("E1", "E2")


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


class CaseResult(BaseModel):
    case_id: str
    level: int
    diagnosis: DiagnosisGrade | None = None
    execution_passed: bool | None = Field(
        default=None, description="None: not run, or a harness error"
    )
    diagnosis_missing: bool = Field(
        default=False,
        description="its diagnosis items ran and the agent left no readable diagnosis.json",
    )
    diagnosis_ungraded: bool = Field(
        default=False,
        description="its diagnosis items ran but no grade was made (a harness or judge error)",
    )
    golden_types: list[str] = Field(
        default_factory=list,
        description="the case's golden error types: what a missing diagnosis failed to find",
    )
    trivial: bool = Field(
        default=False, description="an empty setup reaches its PASS set (verify's null setup)"
    )

    @property
    def diagnosis_ran(self) -> bool:
        """Whether the case counts in the diagnosis coverage's denominator."""
        return self.diagnosis is not None or self.diagnosis_missing or self.diagnosis_ungraded


class PRF(BaseModel):
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float | None:
        # Equal to 2PR/(P+R) wherever that is defined, and 0 when TP = 0 but errors exist.
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    def add(self, tp: int, fp: int, fn: int) -> None:
        self.tp += tp
        self.fp += fp
        self.fn += fn

    def as_dict(self, prefix: str = "") -> dict[str, Any]:
        return {
            f"{prefix}precision": self.precision,
            f"{prefix}recall": self.recall,
            f"{prefix}f1": self.f1,
            f"{prefix}tp": self.tp,
            f"{prefix}fp": self.fp,
            f"{prefix}fn": self.fn,
        }


class PaperMetrics(BaseModel):
    type: PRF = Field(default_factory=PRF)
    description_acc: float | None = None
    fix_acc: float | None = None
    instances_with_errors: int = 0
    instances_without_errors: int = 0
    description_judge_error_instances: int = Field(
        default=0,
        description="instances left out of description_acc: judge errors on every matched pair",
    )
    fix_judge_error_instances: int = 0


class PerErrorMetrics(BaseModel):
    type: PRF = Field(default_factory=PRF)
    golden_errors: int = 0
    predicted_errors: int = 0
    matched: int = 0
    description_accepted: int = 0
    fix_accepted: int = 0
    description_judge_errors: int = 0
    fix_judge_errors: int = 0

    @property
    def description_acc(self) -> float | None:
        return _ratio(self.description_accepted, self.golden_errors - self.description_judge_errors)

    @property
    def fix_acc(self) -> float | None:
        return _ratio(self.fix_accepted, self.golden_errors - self.fix_judge_errors)


class TypeMetrics(BaseModel):
    predicted: int = 0
    golden: int = 0
    per_error: PRF = Field(default_factory=PRF)
    paper: PRF = Field(default_factory=PRF)


class Block(BaseModel):
    """All metrics of one group of cases (the run, or one level)."""

    cases: int = 0
    diagnosed: int = 0
    diagnosis_cases: int = 0
    missing_diagnosis: int = 0
    paper: PaperMetrics = Field(default_factory=PaperMetrics)
    per_error: PerErrorMetrics = Field(default_factory=PerErrorMetrics)
    per_type: dict[str, TypeMetrics] = Field(default_factory=dict)
    invalid_types: dict[str, int] = Field(default_factory=dict)
    executed: int = 0
    execution_passed: int = 0
    trivial_executed: int = 0
    trivial_passed: int = 0
    merged_paper: PRF = Field(default_factory=PRF, description="type counts, E1 and E2 as one")
    merged_per_error: PRF = Field(default_factory=PRF)

    @property
    def pass_at_1(self) -> float | None:
        return _ratio(self.execution_passed, self.executed)

    @property
    def pass_at_1_non_trivial(self) -> float | None:
        return _ratio(
            self.execution_passed - self.trivial_passed, self.executed - self.trivial_executed
        )

    def to_json(self) -> dict[str, Any]:
        paper = self.paper
        per = self.per_error
        return {
            "cases": self.cases,
            "diagnosed_cases": self.diagnosed,
            "diagnosis_coverage": {
                "cases": self.diagnosis_cases,
                "diagnosed": self.diagnosed,
                "missing": self.missing_diagnosis,
                "ungraded": self.diagnosis_cases - self.diagnosed - self.missing_diagnosis,
                "rate": _ratio(self.diagnosed, self.diagnosis_cases),
            },
            "paper": {
                **paper.type.as_dict("type_"),
                "description_acc": paper.description_acc,
                "fix_acc": paper.fix_acc,
                "instances_with_errors": paper.instances_with_errors,
                "instances_without_errors": paper.instances_without_errors,
                "description_judge_error_instances": paper.description_judge_error_instances,
                "fix_judge_error_instances": paper.fix_judge_error_instances,
            },
            "per_error": {
                **per.type.as_dict("type_"),
                "description_acc": per.description_acc,
                "fix_acc": per.fix_acc,
                "golden_errors": per.golden_errors,
                "predicted_errors": per.predicted_errors,
                "matched": per.matched,
                "description_accepted": per.description_accepted,
                "fix_accepted": per.fix_accepted,
                "description_judge_errors": per.description_judge_errors,
                "fix_judge_errors": per.fix_judge_errors,
            },
            "pass_at_1": self.pass_at_1,
            "pass_at_1_non_trivial": self.pass_at_1_non_trivial,
            "execution": {
                "run": self.executed,
                "passed": self.execution_passed,
                "trivial_run": self.trivial_executed,
                "trivial_passed": self.trivial_passed,
            },
            "per_type": {
                name: {
                    **metrics.per_error.as_dict(),
                    "predicted": metrics.predicted,
                    "golden": metrics.golden,
                    "paper": metrics.paper.as_dict(),
                }
                for name, metrics in self.per_type.items()
            },
            "invalid_types": dict(self.invalid_types),
            "e1_e2_merged": {
                "paper": self.merged_paper.as_dict("type_"),
                "per_error": self.merged_per_error.as_dict("type_"),
            },
        }


def _block(results: Iterable[CaseResult]) -> Block:
    block = Block(per_type={t: TypeMetrics() for t in ERROR_TYPES})
    description_shares: list[float] = []
    fix_shares: list[float] = []
    invalid: Counter[str] = Counter()
    for result in results:
        block.cases += 1
        if result.execution_passed is not None:
            block.executed += 1
            block.execution_passed += int(result.execution_passed)
            if result.trivial:
                block.trivial_executed += 1
                block.trivial_passed += int(result.execution_passed)
        block.diagnosis_cases += int(result.diagnosis_ran)
        grade = result.diagnosis
        if grade is None:
            if result.diagnosis_missing:
                _add_missing(block, result.golden_types)
            continue
        block.diagnosed += 1
        paper, per = grade.paper, grade.per_error
        block.paper.type.add(paper.tp, paper.fp, paper.fn)
        block.per_error.type.add(per.tp, per.fp, per.fn)
        block.merged_paper.add(*_merged(grade.set_counts, sets=True))
        block.merged_per_error.add(*_merged(grade.multiset_counts, sets=False))
        if grade.golden_errors:
            block.paper.instances_with_errors += 1
            if paper.description_acc is None:
                block.paper.description_judge_error_instances += 1
            else:
                description_shares.append(paper.description_acc)
            if paper.fix_acc is None:
                block.paper.fix_judge_error_instances += 1
            else:
                fix_shares.append(paper.fix_acc)
        else:
            block.paper.instances_without_errors += 1
        block.per_error.golden_errors += grade.golden_errors
        block.per_error.predicted_errors += len(grade.predicted_types)
        block.per_error.matched += len(per.matched)
        block.per_error.description_accepted += per.description_accepted
        block.per_error.fix_accepted += per.fix_accepted
        block.per_error.description_judge_errors += per.description_judge_errors
        block.per_error.fix_judge_errors += per.fix_judge_errors
        for error_type, counts in grade.multiset_counts.items():
            if error_type not in block.per_type:
                continue
            metrics = block.per_type[error_type]
            metrics.per_error.add(counts.tp, counts.fp, counts.fn)
            metrics.predicted += counts.tp + counts.fp
            metrics.golden += counts.tp + counts.fn
            paper_counts = grade.set_counts[error_type]
            metrics.paper.add(paper_counts.tp, paper_counts.fp, paper_counts.fn)
        invalid.update(grade.invalid_types)
    block.paper.description_acc = _mean(description_shares)
    block.paper.fix_acc = _mean(fix_shares)
    block.invalid_types = dict(sorted(invalid.items()))
    return block


def _merged(counts: Mapping[str, Any], *, sets: bool) -> tuple[int, int, int]:
    """(TP, FP, FN) of one instance with ``MERGED_TYPES`` as one type: on type sets (the
    paper's: present or not) or multisets (per-error: one-to-one by count)."""
    tp = fp = fn = 0
    golden = predicted = 0
    for error_type, count in counts.items():
        if error_type in MERGED_TYPES:
            golden += count.tp + count.fn
            predicted += count.tp + count.fp
        else:
            tp, fp, fn = tp + count.tp, fp + count.fp, fn + count.fn
    if sets:
        golden, predicted = int(golden > 0), int(predicted > 0)
    both = min(golden, predicted)
    return tp + both, fp + predicted - both, fn + golden - both


def _add_missing(block: Block, golden_types: Sequence[str]) -> None:
    """No diagnosis, no prediction (per-error only): every golden error is missed, and none of
    their descriptions or fixes accepted. The paper's numbers leave the case out."""
    block.missing_diagnosis += 1
    block.per_error.type.add(0, 0, len(golden_types))
    block.merged_per_error.add(0, 0, len(golden_types))
    block.per_error.golden_errors += len(golden_types)
    for error_type, count in Counter(golden_types).items():
        if error_type in block.per_type:
            block.per_type[error_type].per_error.add(0, 0, count)
            block.per_type[error_type].golden += count


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class Summary(BaseModel):
    overall: Block
    by_level: dict[int, Block] = Field(default_factory=dict)

    def to_summary_json(
        self,
        agent: str,
        model: str | None,
        judge: JudgeStats | Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        if isinstance(judge, JudgeStats):
            judge_json: dict[str, Any] = judge.model_dump()
        elif judge is not None:
            judge_json = dict(judge)
        else:
            judge_json = {"name": None}
        for key in ("calls", "cache_hits", "errors"):
            judge_json.setdefault(key, 0)
        overall = self.overall.to_json()
        return {
            "schema_version": SCHEMA_VERSION,
            "agent": agent,
            "model": model,
            "judge_name": judge_json.get("name"),
            "judge": judge_json,
            "definitions": DEFINITIONS,
            **overall,
            "by_level": {str(level): block.to_json() for level, block in self.by_level.items()},
        }


def aggregate(grades: Sequence[CaseResult]) -> Summary:
    """Metrics of exactly these cases (overall and per level)."""
    levels: dict[int, list[CaseResult]] = {}
    for result in grades:
        levels.setdefault(result.level, []).append(result)
    return Summary(
        overall=_block(grades),
        by_level={level: _block(levels[level]) for level in sorted(levels)},
    )


def aggregate_subset(grades: Sequence[CaseResult], ids: Collection[str]) -> Summary:
    """Metrics of the cases whose id is in ``ids`` (a verified subset), by the same rules as
    ``aggregate``: side by side with the full set, the difference is the labels' noise."""
    wanted = frozenset(ids)
    return aggregate([result for result in grades if result.case_id in wanted])
