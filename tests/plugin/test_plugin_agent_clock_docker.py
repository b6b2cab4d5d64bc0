"""On the real engine: the agent's clock is measured in a container of the case's task image
before the agent starts, and recorded in its outcome and the run's summary (issue 48 item 1)."""

from __future__ import annotations

import json
import subprocess

import pytest
from casefactory import write_case

from pytest_enconda.agents.clock import MAX_FACTOR, PROBE_CPU_SECONDS
from pytest_enconda.records import RunDir

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("base_image")]


@pytest.mark.slow
def test_the_clock_is_measured_in_a_container_and_recorded(pytester: pytest.Pytester) -> None:
    case_dir = write_case(pytester.path, "clocked")
    toml = case_dir / "case.toml"
    toml.write_text(toml.read_text().replace("[budgets]", "[budgets]\nagent_seconds = 120"))
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "command",
        "--agent-option",
        "command=echo $ENCONDA_TIMEOUT && echo 'touch ok' > /enconda/output/setup.sh",
        "--agent-option",
        "in_container=true",
        "--run-dir",
        str(run),
        "-k",
        "execution",
    )
    result.assert_outcomes(passed=1)
    outcome = json.loads((run / "cases" / "clocked" / "agent" / "outcome.json").read_text())
    measured = outcome["clock"]
    assert measured["method"] == "box", measured
    probe = measured["probe"]
    # The probe ran its CPU work (or was stopped at the cap's wall time) in the container.
    assert probe["cpu_seconds"] >= PROBE_CPU_SECONDS or measured["capped"]
    assert probe["wall_seconds"] >= probe["cpu_seconds"] * 0.99
    assert 1.0 <= measured["factor"] <= MAX_FACTOR
    assert measured["seconds"] == pytest.approx(120 * measured["factor"], abs=0.01)
    # The agent got the stretched budget.
    assert outcome["trajectory"][0]["output"].strip() == f"{measured['seconds']:g}"
    timing = json.loads((run / "summary.json").read_text())["timing"]["cases"]["clocked"]
    assert timing["clock_factor"] == measured["factor"]
    # The probe's container is gone with the run's others.
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={RunDir(run).run_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert left.stdout.split() == []
