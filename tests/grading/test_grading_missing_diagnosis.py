"""A case whose agent left no readable diagnosis (issue 48 item 4), in aggregate(): per-error
counts it as no prediction, paper leaves it out (the official evaluator evaluates only the
prediction files it finds), and the coverage counts it either way. Numbers by hand."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_enconda.agents.base import PredictedError
from pytest_enconda.cases.models import GoldenAnswer, GoldenError
from pytest_enconda.grading.aggregate import DEFINITIONS, CaseResult, aggregate
from pytest_enconda.grading.diagnosis import grade_diagnosis
from pytest_enconda.grading.judges.base import JudgeRequest, JudgeStats, Verdict
from pytest_enconda.report.tables import coverage_note, notes


class AcceptAll:
    name = "accept-all"

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        return [Verdict(similar=True, confidence=1.0, reason="t") for _ in requests]

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name)


def _graded(case_id: str, types: list[str]) -> CaseResult:
    """A case whose agent found every golden error, description and fix."""
    errors = [GoldenError(error_type=t, error_description="d", golden_answer="f") for t in types]  # type: ignore[arg-type]
    predicted = [
        PredictedError(error_type=t, error_description="d", fix_suggestion="f") for t in types
    ]
    grade = grade_diagnosis(GoldenAnswer(errors=errors, level=len(types)), predicted, AcceptAll())
    return CaseResult(case_id=case_id, level=len(types), diagnosis=grade)


def _summary(results: list[CaseResult]) -> dict:
    return aggregate(results).to_summary_json(agent="a", model=None)


def test_a_missing_diagnosis_misses_every_golden_error_per_error_only() -> None:
    found = _graded("found", ["E4"])
    silent = CaseResult(
        case_id="silent", level=2, diagnosis_missing=True, golden_types=["E1", "E4"]
    )
    summary = _summary([found, silent])
    per_error, paper = summary["per_error"], summary["paper"]
    # per-error: 1 TP (found), 2 FN (silent's E1 and E4): P 1/1, R 1/3, F1 2/(2+0+2) = 0.5.
    assert (per_error["type_tp"], per_error["type_fp"], per_error["type_fn"]) == (1, 0, 2)
    assert per_error["type_recall"] == 1 / 3 and per_error["type_f1"] == 0.5
    # Descriptions and fixes: 1 accepted of 3 golden errors.
    assert per_error["golden_errors"] == 3
    assert per_error["description_acc"] == per_error["fix_acc"] == 1 / 3
    # paper: the silent case is not there at all (1 TP, nothing missed, accuracies 1.0).
    assert (paper["type_tp"], paper["type_fp"], paper["type_fn"]) == (1, 0, 0)
    assert paper["instances_with_errors"] == 1 and paper["description_acc"] == 1.0
    # Per type: E1's golden error counted and missed per-error, absent from paper's.
    e1 = summary["per_type"]["E1"]
    assert (e1["golden"], e1["tp"], e1["fn"], e1["paper"]["fn"]) == (1, 0, 1, 0)
    assert summary["diagnosed_cases"] == 1
    assert summary["diagnosis_coverage"] == {
        "cases": 2, "diagnosed": 1, "missing": 1, "ungraded": 0, "rate": 0.5,
    }  # fmt: skip
    assert "missing_diagnosis" in DEFINITIONS
    # By level too: level 2 holds only the silent case.
    level2 = summary["by_level"]["2"]
    assert level2["diagnosis_coverage"]["rate"] == 0.0 and level2["per_error"]["type_fn"] == 2
    assert level2["paper"]["type_f1"] is None


def test_an_agent_that_never_diagnoses_scores_zero_per_error() -> None:
    """Before: both silent cases were left out, so the table showed '-' under both definitions."""
    results = [
        CaseResult(case_id=f"c{i}", level=1, diagnosis_missing=True, golden_types=["E7"])
        for i in range(2)
    ]
    summary = _summary(results)
    assert summary["per_error"]["type_f1"] == 0.0 and summary["per_error"]["type_recall"] == 0.0
    assert summary["per_error"]["description_acc"] == 0.0
    assert summary["paper"]["type_f1"] is None  # the official evaluator has no file to score
    assert summary["diagnosis_coverage"]["rate"] == 0.0
    line = coverage_note(summary)
    assert line is not None and line.startswith(
        "diagnosis coverage: 0 of 2 cases with a readable diagnosis.json (0.0 %); 2 without one"
    )
    assert notes(summary)[0] == line


def test_an_ungraded_case_lowers_coverage_but_counts_in_neither_definition() -> None:
    """A harness or judge error left no grade: not the agent's, so no false negatives."""
    ungraded = CaseResult(case_id="u", level=1, diagnosis_ungraded=True)
    summary = _summary([_graded("found", ["E4"]), ungraded])
    assert summary["per_error"]["type_fn"] == 0 and summary["per_error"]["golden_errors"] == 1
    assert summary["diagnosis_coverage"] == {
        "cases": 2, "diagnosed": 1, "missing": 0, "ungraded": 1, "rate": 0.5,
    }  # fmt: skip
    assert "1 not graded" in (coverage_note(summary) or "")


def test_cases_of_other_kinds_are_not_in_the_coverage() -> None:
    research = CaseResult(case_id="r", level=0)  # no diagnosis items ran
    summary = _summary([_graded("found", ["E4"]), research])
    assert summary["cases"] == 2 and summary["diagnosis_coverage"]["cases"] == 1
    assert summary["diagnosis_coverage"]["rate"] == 1.0
    assert coverage_note(_summary([research])) is None
