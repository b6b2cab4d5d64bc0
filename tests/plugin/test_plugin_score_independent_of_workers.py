"""Done when: the same agent answers give the same score at ``-n 1``, ``-n 2`` and ``-n 4`` on a
loaded machine, with every image built cold, and the record shows agent and harness time apart.

Fake backend (fakeruns.py): every task image built cold in 2 s, one build at a time across the
run's processes (under ``-n 4`` a case waits for others' builds before its box is up), and a CPU
burner beside the runs. The agent is ``command`` in its box with a 6 s budget, answering each
case after a second: had its clock started before its box was ready (the issue's defect), the
waits under ``-n 4`` would eat that budget. The cases cover each outcome: passed, failed, a
timeout, a case whose golden setup is itself slower here than its budget (passed through the
calibration), and a wrong diagnosis."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fakeruns import command_answers, fake_project, timed_case

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow

BUILD = "touch ok\n"
ANSWERS = {
    "fine-a": (BUILD, "E4"),
    "fine-b": ("echo installing\n" + BUILD, "E4"),
    "broken": ("exit 3\n", "E4"),
    "too-slow": ("sleep 8\n" + BUILD, "E4"),
    # The golden setup needs 1.5 s against a 1 s budget: this machine is "slow".
    "slow-machine": ("# mine\nsleep 1.5\n" + BUILD, "E4"),
    "wrong-diagnosis": (BUILD, "E1"),
}
GOLDEN = {"slow-machine": "sleep 1.5\n" + BUILD, "too-slow": "sleep 0.2\n" + BUILD}


@pytest.fixture
def load() -> Iterator[None]:
    """One busy process beside the runs (the machine's other work loads it further)."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


def _score(summary: dict) -> dict:
    return {
        "pass_at_1": summary["pass_at_1"],
        "execution": summary["execution"],
        "items": summary["items"],
        "timeouts": summary["timeouts"],
        "paper": summary["paper"],
        "per_error": summary["per_error"],
    }


def test_the_score_does_not_depend_on_workers_or_load(
    pytester: pytest.Pytester, load: None
) -> None:
    fake_project(pytester.path, build_seconds=2.0)
    for case_id in ANSWERS:
        timed_case(pytester.path, case_id, GOLDEN.get(case_id, BUILD), agent_seconds=6)
    command = command_answers(pytester.path, ANSWERS)
    scores, outcomes, timings = {}, {}, {}
    for workers in ("1", "2", "4"):
        run = pytester.path / f"run-{workers}"
        args = [
            "cases",
            "--agent",
            "command",
            "--agent-option",
            f"command={command}",
            "--agent-option",
            "in_container=true",
            "--run-dir",
            str(run),
        ]
        if workers != "1":
            args += ["-n", workers]
        pytester.runpytest_subprocess(*args)
        summary = json.loads((run / "summary.json").read_text())
        scores[workers] = _score(summary)
        outcomes[workers] = {
            (row["case"], row["item"]): (row["outcome"], row.get("timed_out", False))
            for row in map(json.loads, (run / "results.jsonl").read_text().splitlines())
        }
        timings[workers] = summary["timing"]
    assert scores["1"] == scores["2"] == scores["4"]
    assert outcomes["1"] == outcomes["2"] == outcomes["4"]
    execution = {case: outcomes["1"][(case, "execution")] for case in ANSWERS}
    assert execution == {
        "fine-a": ("passed", False),
        "fine-b": ("passed", False),
        "broken": ("failed", False),
        "too-slow": ("failed", True),
        "slow-machine": ("passed", False),
        "wrong-diagnosis": ("passed", False),
    }
    assert outcomes["1"][("wrong-diagnosis", "error_types")] == ("failed", False)
    assert outcomes["1"][("fine-a", "error_types")] == ("passed", False)
    assert scores["1"]["items"]["execution"] == {"passed": 4, "failed": 1, "timeout": 1}
    for timing in timings.values():
        # Every image was built cold (2 s): the harness's time, never the agent's.
        for case in timing["cases"].values():
            assert case["harness_seconds"] >= 2.0 and 1.0 <= case["agent_seconds"] < 6.0
    # Under -n 4 some case waited for others' builds longer than its agent's whole budget.
    assert max(c["harness_seconds"] for c in timings["4"]["cases"].values()) > 6.0
