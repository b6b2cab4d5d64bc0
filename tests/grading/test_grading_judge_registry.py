"""Judges are registry records (issue 44): built-ins, a conftest's record and an entry point's
factory all go through ``create_judge``'s one lookup, with the same error messages."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from pytest_enconda.grading.judges import (
    JUDGES,
    JudgeOptions,
    JudgeRecord,
    JudgeRequest,
    JudgeStats,
    Verdict,
    create_judge,
)
from pytest_enconda.grading.judges import _from_entry_point as from_entry_point


class EchoJudge:
    """Says "similar" when the prediction contains its argument; keeps what it was made with."""

    def __init__(self, word: str | None, **options: Any) -> None:
        self.name = f"echo:{word}"
        self.word = word or ""
        self.options = options

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        return [Verdict(similar=self.word in request.predicted) for request in requests]

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name)


# Module attributes, so real ``EntryPoint`` objects can load them by "module:attr".
def echo_factory(arg: str | None, **options: Any) -> EchoJudge:
    return EchoJudge(arg, **options)


def not_a_judge_factory(arg: str | None, **options: Any) -> object:
    return object()


@pytest.fixture
def registered() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        JUDGES.unregister(name)


def _register(names: list[str], record: JudgeRecord) -> None:
    JUDGES.register(record)
    names.append(record.name)


REQUEST = JudgeRequest(aspect="description", golden="g", predicted="pip install foo")


def test_builtins_are_records_with_their_argument_rules() -> None:
    offline, rules, llm = JUDGES.get("offline"), JUDGES.get("offline-rules"), JUDGES.get("llm")
    assert (offline.argument, rules.argument, llm.argument) == ("optional", "none", "required")
    assert create_judge("offline-rules").name == "offline-rules"
    with pytest.raises(ValueError, match=r"--judge 'llm': expected llm:<model>, e\.g\."):
        create_judge("llm")
    with pytest.raises(ValueError, match="the offline-rules judge takes no argument"):
        create_judge("offline-rules:strict")
    with pytest.raises(ValueError, match=r"--judge offline:strict: .*unknown embedder 'strict'"):
        create_judge("offline:strict")
    with pytest.raises(ValueError, match=r"unknown judge 'nosuch'; available: .*llm, offline"):
        create_judge("nosuch:x")


def test_a_registered_record_is_made_with_its_argument_and_the_options(
    registered: list[str],
) -> None:
    def make(arg: str | None, options: JudgeOptions) -> EchoJudge:
        return EchoJudge(arg, concurrency=options.concurrency, price=options.price)

    _register(registered, JudgeRecord("echo", make, argument="required", usage="echo:<word>"))
    judge = create_judge("echo:foo", concurrency=2, price=(1.0, 2.0))
    assert isinstance(judge, EchoJudge)
    assert judge.options == {"concurrency": 2, "price": (1.0, 2.0)}
    assert [verdict.similar for verdict in judge.judge_many([REQUEST])] == [True]
    with pytest.raises(ValueError, match=r"--judge 'echo': expected echo:<word>"):
        create_judge("echo")


def test_an_entry_point_factory_gets_its_argument_and_the_entry_point_options(
    registered: list[str],
) -> None:
    point = EntryPoint("echo-ep", f"{__name__}:echo_factory", "pytest_enconda.judges")
    _register(registered, from_entry_point(point))
    judge = create_judge("echo-ep:bar", api_base="http://x", retries=1, ledger=object())
    assert isinstance(judge, EchoJudge) and judge.word == "bar"
    # The options entry-point factories were always called with: no price, no ledger.
    assert judge.options == {
        "api_base": "http://x",
        "cache_dir": None,
        "concurrency": 4,
        "timeout": 60,
        "retries": 1,
    }
    optional = create_judge("echo-ep")
    assert isinstance(optional, EchoJudge) and optional.word == ""  # the argument is optional

    wrong = EntryPoint("wrong-ep", f"{__name__}:not_a_judge_factory", "pytest_enconda.judges")
    _register(registered, from_entry_point(wrong))
    with pytest.raises(ValueError) as raised:
        create_judge("wrong-ep")
    assert str(raised.value) == (
        f"--judge 'wrong-ep': entry point {__name__}:not_a_judge_factory did not return a "
        "judge (needs name, judge_many(requests) and stats())"
    )


def test_an_entry_point_stays_unloaded_until_its_judge_is_made(registered: list[str]) -> None:
    point = EntryPoint("absent-ep", "no_such_module_anywhere:factory", "pytest_enconda.judges")
    _register(registered, from_entry_point(point))
    assert "absent-ep" in JUDGES  # listing it imported nothing
    with pytest.raises(ModuleNotFoundError):
        create_judge("absent-ep")
