"""A step that ran out of its calibrated budget is a timeout: pytest counts it among its
failures, the records count it apart (terminal, summary.json, results.jsonl, results.csv,
report.html); a plain failure stays a failure. Fake backend (fakeruns.py)."""

from __future__ import annotations

import csv
import json

import pytest
from fakeruns import fake_project, predictions, timed_case

pytest_plugins = ["pytester"]

BUILD = "touch ok\n"


def test_a_timed_out_step_is_counted_apart_from_failures(pytester: pytest.Pytester) -> None:
    fake_project(pytester.path, build_seconds=1.0)
    timed_case(pytester.path, "slow", BUILD)
    timed_case(pytester.path, "broken", BUILD)
    timed_case(pytester.path, "fine", BUILD)
    answers = predictions(
        pytester.path, {"slow": "sleep 4\n" + BUILD, "broken": "exit 3\n", "fine": BUILD}
    )
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "-k",
        "execution",
        "--agent",
        "replay",
        "--predictions",
        str(answers),
        "--run-dir",
        str(run),
        "-p",
        "no:randomly",
    )
    result.assert_outcomes(passed=1, failed=2)
    text = result.stdout.str()
    assert "TIMEOUT: setup step timed out after 1 s" in text
    assert "timeouts: 1 item(s) ran out of their calibrated budget" in text

    rows = {
        json.loads(line)["case"]: json.loads(line)
        for line in (run / "results.jsonl").read_text().splitlines()
    }
    assert rows["slow"]["outcome"] == "failed" and rows["slow"]["timed_out"] is True
    assert rows["broken"]["outcome"] == "failed" and "timed_out" not in rows["broken"]

    summary = json.loads((run / "summary.json").read_text())
    assert summary["items"]["execution"] == {"passed": 1, "failed": 1, "timeout": 1}
    assert summary["timeouts"] == 1
    # Pass@1 still counts the timeout as not passed.
    assert summary["pass_at_1"] == pytest.approx(1 / 3)
    assert summary["execution"] == {"run": 3, "passed": 1, "trivial_run": 0, "trivial_passed": 0}

    with (run / "results.csv").open() as handle:
        csv_rows = {row["case"]: row for row in csv.DictReader(handle)}
    assert [csv_rows[c]["outcome"] for c in ("broken", "fine", "slow")] == [
        "failed",
        "passed",
        "timeout",
    ]
    html = (run / "report.html").read_text()
    assert "<th>Timeout</th>" in html
    assert '<td class="outcome timeout">timeout</td>' in html


def test_agent_time_and_harness_time_are_recorded_apart(pytester: pytest.Pytester) -> None:
    """A cold image build of 1 s is the harness's time; the agent's clock is its own."""
    fake_project(pytester.path, build_seconds=1.0)
    timed_case(pytester.path, "fine", BUILD, setup_seconds=30)
    answers = predictions(pytester.path, {"fine": BUILD})
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "-k",
        "execution",
        "--agent",
        "replay",
        "--predictions",
        str(answers),
        "--run-dir",
        str(run),
    )
    result.assert_outcomes(passed=1)
    timing = json.loads((run / "summary.json").read_text())["timing"]
    case = timing["cases"]["fine"]
    assert case["harness_seconds"] >= 1.0 and case["agent_seconds"] < 1.0
    assert case["item_seconds"] == pytest.approx(case["agent_seconds"] + case["harness_seconds"])
    assert timing["harness_seconds"] == case["harness_seconds"]
    with (run / "results.csv").open() as handle:
        row = next(csv.DictReader(handle))
    assert float(row["agent_seconds"]) == case["agent_seconds"]
    assert float(row["harness_seconds"]) == case["harness_seconds"]
    html = (run / "report.html").read_text()
    assert '<th class="sortable">Case harness time (s)</th>' in html
    assert f'data-value="{case["harness_seconds"]}"' in html


def test_a_stage_failed_by_an_unfinished_research_setup_is_a_timeout(
    pytester: pytest.Pytester,
) -> None:
    """A research setup past its budget: the stage probes that fail on what it left count as
    timeouts, not plain failures."""
    from casefactory import write_research_case

    fake_project(pytester.path)
    setup = "python3 -m venv --without-pip .venv\nsleep 30\n"
    write_research_case(pytester.path, "tiny", setup=setup, setup_seconds=1)
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess("cases", "-k", "C1", "--run-dir", str(run))
    result.assert_outcomes(failed=1)
    [row] = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert row["outcome"] == "failed" and row["timed_out"] is True, row
    summary = json.loads((run / "summary.json").read_text())
    assert summary["timeouts"] == 1
