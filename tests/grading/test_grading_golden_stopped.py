"""A replay that ran out of its calibrated budget when the golden setup was itself stopped at its
limit: the message says the golden run was stopped at that limit, not that it "took" that long
(issue 48 item 8). The fake backend runs the scripts for real, with real timeouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.grading.execution import grade_execution
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.probing.execution import Calibration, ExecutionRecord, StepRecord
from pytest_enconda.settings import EncondaSettings

BUILD = "echo built > built.txt\n"


def _case(root: Path, golden: str) -> Case:
    case_dir = root / "bench" / "cases" / "slow"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "README.md").write_text("# slow\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 0, "errors": []}))
    (case_dir / "setup.sh").write_text(golden)
    (case_dir / "case.toml").write_text(
        'id = "slow"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        'golden_setup = "setup.sh"\ntest_command = "test -f built.txt"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
        "[budgets]\nsetup_seconds = 1\ntest_seconds = 30\n"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])


def _replay(tmp_path: Path, script: str) -> CasePipeline:
    predictions = tmp_path / "predictions.jsonl"
    outcome = {"case_id": "slow", "agent": "recorded", "setup_script": script}
    predictions.write_text(json.dumps(outcome) + "\n")
    settings = EncondaSettings(run_dir=tmp_path / "run", agent="replay", predictions=predictions)
    return CasePipeline(settings, progress=lambda _: None, backend=FakeBackend(tmp_path / "fake"))


@pytest.mark.slow  # ~15-25 s: the real sleeps up to the budgets
def test_a_golden_setup_stopped_at_its_limit_is_said_so(tmp_path: Path) -> None:
    """The golden setup needs 30 s against a 1 s budget: measured, it is stopped at its ceiling
    (3 s); the agent's script (40 s) is stopped too, and its message names that limit."""
    case = _case(tmp_path, "sleep 30\n" + BUILD)
    pipeline = _replay(tmp_path, "sleep 40\n" + BUILD)
    verdict = pipeline.verdict(case, "execution")
    assert verdict.outcome == "failed" and verdict.timed_out, verdict.message
    calibration = pipeline.execution_record(case).calibration
    assert calibration is not None and calibration.golden_stopped == {"setup": 3.0}
    first_line = verdict.message.splitlines()[0]
    assert "the golden setup was itself stopped at its limit of 3 s here" in first_line
    assert "the golden setup took" not in verdict.message


def _record(calibration: Calibration) -> ExecutionRecord:
    step = StepRecord(
        name="setup", command="bash setup.sh", exit_code=124, duration=9.0, budget=9.0,
        timed_out=True, log="setup.log", output_tail="Terminated",
    )  # fmt: skip
    return ExecutionRecord(case_id="c", image="i", steps=[step], calibration=calibration)


def test_the_message_reads_the_saved_record_alone() -> None:
    """Grading is a function of the saved record: a golden run that finished says its time, one
    stopped at its limit says the limit; a record saved before the field reads as before."""
    base = {"case_budgets": {"setup": 1.0}, "budgets": {"setup": 9.0}}
    finished = Calibration(golden_seconds={"setup": 2.4}, **base)  # type: ignore[arg-type]
    stopped = Calibration(
        golden_seconds={"setup": 3.01},
        golden_stopped={"setup": 3.0},
        **base,  # type: ignore[arg-type]
    )
    said = grade_execution(_record(finished)).message.splitlines()[0]
    assert "(the golden setup took 2 s here; budget max(1 s, 3 x that))" in said
    said = grade_execution(_record(stopped)).message.splitlines()[0]
    assert "(the golden setup was itself stopped at its limit of 3 s here;" in said
    old = stopped.model_dump(mode="json")
    del old["golden_stopped"]
    assert Calibration.model_validate(old).golden_stopped == {}
