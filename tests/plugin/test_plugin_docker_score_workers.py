"""On the real Docker engine: the same recorded answers give the same outcomes and score at
``-n 1`` and ``-n 2``, every task image built cold (each test's repositories hold content no
earlier run had), with the execution budgets calibrated on the golden setup measured here: a case
whose golden setup is slower than its 2 s budget passes through the calibration, a script too
slow even for that is a timeout, counted apart."""

from __future__ import annotations

import json
import uuid

import pytest
from fakeruns import predictions, timed_case

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("base_image")]

BUILD = "touch ok\n"
ANSWERS = {
    "fine": BUILD,
    "broken": "exit 3\n",
    "too-slow": "sleep 30\n" + BUILD,
    "slow-machine": "# mine\nsleep 3\n" + BUILD,
}
GOLDEN = {"slow-machine": "sleep 3\n" + BUILD}


def test_docker_score_is_the_same_at_one_and_two_workers(pytester: pytest.Pytester) -> None:
    fresh = uuid.uuid4().hex
    for case_id in ANSWERS:
        case_dir = timed_case(pytester.path, case_id, GOLDEN.get(case_id, BUILD), setup_seconds=2)
        (case_dir / "repo" / "fresh.txt").write_text(fresh)  # a new tree: a cold task image
    answers = predictions(pytester.path, ANSWERS)
    outcomes, scores = {}, {}
    for workers in ("1", "2"):
        run = pytester.path / f"run-{workers}"
        args = ["cases", "-k", "execution", "--agent", "replay", "--predictions", str(answers)]
        args += ["--run-dir", str(run)] + (["-n", workers] if workers != "1" else [])
        pytester.runpytest_subprocess(*args, timeout=900)
        summary = json.loads((run / "summary.json").read_text())
        scores[workers] = (summary["pass_at_1"], summary["items"], summary["timeouts"])
        outcomes[workers] = {
            row["case"]: (row["outcome"], row.get("timed_out", False))
            for row in map(json.loads, (run / "results.jsonl").read_text().splitlines())
        }
        record = json.loads((run / "cases/slow-machine/execution/record.json").read_text())
        assert record["calibration"]["golden_seconds"]["setup"] >= 3
        assert record["steps"][0]["budget"] >= 9 and record["first_attempt"][0]["timed_out"]
    assert (
        outcomes["1"]
        == outcomes["2"]
        == {
            "fine": ("passed", False),
            "broken": ("failed", False),
            "too-slow": ("failed", True),
            "slow-machine": ("passed", False),
        }
    )
    assert scores["1"] == scores["2"]
    assert scores["1"][1]["execution"] == {"passed": 2, "failed": 1, "timeout": 1}
