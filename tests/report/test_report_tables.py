"""The paper tables rendered from a summary made by aggregate() on hand-made cases."""

from __future__ import annotations

import json

import pytest

from pytest_enconda.agents.base import PredictedError
from pytest_enconda.cases.models import GoldenAnswer, GoldenError
from pytest_enconda.grading.aggregate import CaseResult, aggregate
from pytest_enconda.grading.diagnosis import grade_diagnosis
from pytest_enconda.grading.judges.base import JudgeStats
from pytest_enconda.grading.judges.offline import OfflineJudge
from pytest_enconda.report.tables import render_markdown, render_terminal


def golden(*types: str) -> GoldenAnswer:
    return GoldenAnswer(
        errors=[
            GoldenError(
                error_type=t,  # type: ignore[arg-type]
                error_description=f"description {i}",
                golden_answer=f"pip install package{i}",
            )
            for i, t in enumerate(types)
        ]
    )


def exact(g: GoldenAnswer) -> list[PredictedError]:
    return [
        PredictedError(
            error_type=e.error_type,
            error_description=e.error_description,
            fix_suggestion=e.golden_answer,
        )
        for e in g.errors
    ]


@pytest.fixture
def summary() -> dict:
    judge = OfflineJudge()
    g1, g2 = golden("E1", "E2"), golden("E4")
    # c1: both errors found exactly; c2: E4 predicted as E7 (the paper's type P = R = 2/3).
    c1 = CaseResult(
        case_id="c1",
        level=2,
        diagnosis=grade_diagnosis(g1, exact(g1), judge),
        execution_passed=True,
    )
    wrong = [PredictedError(error_type="E7", error_description="x", fix_suggestion="y")]
    c2 = CaseResult(
        case_id="c2", level=1, diagnosis=grade_diagnosis(g2, wrong, judge), execution_passed=False
    )
    stats = JudgeStats(
        name="llm:some-model",
        calls=10,
        cache_hits=4,
        errors=1,
        requests=7,
        retries=1,
        prompt_tokens=1000,
        completion_tokens=100,
        cost_usd=0.0123,
    )
    result = aggregate([c1, c2]).to_summary_json("oracle", "gpt-x", stats)
    # What the tables read is JSON: render from a round trip, as a later script would.
    return json.loads(json.dumps(result))


def test_markdown_has_the_main_row_per_definition(summary: dict) -> None:
    text = render_markdown(summary)
    # paper: sets {E1,E2},{E4} vs {E1,E2},{E7}: TP 2, FP 1, FN 1 -> 66.7; desc: (1 + 0)/2 = 50.0.
    assert "| oracle | gpt-x | paper | 66.7 | 66.7 | 66.7 | 50.0 | 50.0 | 50.0 |" in text
    # per-error: same counts; accepted 2 of 3 golden errors = 66.7.
    assert "| oracle | gpt-x | per-error | 66.7 | 66.7 | 66.7 | 66.7 | 66.7 | 50.0 |" in text
    assert text.startswith(
        "# EnConda-Bench diagnosis: agent oracle, model gpt-x, judge llm:some-model, 2 cases"
    )


def test_markdown_per_type_and_level_tables(summary: dict) -> None:
    text = render_markdown(summary)
    assert "| E1 | 1 | 1 | 100.0 | 100.0 | 100.0 | 100.0 |" in text
    assert "| E4 | 0 | 1 | - | 0.0 | 0.0 | 0.0 |" in text
    assert "| E7 | 1 | 0 | 0.0 | - | 0.0 | 0.0 |" in text
    assert "| E8 | 0 | 0 | - | - | - | - |" in text
    # level 1 (c2): all wrong; level 2 (c1): all right.
    assert "| 1 | 1 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |" in text
    assert "| 2 | 1 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 |" in text
    assert "| 1 | 1 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |" in text  # accuracy and Pass@1
    assert "| 2 | 1 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 |" in text


def test_markdown_judge_line_and_definitions(summary: dict) -> None:
    text = render_markdown(summary)
    assert (
        "judge llm:some-model, 10 verdicts, 4 from cache, 1 judge errors, 7 requests (1 retries), "
        "1000 prompt + 100 completion tokens, $0.0123"
    ) in text
    assert "- **paper**: EnConda-Bench's published definition" in text
    assert "- **per_error**: Stricter" in text
    assert "Pass@1 over 2 executed cases (1 passed)" in text


@pytest.mark.parametrize("width", [60, 100, 160])
def test_terminal_tables_fit_the_width_and_carry_the_numbers(summary: dict, width: int) -> None:
    text = render_terminal(summary, width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "\x1b[" not in text  # plain text unless color=True
    assert "Main table" in text
    assert "per-error" in text
    assert "66.7" in text
    assert "Per error type" in text and "E8" in text
    assert "Error types by level" in text
    assert "judge llm:some-model" in text.replace("\n", " ")


def test_terminal_main_table_rows_at_a_normal_width(summary: dict) -> None:
    rows = [line.split() for line in render_terminal(summary, 120).splitlines()]
    assert ["oracle", "gpt-x", "paper", "66.7", "66.7", "66.7", "50.0", "50.0", "50.0"] in rows
    assert ["oracle", "gpt-x", "per-error", "66.7", "66.7", "66.7", "66.7", "66.7", "50.0"] in rows


def test_color_output_has_ansi_codes(summary: dict) -> None:
    assert "\x1b[" in render_terminal(summary, 120, color=True)


def test_a_sparse_summary_renders_dashes() -> None:
    sparse = {"agent": "a", "cases": 0}
    text = render_markdown(sparse)
    assert "| a | - | paper | - | - | - | - | - | - |" in text
    assert "| E1 | 0 | 0 | - | - | - | - |" in text
    terminal = render_terminal(sparse, 80)
    assert "judge ?" in terminal
