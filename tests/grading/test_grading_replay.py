"""Replays of EnConda-Bench's own golden answers (../shared/data), graded with the offline judge.

The golden answers predicted as themselves must score 1.0 everywhere; perturbed answers on a
fixed sample must score what the counting in the comments says.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.bench.grading import (
    Instance,
    drop_last,
    expected_drop,
    expected_swap,
    golden_predictions,
    grade_all,
    load_instances,
    swap_pair,
)
from pytest_enconda.grading.aggregate import CaseResult, aggregate
from pytest_enconda.grading.judges.offline import OfflineJudge

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"

pytestmark = pytest.mark.shared_data

SAMPLE = (
    "error_gen_Lightning-AI_litgpt/Lightning-AI_litgpt_error_readme_1",  # E1 E2
    "error_gen_Lightning-AI_litgpt/Lightning-AI_litgpt_error_readme_1_only_E1",  # E1
    "error_gen_Lightning-AI_litgpt/Lightning-AI_litgpt_error_readme_2",  # (none)
    "error_gen_adbar_trafilatura/error_gen_adbar_trafilatura_error_readme_merge_k2",  # E4 E2 E2
    # E4 E6 E2 E4
    "error_gen_andrew-codechimp_HA-Battery-Notes/error_gen_andrew-codechimp_HA-Battery-Notes"
    "_error_readme_merge_k4",
)


@pytest.fixture(scope="module")
def instances() -> list[Instance]:
    if not (DATA / "instances").is_dir():
        pytest.skip(f"EnConda-Bench reference data not found at {DATA} (../shared/data)")
    loaded = load_instances(DATA)
    assert loaded.skipped == [], loaded.skipped[:3]
    return loaded.instances


@pytest.fixture(scope="module")
def sample(instances: list[Instance]) -> list[Instance]:
    by_id = {i.id: i for i in instances}
    missing = [s for s in SAMPLE if s not in by_id]
    if missing:
        pytest.skip(f"sample instances absent from the shared data: {missing}")
    chosen = [by_id[s] for s in SAMPLE]
    assert [i.golden.error_types for i in chosen] == [
        ["E1", "E2"],
        ["E1"],
        [],
        ["E4", "E2", "E2"],
        ["E4", "E6", "E2", "E4"],
    ]
    return chosen


def test_golden_replay_of_every_instance_scores_one(
    instances: list[Instance], record_property: pytest.RecordProperty
) -> None:
    readme_files = len(list((DATA / "instances").glob("*/*/README.json")))
    assert len(instances) == readme_files
    results = grade_all(
        instances, [golden_predictions(i.golden) for i in instances], OfflineJudge()
    )
    summary = aggregate(results).to_summary_json("golden", None)
    record_property("instances", len(instances))
    for definition in ("paper", "per_error"):
        for key in ("type_precision", "type_recall", "type_f1", "description_acc", "fix_acc"):
            assert summary[definition][key] == 1.0, (definition, key)
    not_passed = [
        (r.case_id, name, item.message)
        for r in results
        for name, item in (r.diagnosis.items.items() if r.diagnosis else [])
        if item.outcome != "passed"
    ]
    assert not_passed == []
    for level, block in summary["by_level"].items():
        if level != "0":
            assert block["per_error"]["type_f1"] == 1.0, level
    # Instances without errors are counted, not averaged in.
    assert summary["paper"]["instances_without_errors"] == sum(
        1 for i in instances if not i.golden.errors
    )


def _assert_cross_pairs_rejected(results: list[CaseResult]) -> None:
    """The hand computation assumes the judge rejects one error's text for another's."""
    for result in results:
        assert result.diagnosis is not None
        for pair in result.diagnosis.per_error.matched + result.diagnosis.paper.matched:
            if pair.golden_index != pair.predicted_index:
                assert pair.description_similar is False, (result.case_id, pair)
                assert pair.fix_similar is False, (result.case_id, pair)


def test_swapped_types_on_the_sample(sample: list[Instance]) -> None:
    predictions = [swap_pair(i.golden)[0] for i in sample]
    assert [[e.error_type for e in p] for p in predictions] == [
        ["E2", "E1"],
        ["E1"],
        [],
        ["E2", "E4", "E2"],
        ["E6", "E4", "E2", "E4"],
    ]
    results = grade_all(sample, predictions, OfflineJudge())
    _assert_cross_pairs_rejected(results)
    summary = aggregate(results).to_summary_json("swap", None)
    # Type multisets (hence sets) are unchanged: TP 2+1+0+2+3 = 8 (sets), 2+1+0+3+4 = 10.
    assert (summary["paper"]["type_tp"], summary["paper"]["type_fp"]) == (8, 0)
    assert summary["paper"]["type_f1"] == 1.0
    assert (summary["per_error"]["type_tp"], summary["per_error"]["type_fn"]) == (10, 0)
    assert summary["per_error"]["type_f1"] == 1.0
    # Accepted texts per instance (the two swapped predictions are rejected):
    #   E1 E2: 0 of 2; E1: 1 of 1; E4 E2 E2: 1 of 3; E4 E6 E2 E4: 2 of 4.
    # paper: mean of 0, 1, 1/3, 1/2 over the 4 instances with errors = 11/24.
    assert summary["paper"]["description_acc"] == pytest.approx(11 / 24)
    assert summary["paper"]["fix_acc"] == pytest.approx(11 / 24)
    # per-error: (0 + 1 + 1 + 2) / (2 + 1 + 3 + 4) = 4/10.
    assert summary["per_error"]["description_acc"] == pytest.approx(0.4)
    assert summary["per_error"]["fix_acc"] == pytest.approx(0.4)
    # The bench's formula agrees with the hand computation.
    expected = expected_swap([i.golden for i in sample])
    assert expected["description_acc_paper"] == pytest.approx(11 / 24)
    assert expected["description_acc_per_error"] == pytest.approx(0.4)
    items = {r.case_id: r.diagnosis.items for r in results if r.diagnosis}
    first = items[SAMPLE[0]]
    assert first["error_types"].outcome == "passed"
    assert first["descriptions"].outcome == "failed"
    assert first["descriptions"].message.startswith("0 of 2 golden descriptions accepted")


def test_dropped_errors_on_the_sample(sample: list[Instance]) -> None:
    predictions = [drop_last(i.golden) for i in sample]
    results = grade_all(sample, predictions, OfflineJudge())
    summary = aggregate(results).to_summary_json("drop", None)
    # paper sets: E1E2->E1: TP1 FN1; E1->none: FN1; E4E2E2->E4E2: TP2; E4E6E2E4->E4E6E2: TP3.
    # TP 6, FP 0, FN 2: P 1, R 6/8, F1 12/14.
    assert (summary["paper"]["type_tp"], summary["paper"]["type_fn"]) == (6, 2)
    assert summary["paper"]["type_precision"] == 1.0
    assert summary["paper"]["type_recall"] == pytest.approx(0.75)
    assert summary["paper"]["type_f1"] == pytest.approx(12 / 14)
    # per-error: every dropped error is a FN: TP 1+0+2+3 = 6, FN 4: R 0.6, F1 12/16.
    assert (summary["per_error"]["type_tp"], summary["per_error"]["type_fn"]) == (6, 4)
    assert summary["per_error"]["type_recall"] == pytest.approx(0.6)
    assert summary["per_error"]["type_f1"] == pytest.approx(0.75)
    # paper shares: 1 (1/1), 0 (nothing matched), 1, 1 -> 0.75: dropping is invisible to it
    # unless nothing is left.
    assert summary["paper"]["description_acc"] == pytest.approx(0.75)
    assert summary["paper"]["fix_acc"] == pytest.approx(0.75)
    # per-error: 6 accepted of 10 golden errors.
    assert summary["per_error"]["description_acc"] == pytest.approx(0.6)
    assert summary["per_error"]["fix_acc"] == pytest.approx(0.6)
    expected = expected_drop([i.golden for i in sample], every=1)
    assert expected["type_f1_paper"] == pytest.approx(summary["paper"]["type_f1"])
    assert expected["type_f1_per_error"] == pytest.approx(summary["per_error"]["type_f1"])
    assert expected["description_acc_paper"] == pytest.approx(0.75)
    assert expected["description_acc_per_error"] == pytest.approx(0.6)
