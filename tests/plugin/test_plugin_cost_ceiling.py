"""The cost ceiling mid-run (issue 48 item 3), end to end on the fake backend with swe-agent and
the scripted model: the case in flight when ``--max-cost`` is reached and the case after it are
*not finished* (skipped, counted apart, never failed), the run exits 2 and says so, and
``--resume`` with a higher ceiling runs exactly those cases, giving an uncut run's results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casefactory import write_case
from scripted_llm import ScriptedServer, step_of, tool_call

pytest_plugins = ["pytester"]
pytest.importorskip("minisweagent")

WRITE_OUTPUTS = (
    "mkdir -p /enconda/output && printf 'touch ok\\n' > /enconda/output/setup.sh && "
    'printf \'[{"error_type": "E4"}]\' > /enconda/output/diagnosis.json'
)
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
# 300 + 40 tokens at $0.5 per million each: $0.00017 a call, two calls a case. The first case
# spends $0.00034, the second's first call brings it to $0.00051, and its second call (another
# $0.00017 reserved) would pass $0.0006: it is cut; the third case is not started.
CEILING = "0.0006"


def _solver(request: dict) -> tuple[int, dict]:
    command = WRITE_OUTPUTS if step_of(request) == 0 else SUBMIT
    return 200, tool_call(command, call_id=f"call_{step_of(request)}", prompt_tokens=300,
                          completion_tokens=40)  # fmt: skip


def _rows(run_dir: Path) -> dict[tuple[str, str], dict]:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    return {(row["case"], row["item"]): row for row in map(json.loads, lines)}


def _labels(run_dir: Path) -> dict[tuple[str, str], str]:
    return {
        key: "not_finished" if row.get("not_finished") else row["outcome"]
        for key, row in _rows(run_dir).items()
    }


def _run(pytester: pytest.Pytester, server: ScriptedServer, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "cases",
        *("--backend", "fake", "--agent", "swe-agent", "--model", "scripted"),
        *("--api-base", server.api_base, "--model-price", "0.5,0.5"),
        *("-k", "execution or error_types", *extra),
    )


@pytest.mark.slow
def test_a_ceiling_hit_mid_run_leaves_cases_not_finished_and_resume_runs_them(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    for case_id in ("a1", "b2", "c3"):
        write_case(pytester.path, case_id)
    llm_server.responder = _solver
    uncut_dir = pytester.path / "uncut"
    uncut = _run(pytester, llm_server, "--run-dir", str(uncut_dir), "--max-cost", "1")
    assert uncut.ret == 0, uncut.stdout.str()[-3000:]
    uncut_labels = _labels(uncut_dir)
    assert len(llm_server.requests) == 6

    llm_server.requests.clear()
    run_dir = pytester.path / "run"
    cut = _run(pytester, llm_server, "--run-dir", str(run_dir), "--max-cost", CEILING)
    output = cut.stdout.str() + cut.stderr.str()
    assert cut.ret == 2, output[-3000:]
    assert "the cost ceiling stopped the run short: 4 item(s) of 2 case(s) not finished" in output
    labels = _labels(run_dir)
    assert {key: value for key, value in labels.items() if key[0] == "a1"} == {
        key: value for key, value in uncut_labels.items() if key[0] == "a1"
    }
    stopped = {key: value for key, value in labels.items() if key[0] != "a1"}
    assert set(stopped.values()) == {"not_finished"} and len(stopped) == 4, labels
    rows = _rows(run_dir)
    assert (
        "cut after 1 model call(s): run-wide cost limit reached"
        in rows[("b2", "execution")]["message"]
    )
    assert "not finished (cost ceiling): not run:" in rows[("c3", "execution")]["message"]
    # No outcome was kept for the cut case: it is not the agent's result.
    assert not (run_dir / "cases" / "b2" / "agent" / "outcome.json").exists()
    assert len(llm_server.requests) == 3
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["items"]["execution"] == {"passed": 1, "not_finished": 2}, summary["items"]

    llm_server.requests.clear()
    resumed = _run(pytester, llm_server, "--resume", str(run_dir), "--max-cost", "1")
    assert resumed.ret == 0, resumed.stdout.str()[-3000:]
    # Exactly the two stopped cases ran again, each with its two calls.
    assert len(llm_server.requests) == 4
    assert _labels(run_dir) == uncut_labels
    # The bill counts every call: b2's cut attempt is in no outcome, yet was paid for.
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agent_usage"]["calls"] == 6
    spend = summary["run_spend"]
    assert spend["calls"] == 3 + 4 and spend["outside_outcomes"]["calls"] == 1, spend
    assert spend["cost_usd"] > summary["agent_usage"]["cost_usd"]
    assert (
        "1 of them" in resumed.stdout.str() and "in no case's agent outcome" in resumed.stdout.str()
    )


def test_a_not_finished_row_is_counted_apart_and_written_only_when_set() -> None:
    from pytest_enconda.records import ResultRow

    stopped = ResultRow(case="c", item="execution", outcome="skipped", not_finished=True)
    assert stopped.label == "not_finished"
    assert stopped.to_json()["not_finished"] is True
    plain = ResultRow(case="c", item="execution", outcome="skipped")
    assert plain.label == "skipped" and "not_finished" not in plain.to_json()
    # Only a skip can be one: a failed or passed item finished.
    assert ResultRow(case="c", item="x", outcome="failed", not_finished=True).label == "failed"
