"""A whole run on the fake backend under a simulated load: each case's agent clock, stretched by
the slowdown measured when its agent starts, is recorded in its outcome and shown where the
case's times are (summary.json's ``timing``, its efficiency means, report.html, tables.md), and
an agent that uses 80 % of its idle budget on the slow machine passes."""

from __future__ import annotations

import json

import pytest
from casefactory import write_case
from fakeruns import fake_project

pytest_plugins = ["pytester"]

# Every probe in the run's processes reports a machine 3 x slower than idle.
SLOW_MACHINE = """
from pytest_enconda.agents import clock

clock.probe_in_box = lambda *a, **k: clock.ClockProbe(wall_seconds=1.5, cpu_seconds=0.5)
"""


def test_a_loaded_run_records_and_shows_the_stretched_clock(pytester: pytest.Pytester) -> None:
    fake_project(pytester.path)
    with (pytester.path / "conftest.py").open("a") as handle:
        handle.write(SLOW_MACHINE)
    case_dir = write_case(pytester.path, "busy")
    toml = case_dir / "case.toml"
    toml.write_text(toml.read_text().replace("[budgets]", "[budgets]\nagent_seconds = 2"))
    # 80 % of the 2 s budget, three times as slow: 4.8 s, past the case's own 2 s.
    command = "sleep 4.8 && echo 'touch ok' > /enconda/output/setup.sh"
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "command",
        "--agent-option",
        f"command={command}",
        "--agent-option",
        "in_container=true",
        "--run-dir",
        str(run),
        "-k",
        "execution",
    )
    result.assert_outcomes(passed=1)
    outcome = json.loads((run / "cases" / "busy" / "agent" / "outcome.json").read_text())
    assert outcome["status"] == "completed"
    assert outcome["clock"]["factor"] == 3.0 and outcome["clock"]["seconds"] == 6.0
    summary = json.loads((run / "summary.json").read_text())
    case = summary["timing"]["cases"]["busy"]
    assert (case["agent_budget_seconds"], case["clock_factor"]) == (6.0, 3.0)
    assert case["agent_seconds"] >= 4.8
    assert summary["efficiency"]["clock_factor"] == {"mean": 3.0, "max": 3.0, "cases": 1}
    html = (run / "report.html").read_text()
    assert '<th class="sortable">Agent budget (s; x slowdown)</th>' in html
    assert '<td class="num" data-value="6.0">6 (x3.00)</td>' in html
    tables = (run / "tables.md").read_text()
    assert "agent clock stretched by (x; this machine's slowdown) | 3.00 (max 3.00) | 1" in tables
