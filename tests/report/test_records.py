"""The run directory's records: the one results.jsonl reader/writer, the bounded readers of
run.json/summary.json/case.json, and the one efficiency rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda import records
from pytest_enconda.artifacts import ArtifactError
from pytest_enconda.efficiency import EFFICIENCY_KEYS, efficiency
from pytest_enconda.records import ResultRow, RunDir


def row(case: str, item: str, outcome: str = "passed", **extra: object) -> ResultRow:
    return ResultRow.model_validate({"case": case, "item": item, "outcome": outcome, **extra})


def test_results_round_trip_and_a_newer_duplicate_replaces_the_older(tmp_path: Path) -> None:
    results = RunDir(tmp_path).results_file
    results.append(row("a", "execution", "failed", level=1, duration=1.5, nodeid="n"))
    results.append(row("a", "C1", stage="C1"))
    results.append(row("a", "execution", "passed", level=1))
    read = results.read()
    assert read.problems == []
    assert list(read.rows) == [("a", "execution"), ("a", "C1")]
    assert read.rows[("a", "execution")].outcome == "passed"
    assert read.rows[("a", "C1")].stage == "C1"

    results.rewrite(read.rows.values())
    lines = [json.loads(line) for line in results.path.read_text().splitlines()]
    assert [line["item"] for line in lines] == ["execution", "C1"]
    # stage only on probe rows, as rows have always been written
    assert "stage" not in lines[0] and lines[1]["stage"] == "C1"


def test_unreadable_lines_are_reported_by_file_and_line_not_dropped_silently(
    tmp_path: Path,
) -> None:
    results = RunDir(tmp_path).results_file
    results.append(row("a", "x"))
    with results.path.open("a") as handle:
        handle.write("{not json\n")
        handle.write(json.dumps({"case": "b", "item": "y", "outcome": "maybe"}) + "\n")
        handle.write("\n")
    results.append(row("c", "z"))
    read = results.read()
    assert set(read.rows) == {("a", "x"), ("c", "z")}
    assert [problem.split(": ")[0] for problem in read.problems] == [
        f"{results.path}:2",
        f"{results.path}:3",
    ]
    assert "outcome" in read.problems[1]


def test_an_oversized_results_file_is_refused_with_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = RunDir(tmp_path).results_file
    results.append(row("a", "x"))
    monkeypatch.setattr(records, "MAX_RESULTS_BYTES", 10)
    read = results.read()
    assert read.rows == {}
    assert read.problems and "more than the 10" in read.problems[0]


def test_run_json_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.run_info.write_text(json.dumps({"settings": ["not", "a", "mapping"]}))
    with pytest.raises(ArtifactError, match=r"run\.json: not a valid RunInfo: settings"):
        records.read_run_info(run)
    run.run_info.write_text("{truncated")
    with pytest.raises(ArtifactError, match=r"run\.json: not JSON"):
        records.read_run_info(run)


def test_case_json_and_summary_json_are_validated(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    case = run.case("o/r/1")
    case.facts.parent.mkdir(parents=True)
    case.facts.write_text(json.dumps({"level": 1}))
    with pytest.raises(ArtifactError, match=r"case\.json: not a valid CaseFacts: case_id"):
        records.read_case_facts(case)
    run.summary_json.write_text(json.dumps({"cases": "three", "extra": {"kept": True}}))
    with pytest.raises(ArtifactError, match=r"summary\.json: not a valid RunSummary: cases"):
        records.read_summary(run)
    run.summary_json.write_text(json.dumps({"cases": 3, "extra": {"kept": True}}))
    assert records.read_summary(run) == {"cases": 3, "extra": {"kept": True}}


OUTCOME = {"wall_time": 2.0, "usage": {"total_tokens": 40, "cost_usd": 0.25}}


def test_time_to_ready_adds_the_replayed_setup_script() -> None:
    script = {"source": "setup-script", "setup_seconds": 3.5, "writable_bytes": 1000}
    assert efficiency(OUTCOME, state=script) == {
        "time_to_ready_s": 5.5,
        "tokens": 40,
        "cost_usd": 0.25,
        "env_size_bytes": 1000,
        "prefix_bytes": None,
    }
    # The agent's own container is its final state: nothing is replayed after it.
    container = {"source": "agent-container", "setup_seconds": 3.5, "writable_bytes": 7}
    assert efficiency(OUTCOME, state=container)["time_to_ready_s"] == 2.0
    # An execution case replays the script as the execution's setup step.
    execution = {"steps": [{"name": "setup", "duration": 1.25}, {"name": "test", "duration": 9}]}
    assert efficiency(OUTCOME, execution=execution)["time_to_ready_s"] == 3.25


def test_unknown_cost_is_none_and_facts_give_the_prefix() -> None:
    unpriced = {**OUTCOME, "usage": {"total_tokens": 1, "cost_usd": 0.1, "cost_unknown": True}}
    numbers = efficiency(unpriced, facts={"prefix_bytes": 123})
    assert (numbers["cost_usd"], numbers["prefix_bytes"]) == (None, 123)
    assert efficiency(None) == dict.fromkeys(EFFICIENCY_KEYS)


def test_a_case_efficiency_comes_from_its_records(tmp_path: Path) -> None:
    from pytest_enconda.report.runrecords import load_case

    case = RunDir(tmp_path).case("c")
    for path, value in (
        (case.agent_outcome, {"case_id": "c", "agent": "a", **OUTCOME}),
        (
            case.final_state,
            {"case_id": "c", "image": "i", "source": "setup-script", "setup_seconds": 1.0,
             "writable_bytes": 5},
        ),
        (case.pyramid("C0"), {"stage": "C0", "outcome": "passed", "numbers": {"prefix_bytes": 77}}),
    ):  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    assert load_case(tmp_path, "c").efficiency() == {
        "time_to_ready_s": 3.0,
        "tokens": 40,
        "cost_usd": 0.25,
        "env_size_bytes": 5,
        "prefix_bytes": 77,
    }
