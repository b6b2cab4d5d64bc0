"""The LLM judge through litellm against a real HTTP server on 127.0.0.1 with scripted answers.

The server speaks the OpenAI chat-completions protocol (what ``--judge-api-base`` points at),
counts the requests it receives and can answer 500, garbage or slowly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import VERDICT_NO, VERDICT_YES, ScriptedServer, completion

from pytest_enconda.agents.base import PredictedError
from pytest_enconda.cases.models import GoldenAnswer, GoldenError
from pytest_enconda.grading.diagnosis import grade_diagnosis
from pytest_enconda.grading.judges import create_judge
from pytest_enconda.grading.judges.base import JudgeRequest
from pytest_enconda.grading.judges.llm import LlmJudge, build_messages, parse_answer

pytest.importorskip("litellm", reason="the llm judge needs litellm (pip install '.[llm]')")


def make_judge(llm_server: ScriptedServer, cache: Path, **kwargs: Any) -> LlmJudge:
    options: dict[str, Any] = {"retries": 2, "backoff": 0.01, "timeout": 10}
    options.update(kwargs)
    return LlmJudge("judge-model", api_base=llm_server.api_base, cache_dir=cache, **options)


REQUEST = JudgeRequest(
    aspect="fix",
    golden="pip install lhotse",
    candidates=["pip install lhotse", "pip install lhotse-speech"],
    predicted="Use `pip install lhotse`.",
    context="error type E1",
)


def test_verdict_usage_and_request_shape(llm_server: ScriptedServer, tmp_path: Path) -> None:
    judge = make_judge(llm_server, tmp_path / "cache")
    [verdict] = judge.judge_many([REQUEST])
    assert verdict.similar is True
    assert verdict.confidence == 0.9
    assert verdict.reason == "same package and command"
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (120, 20)
    assert verdict.cached is False
    assert len(llm_server.requests) == 1
    assert llm_server.paths == ["/v1/chat/completions"]
    body = llm_server.requests[0]
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0
    assert body["messages"] == build_messages(REQUEST)
    prompt = body["messages"][1]["content"]
    assert "pip install lhotse-speech" in prompt  # the candidates are shown for a fix
    assert "Use `pip install lhotse`." in prompt
    stats = judge.stats()
    assert (stats.calls, stats.requests, stats.errors, stats.cache_hits) == (1, 1, 0, 0)
    assert (stats.prompt_tokens, stats.completion_tokens) == (120, 20)
    # A local model has no price: counted as unknown, not as free.
    assert stats.cost_unknown == 1
    assert verdict.cost_usd is None


def test_second_run_is_served_from_the_cache(llm_server: ScriptedServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = make_judge(llm_server, cache).judge_many([REQUEST])
    assert len(llm_server.requests) == 1
    again = make_judge(llm_server, cache)  # a new run: a new judge object, same cache folder
    second = again.judge_many([REQUEST])
    assert len(llm_server.requests) == 1, "the cached verdict must not be asked again"
    assert second[0].cached is True
    assert second[0].similar == first[0].similar
    assert second[0].reason == first[0].reason
    assert again.stats().cache_hits == 1
    assert again.stats().requests == 0
    files = list(cache.rglob("*.json"))
    assert len(files) == 1
    record = json.loads(files[0].read_text())
    assert record["model"] == "openai/judge-model"
    assert record["answer"]["similar"] is True


def test_cache_key_depends_on_model_and_prompt(llm_server: ScriptedServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    make_judge(llm_server, cache).judge_many([REQUEST])
    other_prompt = REQUEST.model_copy(update={"predicted": "pip install lhotse==1.0"})
    make_judge(llm_server, cache).judge_many([other_prompt])
    LlmJudge("other-model", api_base=llm_server.api_base, cache_dir=cache).judge_many([REQUEST])
    assert len(llm_server.requests) == 3


def test_retry_after_a_500(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.script = [(500, {"error": {"message": "overloaded"}})]
    judge = make_judge(llm_server, tmp_path / "cache")
    [verdict] = judge.judge_many([REQUEST])
    assert verdict.similar is True
    assert len(llm_server.requests) == 2
    stats = judge.stats()
    assert (stats.requests, stats.retries, stats.errors) == (2, 1, 0)


def test_persistent_failure_is_a_judge_error_after_all_retries(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.default = (503, {"error": {"message": "down"}})
    judge = make_judge(llm_server, tmp_path / "cache", retries=2)
    [verdict] = judge.judge_many([REQUEST])
    assert verdict.similar is None
    assert verdict.error is not None and "after 3 attempt(s)" in verdict.error
    assert len(llm_server.requests) == 3
    assert judge.stats().errors == 1
    assert list((tmp_path / "cache").rglob("*.json")) == []  # failures are not cached


def test_authentication_failure_is_not_retried(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.default = (401, {"error": {"message": "bad key"}})
    judge = make_judge(llm_server, tmp_path / "cache", retries=3)
    [verdict] = judge.judge_many([REQUEST])
    assert verdict.similar is None
    assert len(llm_server.requests) == 1


def test_garbage_answer_is_a_judge_error_not_a_no(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.default = (200, completion("I think they are probably the same thing."))
    judge = make_judge(llm_server, tmp_path / "cache")
    [verdict] = judge.judge_many([REQUEST])
    assert verdict.similar is None
    assert verdict.error is not None and "unparseable answer" in verdict.error
    assert verdict.reason.startswith("judge error: ")
    assert judge.stats().errors == 1
    assert len(llm_server.requests) == 1  # no retry: temperature 0 repeats itself
    judge.judge_many([REQUEST])
    assert len(llm_server.requests) == 2  # and not cached


def test_judge_error_makes_the_item_an_error(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.default = (200, completion("not json"))
    golden = GoldenAnswer(
        errors=[
            GoldenError(
                error_type="E1",
                error_description="The package name is wrong.",
                golden_answer="pip install lhotse",
            )
        ]
    )
    prediction = PredictedError(
        error_type="E1", error_description="Wrong name.", fix_suggestion="pip install lhotse"
    )
    grade = grade_diagnosis(golden, [prediction], make_judge(llm_server, tmp_path / "cache"))
    assert grade.items["descriptions"].outcome == "error"
    assert "unparseable answer" in grade.items["descriptions"].message
    assert grade.items["fixes"].outcome == "passed"  # identical text: no judge call
    assert grade.per_error.description_judge_errors == 1
    assert len(llm_server.requests) == 1


def test_concurrency_is_bounded(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.delay = 0.2
    judge = make_judge(llm_server, tmp_path / "cache", concurrency=2)
    requests = [
        REQUEST.model_copy(update={"predicted": f"pip install lhotse  # {i}"}) for i in range(6)
    ]
    verdicts = judge.judge_many(requests)
    assert [v.similar for v in verdicts] == [True] * 6
    assert len(llm_server.requests) == 6
    assert llm_server.max_in_flight <= 2


def test_verdicts_come_back_in_request_order(llm_server: ScriptedServer, tmp_path: Path) -> None:
    def answer(body: dict) -> tuple[int, Any]:
        yes = "lhotse-speech" not in body["messages"][1]["content"].split("Predicted fix:")[1]
        return 200, completion(VERDICT_YES if yes else VERDICT_NO)

    llm_server.responder = answer
    judge = make_judge(llm_server, tmp_path / "cache", concurrency=3)
    predicted = ["pip install lhotse", "pip install lhotse-speech"] * 3
    requests = [
        REQUEST.model_copy(update={"predicted": p + " " * i}) for i, p in enumerate(predicted)
    ]
    verdicts = judge.judge_many(requests)
    assert [v.similar for v in verdicts] == [True, False] * 3


def test_create_judge_builds_an_llm_judge_for_a_local_server(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    judge = create_judge(
        "llm:judge-model",
        api_base=llm_server.api_base,
        cache_dir=tmp_path,
        concurrency=1,
        retries=0,
    )
    assert judge.name == "llm:judge-model"
    assert judge.judge_many([REQUEST])[0].similar is True
    with pytest.raises(ValueError, match="expected llm:<model>"):
        create_judge("llm:")


def test_litellm_mock_response_without_a_server(tmp_path: Path) -> None:
    judge = LlmJudge(
        "gpt-4o-mini",
        cache_dir=tmp_path,
        completion_kwargs={"mock_response": VERDICT_NO},
    )
    [verdict] = judge.judge_many([REQUEST])
    assert verdict.similar is False
    assert verdict.reason == "different package"


@pytest.mark.parametrize(
    ("content", "similar"),
    [
        (VERDICT_YES, True),
        ("```json\n" + VERDICT_NO + "\n```", False),
        ("Here is my verdict: " + VERDICT_YES + " Hope it helps.", True),
        ('{"similar": "false", "confidence": 3, "reason": "x"}', False),
    ],
)
def test_parse_answer_accepts_the_usual_wrappings(content: str, similar: bool) -> None:
    answer = parse_answer(content)
    assert answer.similar is similar
    assert 0.0 <= answer.confidence <= 1.0


@pytest.mark.parametrize("content", ["yes", "", '{"confidence": 1}', '{"similar": "maybe"}'])
def test_parse_answer_rejects_what_is_not_a_verdict(content: str) -> None:
    with pytest.raises(ValueError):
        parse_answer(content)


def test_a_priced_judge_counts_in_the_runs_ledger(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    """--judge-price prices a local judge model; its calls are settled in the run's ledger
    (the one the agents' calls share), so --max-cost sees them."""
    from pytest_enconda.agents.llm import CostLedger

    ledger = CostLedger(tmp_path / "run", max_cost=1.0)
    judge = make_judge(llm_server, tmp_path / "cache", price=(1000.0, 2000.0), ledger=ledger)
    [verdict] = judge.judge_many([REQUEST])
    expected = (120 * 1000.0 + 20 * 2000.0) / 1e6
    assert verdict.cost_usd == pytest.approx(expected)
    state = ledger.state()
    assert state.spent_usd == pytest.approx(expected) and state.calls == 1
    assert state.reserved_usd == 0
    assert judge.stats().cost_unknown == 0


def test_a_judge_past_the_ceiling_stops_grading_instead_of_erring(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    """Once the run's spending reaches --max-cost, the judge sends nothing more and the grading
    is not run (RunStopped: its items are skipped as not run), never a judge error."""
    from pytest_enconda.agents.llm import CostLedger
    from pytest_enconda.errors import RunStopped

    ledger = CostLedger(tmp_path / "run", max_cost=0.1)
    judge = make_judge(llm_server, tmp_path / "cache", price=(1000.0, 2000.0), ledger=ledger)
    judge.judge_many([REQUEST])  # $0.16: over the ceiling
    other = REQUEST.model_copy(update={"predicted": "pip install lhotse==1.0"})
    with pytest.raises(RunStopped, match=r"run-wide cost limit reached.*llm judge"):
        grade_diagnosis(
            GoldenAnswer(
                level=1,
                errors=[
                    GoldenError(
                        error_type="E1",
                        error_description="the package name is wrong",
                        correction_candidates=["pip install lhotse", "pip install lhotse-x"],
                        golden_answer="pip install lhotse",
                    )
                ],
            ),
            [
                PredictedError(
                    error_type="E1", error_description="x", fix_suggestion=other.predicted
                )
            ],
            judge,
        )
    assert len(llm_server.requests) == 1


def test_a_local_judge_uses_the_providers_usual_key_variable(
    llm_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENCONDA_JUDGE_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-usual")
    assert make_judge(llm_server, tmp_path / "cache").api_key == "sk-usual"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert make_judge(llm_server, tmp_path / "cache").api_key == "no-key"


def test_an_unpriced_judge_under_a_ceiling_is_warned_about(tmp_path: Path) -> None:
    from pytest_enconda.pipeline import CasePipeline
    from pytest_enconda.settings import EncondaSettings

    def pipeline(**settings: Any) -> CasePipeline:
        return CasePipeline(
            EncondaSettings(run_dir=tmp_path / "run", judge="llm:local-judge", **settings),
            progress=lambda _: None,
        )

    warning = pipeline(max_cost=1.0).judge_pricing_warning()
    assert warning is not None and "--judge-price" in warning
    assert pipeline(max_cost=1.0, judge_price=(1.0, 2.0)).judge_pricing_warning() is None
    # --model-price prices the judge when it runs the agent's own model.
    same = pipeline(max_cost=1.0, model="local-judge", model_price=(1.0, 2.0))
    assert same.judge_price() == (1.0, 2.0) and same.judge_pricing_warning() is None
    assert pipeline(model="other", model_price=(1.0, 2.0)).judge_price() is None
