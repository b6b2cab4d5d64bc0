"""Type P/R/F1 with E1 and E2 as one type (issue 47 item 5), beside the official figure: the
share of the type score that the dataset's E1/E2 label noise can explain. Numbers by hand."""

from __future__ import annotations

from test_grading_missing_diagnosis import AcceptAll

from pytest_enconda.agents.base import PredictedError
from pytest_enconda.cases.models import GoldenAnswer, GoldenError
from pytest_enconda.grading.aggregate import DEFINITIONS, CaseResult, aggregate
from pytest_enconda.grading.diagnosis import grade_diagnosis
from pytest_enconda.report.tables import merged_note, render_markdown


def _case(case_id: str, golden: list[str], predicted: list[str]) -> CaseResult:
    errors = [GoldenError(error_type=t, error_description="d", golden_answer="f") for t in golden]  # type: ignore[arg-type]
    guesses = [
        PredictedError(error_type=t, error_description="d", fix_suggestion="f") for t in predicted
    ]
    grade = grade_diagnosis(GoldenAnswer(errors=errors, level=len(golden)), guesses, AcceptAll())
    return CaseResult(case_id=case_id, level=len(golden), diagnosis=grade)


def test_e1_for_e2_counts_as_found_only_in_the_merged_figure() -> None:
    results = [
        _case("swapped", ["E2"], ["E1"]),  # a misspelling labelled E2, called E1
        _case("two", ["E1", "E2", "E4"], ["E1", "E1", "E8"]),
        _case("right", ["E7"], ["E7"]),
    ]
    summary = aggregate(results).to_summary_json(agent="a", model=None)
    # Official per-error: swapped 0/1/1; two: E1 tp1 fp1, E2 fn1, E4 fn1, E8 fp1; right tp1.
    official = summary["per_error"]
    assert (official["type_tp"], official["type_fp"], official["type_fn"]) == (2, 3, 3)
    merged = summary["e1_e2_merged"]["per_error"]
    # Merged: swapped tp1; two: {E1,E2} golden 2 predicted 2 -> tp2, E4 fn1, E8 fp1; right tp1.
    assert (merged["type_tp"], merged["type_fp"], merged["type_fn"]) == (4, 1, 1)
    assert merged["type_f1"] == 8 / 10
    # Paper (type sets): swapped tp1; two: merged present both -> tp1, E4 fn, E8 fp; right tp1.
    paper = summary["e1_e2_merged"]["paper"]
    assert (paper["type_tp"], paper["type_fp"], paper["type_fn"]) == (3, 1, 1)
    official_paper = summary["paper"]
    # Official paper: swapped fp1 fn1; two: E1 tp1, E2 fn, E4 fn, E8 fp; right tp1.
    assert (official_paper["type_tp"], official_paper["type_fp"]) == (2, 2)
    assert "e1_e2_merged" in DEFINITIONS


def test_a_missing_diagnosis_misses_its_errors_in_the_merged_figure_too() -> None:
    silent = CaseResult(case_id="s", level=2, diagnosis_missing=True, golden_types=["E1", "E2"])
    summary = aggregate([silent, _case("r", ["E4"], ["E4"])]).to_summary_json("a", None)
    merged = summary["e1_e2_merged"]["per_error"]
    assert (merged["type_tp"], merged["type_fp"], merged["type_fn"]) == (1, 0, 2)
    assert summary["e1_e2_merged"]["paper"]["type_fn"] == 0  # paper leaves the case out


def test_the_summary_shows_it_beside_the_official_figure() -> None:
    summary = aggregate([_case("swapped", ["E2"], ["E1"])]).to_summary_json("a", None)
    summary["items"] = {"error_types": {}}
    note = merged_note(summary)
    assert note is not None
    assert "per-error P/R/F1 100.0/100.0/100.0 (official F1 0.0)" in note
    assert note in render_markdown(summary)
