"""``aggregate_subset``: the same aggregation over the case results whose ids are in the subset."""

from __future__ import annotations

from pytest_enconda.grading.aggregate import CaseResult, aggregate, aggregate_subset

RESULTS = [
    CaseResult(case_id="a", level=1, execution_passed=True),
    CaseResult(case_id="b", level=1, execution_passed=False),
    CaseResult(case_id="c", level=2, execution_passed=False),
    CaseResult(case_id="d", level=2, execution_passed=None),  # not run, or a harness error
]


def test_only_the_subsets_cases_count_and_ids_outside_the_run_are_ignored() -> None:
    subset = aggregate_subset(RESULTS, {"a", "c", "d", "not-in-run"})
    assert subset.overall.cases == 3
    assert (subset.overall.executed, subset.overall.execution_passed) == (2, 1)
    assert subset.overall.pass_at_1 == 0.5
    assert sorted(subset.by_level) == [1, 2]
    assert subset.by_level[1].cases == 1
    full = aggregate(RESULTS)
    assert full.overall.pass_at_1 == 1 / 3


def test_it_equals_aggregate_over_the_filtered_results_and_leaves_them_unchanged() -> None:
    before = [result.model_copy() for result in RESULTS]
    subset = aggregate_subset(RESULTS, ["b", "c"])
    assert subset == aggregate([RESULTS[1], RESULTS[2]])
    assert before == RESULTS
    assert aggregate_subset(RESULTS, []).overall.cases == 0
    assert aggregate_subset(RESULTS, []).overall.pass_at_1 is None
