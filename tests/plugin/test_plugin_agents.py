"""Agents chosen by name, including a third party's through the entry-point group."""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from casefactory import golden_error, write_case

pytest_plugins = ["pytester"]

THIRD_PARTY = """
from pytest_enconda.agents.base import AgentOutcome, PredictedError


class AlwaysE1:
    name = "always-e1"

    def __init__(self, verdict="E1", **_):
        self.verdict = verdict

    def run(self, task):
        return AgentOutcome(
            case_id=task.case.id,
            agent=self.name,
            diagnosis=[PredictedError(error_type=self.verdict, error_description="x")],
            setup_script="true\\n",
        )
"""


@pytest.mark.slow
def test_third_party_agent_from_an_entry_point(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = pytester.path / "site"
    (site / "always_e1-0.1.dist-info").mkdir(parents=True)
    (site / "always_e1.py").write_text(textwrap.dedent(THIRD_PARTY))
    (site / "always_e1-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: always-e1\nVersion: 0.1\n"
    )
    (site / "always_e1-0.1.dist-info" / "entry_points.txt").write_text(
        "[pytest_enconda.agents]\nalways-e1 = always_e1:AlwaysE1\n"
    )
    write_case(pytester.path, "one", errors=[golden_error("E1")])
    write_case(pytester.path, "two", errors=[golden_error("E4")])
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases", "-k", "error_types", "--agent", "always-e1", "--run-dir", str(run)
    )
    result.assert_outcomes(passed=1, failed=1)
    outcome = json.loads((run / "cases" / "two" / "agent" / "outcome.json").read_text())
    assert outcome["agent"] == "always-e1"
    # --agent-option reaches the agent's constructor.
    run = pytester.path / "run-option"
    result = pytester.runpytest_subprocess(
        "cases",
        "-k",
        "error_types",
        "--agent",
        "always-e1",
        "--agent-option",
        "verdict=E4",
        "--run-dir",
        str(run),
    )
    result.assert_outcomes(passed=1, failed=1)
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert {row["case"]: row["outcome"] for row in rows} == {"one": "failed", "two": "passed"}


def test_unknown_agent_lists_the_available_ones(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--agent", "nosuchagent")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "unknown agent 'nosuchagent'; available: command, heuristic, oracle, readme, replay, "
        "swe-agent, zero-shot"
    ) in result.stderr.str()
