"""aggregate() over hand-made cases; every expected number is computed by hand in the comments."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import pytest

from pytest_enconda.agents.base import PredictedError
from pytest_enconda.cases.models import GoldenAnswer, GoldenError
from pytest_enconda.grading.aggregate import CaseResult, aggregate
from pytest_enconda.grading.diagnosis import grade_diagnosis
from pytest_enconda.grading.judges.base import JudgeRequest, JudgeStats, Verdict


class TableJudge:
    """Similar only for the (aspect, golden, predicted) keys in ``accept``; errors for ``fail``."""

    name = "table"

    def __init__(self, accept: set[tuple[str, str, str]] = frozenset(), fail=frozenset()) -> None:  # type: ignore[assignment]
        self.accept = set(accept)
        self.fail = set(fail)

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        out = []
        for r in requests:
            if r.key() in self.fail:
                out.append(Verdict.judge_error("scripted failure"))
            else:
                out.append(Verdict(similar=r.key() in self.accept, confidence=1.0, reason="t"))
        return out

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name)


def golden(*errors: tuple[str, str, str]) -> GoldenAnswer:
    return GoldenAnswer(
        errors=[
            GoldenError(error_type=t, error_description=d, golden_answer=f)  # type: ignore[arg-type]
            for t, d, f in errors
        ]
    )


def p(error_type: str, description: str, fix: str) -> PredictedError:
    return PredictedError(error_type=error_type, error_description=description, fix_suggestion=fix)


def case(
    case_id: str,
    g: GoldenAnswer,
    preds: list[PredictedError],
    judge: TableJudge | None = None,
    executed: bool | None = None,
) -> CaseResult:
    grade = grade_diagnosis(g, preds, judge or TableJudge())
    return CaseResult(
        case_id=case_id, level=len(g.errors), diagnosis=grade, execution_passed=executed
    )


@pytest.fixture
def three_cases() -> list[CaseResult]:
    # c1 (level 2): golden E1 a, E2 b; predicted E1 a (identical), E4 x.
    #   paper sets {E1,E2} vs {E1,E4}: TP 1, FP 1, FN 1; matched 1 pair, accepted -> share 1.
    #   per-error: TP 1, FP 1, FN 1; accepted 1 of 2.
    c1 = case(
        "c1",
        golden(("E1", "a", "fa"), ("E2", "b", "fb")),
        [p("E1", "a", "fa"), p("E4", "x", "fx")],
        executed=True,
    )
    # c2 (level 3): golden E1 c, E1 d, E6 e; predicted E1 c (identical), E1 y (rejected),
    #   E6 e (description identical, fix "wrong" rejected).
    #   paper sets {E1,E6} vs {E1,E6}: TP 2. Greedy: c->c, y->d (rejected), e->e.
    #     description share 2/3, fix share 1/3.
    #   per-error multisets equal: TP 3. Descriptions accepted 2, fixes accepted 1.
    c2 = case(
        "c2",
        golden(("E1", "c", "fc"), ("E1", "d", "fd"), ("E6", "e", "fe")),
        [p("E1", "c", "fc"), p("E1", "y", "fy"), p("E6", "e", "wrong")],
        executed=False,
    )
    # c3 (level 0): no errors, nothing predicted; execution not run.
    c3 = case("c3", GoldenAnswer(errors=[]), [])
    return [c1, c2, c3]


def test_paper_and_per_error_totals(three_cases: list[CaseResult]) -> None:
    summary = aggregate(three_cases).to_summary_json("agent-x", "model-y", JudgeStats(name="t"))
    paper, per = summary["paper"], summary["per_error"]
    # paper: TP 1+2 = 3, FP 1, FN 1 -> P 3/4, R 3/4, F1 3/4.
    assert (paper["type_tp"], paper["type_fp"], paper["type_fn"]) == (3, 1, 1)
    assert paper["type_precision"] == pytest.approx(0.75)
    assert paper["type_recall"] == pytest.approx(0.75)
    assert paper["type_f1"] == pytest.approx(0.75)
    # description: mean of c1 1.0 and c2 2/3 (c3 has no golden error: left out) = 5/6.
    assert paper["description_acc"] == pytest.approx(5 / 6)
    # fix: mean of c1 1.0 and c2 1/3 = 2/3.
    assert paper["fix_acc"] == pytest.approx(2 / 3)
    assert paper["instances_with_errors"] == 2
    assert paper["instances_without_errors"] == 1
    # per-error: TP 1+3 = 4, FP 1, FN 1 -> P 4/5, R 4/5, F1 4/5.
    assert (per["type_tp"], per["type_fp"], per["type_fn"]) == (4, 1, 1)
    assert per["type_f1"] == pytest.approx(0.8)
    # descriptions accepted 1 + 2 = 3 of 5 golden errors; fixes 1 + 1 = 2 of 5.
    assert per["description_acc"] == pytest.approx(3 / 5)
    assert per["fix_acc"] == pytest.approx(2 / 5)
    assert per["golden_errors"] == 5
    assert per["predicted_errors"] == 5
    # Pass@1: c1 passed, c2 failed, c3 not run -> 1/2.
    assert summary["pass_at_1"] == 0.5
    assert summary["execution"] == {"run": 2, "passed": 1, "trivial_run": 0, "trivial_passed": 0}
    assert summary["cases"] == 3
    assert (summary["agent"], summary["model"], summary["judge_name"]) == (
        "agent-x",
        "model-y",
        "t",
    )


def test_per_type_counts_and_scores(three_cases: list[CaseResult]) -> None:
    per_type = aggregate(three_cases).to_summary_json("a", None)["per_type"]
    assert set(per_type) == {"E1", "E2", "E4", "E6", "E7", "E8"}
    # E1: golden 1 + 2 = 3, predicted 1 + 2 = 3, TP 3 (multisets) -> 1.0.
    assert (per_type["E1"]["predicted"], per_type["E1"]["golden"]) == (3, 3)
    assert per_type["E1"]["f1"] == 1.0
    # E2: golden 1, predicted 0 -> recall 0, precision undefined, F1 0.
    assert (per_type["E2"]["predicted"], per_type["E2"]["golden"]) == (0, 1)
    assert per_type["E2"]["recall"] == 0.0
    assert per_type["E2"]["precision"] is None
    assert per_type["E2"]["f1"] == 0.0
    # E4: predicted 1, golden 0 -> precision 0.
    assert per_type["E4"]["precision"] == 0.0
    assert per_type["E4"]["paper"]["fp"] == 1
    # E7: never seen -> nothing computed.
    assert per_type["E7"]["f1"] is None
    assert (per_type["E7"]["predicted"], per_type["E7"]["golden"]) == (0, 0)


def test_by_level_blocks_equal_the_aggregate_of_that_level(
    three_cases: list[CaseResult],
) -> None:
    whole = aggregate(three_cases).to_summary_json("a", None)
    assert sorted(whole["by_level"]) == ["0", "2", "3"]
    for result in three_cases:
        alone = aggregate([result]).to_summary_json("a", None)
        level = whole["by_level"][str(result.level)]
        for key in ("paper", "per_error", "per_type", "pass_at_1", "cases"):
            assert level[key] == alone[key]
    # level 0 has nothing to compute: nulls, not zeros.
    zero = whole["by_level"]["0"]
    assert zero["paper"]["type_f1"] is None
    assert zero["paper"]["description_acc"] is None
    assert zero["per_error"]["description_acc"] is None
    assert zero["pass_at_1"] is None


def test_subset_aggregation_counts_only_the_subset(three_cases: list[CaseResult]) -> None:
    summary = aggregate(three_cases[1:2]).to_summary_json("a", None)
    assert summary["cases"] == 1
    assert summary["paper"]["description_acc"] == pytest.approx(2 / 3)
    assert summary["per_error"]["fix_acc"] == pytest.approx(1 / 3)
    assert summary["pass_at_1"] == 0.0


def test_judge_errors_are_counted_apart() -> None:
    g = golden(("E1", "a", "fa"), ("E2", "b", "fb"))
    judge = TableJudge(fail={("description", "a", "pa")}, accept={("description", "b", "pb")})
    # c1: description a fails to judge, b accepted; fixes identical.
    c1 = case("c1", g, [p("E1", "pa", "fa"), p("E2", "pb", "fb")], judge)
    # c2: the only matched description fails to judge -> no share for c2.
    c2 = case("c2", golden(("E1", "a", "fa")), [p("E1", "pa", "fa")], judge)
    summary = aggregate([c1, c2]).to_summary_json("a", None)
    # paper: c1 share 1/1 (the failed pair is left out); c2 left out -> mean 1.0 over 1 instance.
    assert summary["paper"]["description_acc"] == 1.0
    assert summary["paper"]["description_judge_error_instances"] == 1
    # per-error: accepted 1 of (3 golden - 2 judge errors) = 1/1.
    assert summary["per_error"]["description_judge_errors"] == 2
    assert summary["per_error"]["description_acc"] == 1.0
    assert summary["per_error"]["fix_acc"] == 1.0


def test_invalid_types_are_listed() -> None:
    c = case("c", golden(("E1", "a", "fa")), [p("E3", "a", "fa"), p("install", "a", "fa")])
    summary = aggregate([c]).to_summary_json("a", None)
    assert summary["invalid_types"] == {"E3": 1, "install": 1}
    assert summary["per_error"]["type_precision"] == 0.0


def test_summary_json_has_the_documented_keys_with_fractions(
    three_cases: list[CaseResult],
) -> None:
    judge = JudgeStats(name="offline", calls=7, cache_hits=2, errors=1)
    summary = aggregate(three_cases).to_summary_json("oracle", None, judge)
    text = json.dumps(summary)  # must serialise as-is
    again = json.loads(text)
    for key in (
        "paper.type_precision",
        "paper.type_recall",
        "paper.type_f1",
        "paper.description_acc",
        "paper.fix_acc",
        "per_error.type_precision",
        "per_error.type_recall",
        "per_error.type_f1",
        "per_error.description_acc",
        "per_error.fix_acc",
        "pass_at_1",
        "per_type.E1.precision",
        "per_type.E8.f1",
        "per_type.E4.predicted",
        "per_type.E4.golden",
        "by_level.2.paper.type_f1",
        "by_level.3.per_error.fix_acc",
        "judge.name",
        "judge.errors",
        "judge.calls",
        "judge.cache_hits",
        "cases",
        "agent",
        "model",
        "judge_name",
    ):
        node = again
        for part in key.split("."):
            assert part in node, f"summary.json lacks {key}"
            node = node[part]
        if isinstance(node, float):
            assert 0.0 <= node <= 1.0 and not math.isnan(node), key
    assert again["judge"] == {**judge.model_dump()}
    assert "paper" in again["definitions"] and "per_error" in again["definitions"]


def test_empty_run_aggregates_to_nulls() -> None:
    summary = aggregate([]).to_summary_json("a", None)
    assert summary["cases"] == 0
    assert summary["paper"]["type_f1"] is None
    assert summary["per_error"]["description_acc"] is None
    assert summary["pass_at_1"] is None
    assert summary["by_level"] == {}


def test_grading_modules_import_no_heavy_dependencies() -> None:
    """The plugin imports these at startup: scipy and litellm load only when used."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import pytest_enconda.grading.aggregate, pytest_enconda.grading.diagnosis\n"
        "import pytest_enconda.grading.judges, pytest_enconda.report.tables\n"
        "from pytest_enconda.grading.judges import create_judge\n"
        "create_judge('offline')\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "heavy = sorted(loaded & {'scipy', 'litellm', 'rich', 'docker'})\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
