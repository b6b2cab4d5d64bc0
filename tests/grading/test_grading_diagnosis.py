"""grade_diagnosis on hand-made cases whose numbers are computed by hand in the comments.

``TableJudge`` is a real judge (it implements the protocol, as a third-party judge would) whose
verdicts are a table: the matching and counting logic is then checked against exact values.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_enconda.agents.base import PredictedError
from pytest_enconda.cases.models import GoldenAnswer, GoldenError
from pytest_enconda.grading.diagnosis import grade_diagnosis, normalise_type
from pytest_enconda.grading.judges.base import JudgeRequest, JudgeStats, Verdict
from pytest_enconda.grading.judges.offline import OfflineJudge


class TableJudge:
    """Verdicts from ``table[(aspect, golden, predicted)]``; anything else is "not similar"."""

    name = "table"

    def __init__(self, table: dict[tuple[str, str, str], Verdict] | None = None) -> None:
        self.table = table or {}
        self.batches: list[list[JudgeRequest]] = []

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        self.batches.append(list(requests))
        return [
            self.table.get(r.key(), Verdict(similar=False, confidence=0.9, reason="table: no"))
            for r in requests
        ]

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name, calls=sum(len(b) for b in self.batches))


def yes(confidence: float = 1.0) -> Verdict:
    return Verdict(similar=True, confidence=confidence, reason="table: yes")


def golden(*errors: tuple[str, str, str]) -> GoldenAnswer:
    return GoldenAnswer(
        errors=[
            GoldenError(
                error_type=t,  # type: ignore[arg-type]
                error_description=d,
                golden_answer=f,
                correction_candidates=[f, f + " --wrong"],
            )
            for t, d, f in errors
        ]
    )


def pred(error_type: str, description: str = "", fix: str = "") -> PredictedError:
    return PredictedError(error_type=error_type, error_description=description, fix_suggestion=fix)


def test_empty_prediction_on_an_instance_without_errors_passes_everything() -> None:
    grade = grade_diagnosis(GoldenAnswer(errors=[]), [], TableJudge())
    assert {name: item.outcome for name, item in grade.items.items()} == {
        "error_types": "passed",
        "descriptions": "passed",
        "fixes": "passed",
    }
    assert grade.items["error_types"].message == "no errors injected, none predicted"
    assert (grade.paper.tp, grade.paper.fp, grade.paper.fn) == (0, 0, 0)
    assert (grade.per_error.tp, grade.per_error.fp, grade.per_error.fn) == (0, 0, 0)
    # Nothing to average over: the instance is left out of the paper accuracies, not scored 0.
    assert grade.paper.description_acc is None
    assert grade.paper.fix_acc is None
    assert grade.judged == []


def test_predictions_on_an_instance_without_errors_are_false_positives() -> None:
    grade = grade_diagnosis(GoldenAnswer(errors=[]), [pred("E1", "x", "y")], TableJudge())
    assert grade.items["error_types"].outcome == "failed"
    assert grade.items["error_types"].message == "predicted E1 not in golden"
    assert (grade.paper.tp, grade.paper.fp, grade.paper.fn) == (0, 1, 0)
    assert (grade.per_error.tp, grade.per_error.fp, grade.per_error.fn) == (0, 1, 0)


def test_duplicate_golden_types_need_as_many_predictions_per_error_but_not_in_the_paper() -> None:
    g = golden(("E1", "d1", "f1"), ("E1", "d2", "f2"), ("E2", "d3", "f3"))
    p = [pred("E1", "d1", "f1"), pred("E2", "d3", "f3")]
    grade = grade_diagnosis(g, p, TableJudge())
    # paper: sets {E1, E2} vs {E1, E2}: TP 2, FP 0, FN 0.
    assert (grade.paper.tp, grade.paper.fp, grade.paper.fn) == (2, 0, 0)
    # per-error: E1 min(2, 1) = 1 TP and 1 FN; E2 1 TP.
    assert (grade.per_error.tp, grade.per_error.fp, grade.per_error.fn) == (2, 0, 1)
    assert grade.multiset_counts["E1"].model_dump() == {"tp": 1, "fp": 0, "fn": 1}
    # paper: both predictions matched and identical to their golden texts: share 2/2.
    assert grade.paper.description_acc == 1.0
    assert grade.paper.fix_acc == 1.0
    # per-error: 2 accepted of 3 golden errors.
    assert grade.per_error.description_accepted == 2
    assert grade.per_error.fix_accepted == 2
    assert grade.items["error_types"].outcome == "failed"
    assert grade.items["error_types"].message == "E1: predicted 1 of 2"
    assert grade.items["descriptions"].outcome == "failed"
    assert (
        "golden E1 'd2': no E1 prediction left to match it" in grade.items["descriptions"].message
    )


def test_duplicate_predicted_types_are_false_positives_per_error_only() -> None:
    g = golden(("E1", "d1", "f1"), ("E2", "d2", "f2"))
    p = [pred("E1", "d1", "f1"), pred("E1", "x", "y"), pred("E1", "z", "w"), pred("E2", "d2", "f2")]
    grade = grade_diagnosis(g, p, TableJudge())
    assert (grade.paper.tp, grade.paper.fp, grade.paper.fn) == (2, 0, 0)
    # E1: 3 predicted, 1 golden -> TP 1, FP 2; E2: TP 1.
    assert (grade.per_error.tp, grade.per_error.fp, grade.per_error.fn) == (2, 2, 0)
    assert grade.items["error_types"].message == "E1: predicted 3, golden has 1"
    # The optimal assignment picks the identical E1 prediction among the three.
    assert grade.per_error.description_accepted == 2
    assert grade.items["descriptions"].outcome == "passed"


def test_one_prediction_accepted_for_two_golden_errors_matches_only_one() -> None:
    g = golden(("E1", "desc A", "fix A"), ("E1", "desc B", "fix B"))
    table = {
        ("description", "desc A", "generic"): yes(0.8),
        ("description", "desc B", "generic"): yes(0.8),
        ("fix", "fix A", "generic fix"): yes(0.8),
        ("fix", "fix B", "generic fix"): yes(0.8),
    }
    grade = grade_diagnosis(g, [pred("E1", "generic", "generic fix")], TableJudge(table))
    # paper: type sets {E1} vs {E1}; the prediction takes the first golden (equal scores).
    assert (grade.paper.tp, grade.paper.fp, grade.paper.fn) == (1, 0, 0)
    assert [(m.golden_index, m.predicted_index) for m in grade.paper.matched] == [(0, 0)]
    # ... and the one matched pair is accepted: share 1/1, although B was never described.
    assert grade.paper.description_acc == 1.0
    # per-error: one-to-one, so 1 of 2 golden errors accepted; TP 1, FN 1.
    assert (grade.per_error.tp, grade.per_error.fp, grade.per_error.fn) == (1, 0, 1)
    assert grade.per_error.description_accepted == 1
    assert grade.items["descriptions"].outcome == "failed"
    assert grade.items["descriptions"].message.startswith("1 of 2 golden descriptions accepted")


def test_greedy_paper_match_loses_a_pair_the_optimal_assignment_keeps() -> None:
    g = golden(("E1", "A", "fa"), ("E1", "B", "fb"))
    table = {
        # p0 fits A (confidence 0.6) and B (0.9); p1 fits only B.
        ("description", "A", "p0"): yes(0.6),
        ("description", "B", "p0"): yes(0.9),
        ("description", "B", "p1"): yes(0.9),
        ("fix", "fa", "q0"): yes(0.6),
        ("fix", "fb", "q0"): yes(0.9),
        ("fix", "fb", "q1"): yes(0.9),
    }
    grade = grade_diagnosis(g, [pred("E1", "p0", "q0"), pred("E1", "p1", "q1")], TableJudge(table))
    # Greedy, in prediction order: p0 scores 0.6+0.3*0.9+0.1*0.9 = 0.96 on B > 0.84 on A, takes
    # B; p1 is left with A, same type (0.6 > 0.5) but rejected: share 1/2.
    assert [(m.golden_index, m.predicted_index) for m in grade.paper.matched] == [(1, 0), (0, 1)]
    assert grade.paper.description_acc == 0.5
    assert grade.paper.fix_acc == 0.5
    # Optimal: p0 -> A, p1 -> B, both accepted.
    assert [(m.golden_index, m.predicted_index) for m in grade.per_error.matched] == [
        (0, 0),
        (1, 1),
    ]
    assert grade.per_error.description_accepted == 2
    assert grade.items["descriptions"].outcome == "passed"


def test_a_prediction_of_another_type_never_matches() -> None:
    g = golden(("E4", "path wrong", "docs/a.md"))
    grade = grade_diagnosis(g, [pred("E2", "path wrong", "docs/a.md")], TableJudge())
    assert grade.judged == []  # different types are not even judged
    assert grade.paper.matched == []
    assert grade.paper.description_acc == 0.0  # golden errors but nothing matched: 0
    assert grade.items["error_types"].message == "missed E4; predicted E2 not in golden"
    assert "no E4 prediction left to match it" in grade.items["fixes"].message


def test_judge_error_is_an_error_outcome_and_left_out_of_accuracies() -> None:
    g = golden(("E1", "A", "fa"), ("E2", "B", "fb"))
    table = {
        ("description", "A", "pa"): Verdict.judge_error("HTTP 500 after 4 attempts"),
        ("fix", "fa", "qa"): yes(),
        ("description", "B", "pb"): yes(),
        ("fix", "fb", "qb"): yes(),
    }
    grade = grade_diagnosis(g, [pred("E1", "pa", "qa"), pred("E2", "pb", "qb")], TableJudge(table))
    item = grade.items["descriptions"]
    assert item.outcome == "error"
    assert "1 judge error(s)" in item.message
    assert "judge error: HTTP 500 after 4 attempts" in item.message
    assert item.numbers["judge_errors"] == 1
    # paper: 2 matched pairs, 1 with a verdict, accepted: share 1/1 (not 1/2).
    assert grade.paper.description_judged == 1
    assert grade.paper.description_acc == 1.0
    # per-error: 1 accepted, 1 judge error, out of 2 golden errors.
    assert grade.per_error.description_accepted == 1
    assert grade.per_error.description_judge_errors == 1
    # The fixes did not depend on the failed verdict.
    assert grade.items["fixes"].outcome == "passed"


def test_judge_error_on_every_matched_pair_leaves_the_paper_share_undefined() -> None:
    g = golden(("E1", "A", "fa"))
    table = {("description", "A", "pa"): Verdict.judge_error("timeout")}
    grade = grade_diagnosis(g, [pred("E1", "pa", "fa")], TableJudge(table))
    assert grade.paper.description_acc is None
    assert grade.paper.fix_acc == 1.0  # identical fix: no judge call
    assert grade.items["descriptions"].outcome == "error"


@pytest.mark.parametrize(
    ("raw", "graded", "problem"),
    [
        ("E1", "E1", None),
        (" e4 ", "E4", "error type ' e4 ' read as E4"),
        ("E7: version compatibility", "E7", "error type 'E7: version compatibility' read as E7"),
        ("E3", "E3", "unknown error type 'E3'"),
        ("dependency", "dependency", "unknown error type 'dependency'"),
    ],
)
def test_normalise_type(raw: str, graded: str, problem: str | None) -> None:
    result, message = normalise_type(raw)
    assert result == graded
    if problem is None:
        assert message is None
    else:
        assert message is not None and message.startswith(problem)


def test_unknown_types_are_graded_as_wrong_and_recorded() -> None:
    g = golden(("E1", "A", "fa"))
    grade = grade_diagnosis(g, [pred("E3", "A", "fa"), pred("dependency", "A", "fa")], TableJudge())
    assert grade.invalid_types == ["E3", "dependency"]
    assert (grade.paper.tp, grade.paper.fp, grade.paper.fn) == (0, 2, 1)
    assert (grade.per_error.tp, grade.per_error.fp, grade.per_error.fn) == (0, 2, 1)
    assert any("unknown error type 'E3'" in p for p in grade.problems)
    message = grade.items["error_types"].message
    assert "predicted 'E3': not an error type" in message
    assert "missed E1" in message


def test_each_pair_is_judged_once_in_one_batch() -> None:
    g = golden(("E1", "A", "fa"), ("E1", "B", "fb"))
    # Two predictions with the same texts: 2 golden x 1 distinct text x 2 aspects = 4 requests.
    judge = TableJudge()
    grade_diagnosis(g, [pred("E1", "x", "y"), pred("E1", "x", "y")], judge)
    assert len(judge.batches) == 1
    keys = [r.key() for r in judge.batches[0]]
    assert sorted(keys) == sorted(
        [
            ("description", "A", "x"),
            ("description", "B", "x"),
            ("fix", "fa", "y"),
            ("fix", "fb", "y"),
        ]
    )
    # The fix request carries what helps an LLM judge.
    fix_request = next(r for r in judge.batches[0] if r.aspect == "fix" and r.golden == "fa")
    assert fix_request.candidates == ["fa", "fa --wrong"]
    assert "error: A" in fix_request.context


def test_empty_and_identical_texts_need_no_judge() -> None:
    g = golden(("E1", "A", "fa"))
    judge = TableJudge()
    grade = grade_diagnosis(g, [pred("E1", "A", "")], judge)
    assert judge.batches == []
    pair = grade.judged[0]
    assert pair.description.similar is True
    assert pair.fix.similar is False
    assert pair.fix.reason == "the prediction has no fix"
    assert grade.items["fixes"].outcome == "failed"


def test_failure_message_names_golden_prediction_and_the_judges_reason() -> None:
    g = golden(("E1", "The package name is wrong.", "pip install foo"))
    p = [pred("E1", "The package name is wrong.", "pip install bar")]
    grade = grade_diagnosis(g, p, OfflineJudge())
    item = grade.items["fixes"]
    assert item.outcome == "failed"
    assert item.message == (
        "0 of 1 golden fixes accepted\n"
        "golden E1 'pip install foo' matched prediction #0 'pip install bar': "
        "offline-rules judge: different package name: golden 'foo' vs predicted 'bar'"
    )
    assert item.numbers["pairs"] == [
        {
            "golden": 0,
            "predicted": 0,
            "type": "E1",
            "similar": False,
            "reason": "different package name: golden 'foo' vs predicted 'bar'",
        }
    ]
    assert grade.items["descriptions"].outcome == "passed"


def test_item_numbers_are_json_ready() -> None:
    import json

    g = golden(("E1", "A", "fa"), ("E2", "B", "fb"))
    grade = grade_diagnosis(g, [pred("E1", "A", "fa")], TableJudge())
    for item in grade.items.values():
        json.dumps(item.numbers)
    numbers = grade.items["error_types"].numbers
    assert numbers["paper_type_fn"] == 1
    assert numbers["per_error_type_tp"] == 1
    assert numbers["type_counts"]["E2"]["multiset"] == {"tp": 0, "fp": 0, "fn": 1}
    # The whole grade round-trips through JSON (the run directory keeps it).
    again = type(grade).model_validate_json(grade.model_dump_json())
    assert again == grade


class BrokenJudge:
    name = "broken"

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        raise ConnectionError("judge backend unreachable")

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name)


def test_a_judge_that_raises_gives_judge_errors_not_failures() -> None:
    g = golden(("E1", "A", "fa"))
    grade = grade_diagnosis(g, [pred("E1", "pa", "qa")], BrokenJudge())
    assert grade.items["error_types"].outcome == "passed"
    for name in ("descriptions", "fixes"):
        item = grade.items[name]
        assert item.outcome == "error"
        assert "judge 'broken' raised ConnectionError: judge backend unreachable" in item.message
    assert grade.per_error.description_judge_errors == 1
    assert grade.paper.description_acc is None


def test_a_runaway_diagnosis_is_judged_only_up_to_the_limit() -> None:
    """20,000 predictions once meant golden x 20,000 judge requests and gigabytes of memory."""
    from pytest_enconda.grading.diagnosis import MAX_JUDGED_PREDICTIONS

    gold = golden(*[("E4", f"path {n} is wrong", f"cd dir{n}") for n in range(100)])
    predicted = [pred("E4", f"guess {n}", f"cd guess{n}") for n in range(20_000)]
    judge = TableJudge()
    grade = grade_diagnosis(gold, predicted, judge)
    requests = sum(len(batch) for batch in judge.batches)
    assert requests <= 2 * 100 * MAX_JUDGED_PREDICTIONS
    assert grade.per_error.fp == 20_000 - 100  # every prediction still counts for the types
    assert any("only the first 200 are matched and judged" in p for p in grade.problems)
