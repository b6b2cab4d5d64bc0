"""``--judge llm:<model>`` through pytest, against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casefactory import golden_error, write_case
from scripted_llm import VERDICT_NO, VERDICT_YES, ScriptedServer, completion

pytest_plugins = ["pytester"]
pytest.importorskip("litellm", reason="the llm judge needs litellm (pip install '.[llm]')")


def _setup(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(pytester.path / "cache"))
    write_case(pytester.path, "judged", errors=[golden_error("E1", fix="pip install lhotse")])
    predictions = pytester.path / "predictions.jsonl"
    outcome = {
        "case_id": "judged",
        "agent": "recorded",
        "diagnosis": [
            {
                "error_type": "E1",
                "error_description": "the install step names a package that does not exist",
                "fix_suggestion": "Use `pip install lhotse` instead.",
            }
        ],
    }
    predictions.write_text(json.dumps(outcome) + "\n")
    return predictions


def _run(pytester: pytest.Pytester, llm_server: ScriptedServer, predictions: Path, run: str):
    return pytester.runpytest(
        "cases",
        "-k",
        "descriptions or fixes",
        "--agent",
        "replay",
        "--predictions",
        str(predictions),
        "--judge",
        "llm:openai/judge-model",
        "--judge-api-base",
        llm_server.api_base,
        "--run-dir",
        str(pytester.path / run),
    )


def test_llm_verdicts_grade_items_and_are_cached(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedServer
) -> None:
    predictions = _setup(pytester, monkeypatch)
    llm_server.default = (200, completion(VERDICT_YES))
    _run(pytester, llm_server, predictions, "first").assert_outcomes(passed=2)
    sent = len(llm_server.requests)
    assert sent == 2  # one description and one fix verdict
    assert all(request["temperature"] == 0 for request in llm_server.requests)
    summary = json.loads((pytester.path / "first" / "summary.json").read_text())
    assert summary["judge"]["name"] == "llm:openai/judge-model"
    assert summary["judge"]["calls"] == 2 and summary["judge"]["errors"] == 0
    assert summary["judge"]["prompt_tokens"] > 0

    llm_server.default = (200, completion(VERDICT_NO))  # would fail the items if it were asked
    _run(pytester, llm_server, predictions, "second").assert_outcomes(passed=2)
    assert len(llm_server.requests) == sent
    summary = json.loads((pytester.path / "second" / "summary.json").read_text())
    assert summary["judge"]["cache_hits"] == 2


def test_garbage_from_the_judge_is_an_error_not_a_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedServer
) -> None:
    predictions = _setup(pytester, monkeypatch)
    llm_server.default = (200, completion("I think they are kind of similar?"))
    result = _run(pytester, llm_server, predictions, "run")
    result.assert_outcomes(errors=2)
    assert "judge" in result.stdout.str().lower()
    summary = json.loads((pytester.path / "run" / "summary.json").read_text())
    assert summary["judge"]["errors"] == 2
