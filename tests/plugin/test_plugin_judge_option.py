"""``--judge NAME[:ARG]`` runs a benchmark with any registered judge (issue 44): a toy one a
conftest.py registers, with its argument, and a usage error for a name nobody registered or an
argument the record refuses or needs."""

from __future__ import annotations

import json
import re

import pytest
from casefactory import golden_error, write_case

pytest_plugins = ["pytester"]

# A judge that needs a word and calls "similar" exactly the predictions that contain it: the
# verdicts show both that it graded the items and that ARG reached it.
TOY = """
from pytest_enconda.grading.judges import JUDGES, JudgeRecord
from pytest_enconda.grading.judges.base import JudgeStats, Verdict


class ToyJudge:
    def __init__(self, word):
        self.name = f"toy:{word}"
        self.word = word
        self.calls = 0

    def judge_many(self, requests):
        self.calls += len(requests)
        return [
            Verdict(similar=self.word in request.predicted, reason=f"looked for {self.word}")
            for request in requests
        ]

    def stats(self):
        return JudgeStats(name=self.name, calls=self.calls)


JUDGES.register(
    JudgeRecord(
        "toy",
        lambda word, options: ToyJudge(word),
        argument="required",
        usage="toy:<word>",
        description="similar when the prediction holds the word",
    )
)
"""

PREDICTION = {
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


def _setup(pytester: pytest.Pytester) -> list[str]:
    """The toy judge's conftest, one case and its recorded prediction; the run's arguments."""
    pytester.makeconftest(TOY)
    write_case(pytester.path, "judged", errors=[golden_error("E1", fix="pip install lhotse")])
    predictions = pytester.path / "predictions.jsonl"
    predictions.write_text(json.dumps(PREDICTION) + "\n")
    return [
        "cases",
        "-k",
        "descriptions or fixes",
        "--agent",
        "replay",
        "--predictions",
        str(predictions),
    ]


def test_a_conftest_judge_grades_with_its_argument(pytester: pytest.Pytester) -> None:
    args = _setup(pytester)
    run = pytester.path / "run"
    # A subprocess: the registration must not leak into this test process's registry.
    result = pytester.runpytest_subprocess(*args, "--judge", "toy:lhotse", "--run-dir", str(run))
    # Only the fix names lhotse: the toy judge's word decided both verdicts.
    result.assert_outcomes(passed=1, failed=1)
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert {row["item"]: row["outcome"] for row in rows} == {
        "descriptions": "failed",
        "fixes": "passed",
    }
    summary = json.loads((run / "summary.json").read_text())
    assert summary["judge"]["name"] == "toy:lhotse"
    assert summary["judge"]["calls"] == 2


def test_a_conftest_judge_without_its_needed_argument_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    args = _setup(pytester)
    result = pytester.runpytest_subprocess(*args, "--judge", "toy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--judge 'toy': expected toy:<word>" in result.stderr.str()
    # The conftest's judge is listed beside the built-ins for a name nobody registered.
    result = pytester.runpytest_subprocess(*args, "--judge", "toys:lhotse")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown judge 'toys'; available: llm, offline, offline-rules, toy" in (
        result.stderr.str()
    )


def test_an_unknown_judge_or_a_refused_argument_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    write_case(pytester.path, "good")
    result = pytester.runpytest("cases", "--judge", "gpt-judge:large")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # In process: other tests' judges may be registered here too, so only the built-ins are
    # looked for in the list.
    assert re.search(
        r"--judge 'gpt-judge:large': unknown judge 'gpt-judge'; available: .*llm, offline",
        result.stderr.str(),
    )
    result = pytester.runpytest("cases", "--judge", "offline-rules:strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "the offline-rules judge takes no argument" in result.stderr.str()
    # offline's argument is its embedder, checked before any case runs.
    result = pytester.runpytest("cases", "--judge", "offline:strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--judge offline:strict: --embedder 'strict': unknown embedder" in result.stderr.str()
    # Not a name at all: refused as the option is parsed, with the form it takes.
    result = pytester.runpytest("cases", "--judge", ":model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--judge: expected NAME or NAME:ARG of a registered judge" in result.stderr.str()
