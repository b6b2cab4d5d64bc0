"""The execution replay's budgets calibrated on the golden setup, measured on this machine in
this run (the fake backend runs the scripts for real, with real timeouts): a replay that runs
out of the case's budget is run again with ``max(budget x scale, 3 x the golden's time)``; only
a step out of that is a timeout, its own outcome in the records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.probing.execution import CALIBRATION_FACTOR, GoldenTiming
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

BUILD = "echo built > built.txt\n"


def _case(root: Path, golden: str, *, setup_seconds: int = 1) -> Case:
    case_dir = root / "bench" / "cases" / "slow"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "README.md").write_text("# slow\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 0, "errors": []}))
    (case_dir / "setup.sh").write_text(golden)
    (case_dir / "case.toml").write_text(
        'id = "slow"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        'golden_setup = "setup.sh"\ntest_command = "test -f built.txt"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
        f"[budgets]\nsetup_seconds = {setup_seconds}\ntest_seconds = 30\n"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])


def _pipeline(
    tmp_path: Path, backend: FakeBackend, script: str | None, *, scale: float = 1.0
) -> CasePipeline:
    """The oracle when ``script`` is None, else the replay agent answering ``script``."""
    options: dict = {}
    if script is not None:
        predictions = tmp_path / "predictions.jsonl"
        outcome = {"case_id": "slow", "agent": "recorded", "setup_script": script}
        predictions.write_text(json.dumps(outcome) + "\n")
        options = {"agent": "replay", "predictions": predictions}
    return CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run", budget_scale=scale, **options),
        progress=lambda _: None,
        backend=backend,
    )


def _execution_boxes(backend: FakeBackend) -> int:
    return sum(1 for c in backend.calls if c.op == "start" and c.detail["role"] == "execution")


@pytest.mark.parametrize(("scale", "outcome"), [(1.0, "failed"), (3.0, "passed")])
def test_budget_scale_stretches_the_execution_budgets(
    tmp_path: Path, scale: float, outcome: str
) -> None:
    """A script that needs 2 s against a 1 s budget, while the golden one is instant: the
    calibration cannot excuse it (3 x ~0 s), --budget-scale 3 does."""
    case = _case(tmp_path, BUILD)
    pipeline = _pipeline(
        tmp_path, FakeBackend(tmp_path / "fake"), "sleep 2 && " + BUILD, scale=scale
    )
    verdict = pipeline.verdict(case, "execution")
    assert verdict.outcome == outcome, verdict.message
    assert verdict.timed_out is (outcome == "failed")
    record = pipeline.execution_record(case)
    assert record.steps[0].budget == scale
    if outcome == "failed":
        assert verdict.label == "timeout" and verdict.message.startswith("TIMEOUT: setup step")
        assert record.calibration is not None and record.calibration.budgets["setup"] == 1.0
        assert record.calibration.golden_seconds["setup"] < 1.0


def test_a_slow_machine_stretches_the_budget_by_the_golden_setups_time(tmp_path: Path) -> None:
    """The golden setup itself needs 1.5 s here (a loaded machine) against a 1 s budget: an
    agent's equivalent script gets 3 x 1.5 s and passes; the golden's time is kept."""
    case = _case(tmp_path, "sleep 1.5\n" + BUILD)
    backend = FakeBackend(tmp_path / "fake")
    pipeline = _pipeline(tmp_path, backend, "# mine\nsleep 1.5\n" + BUILD)
    verdict = pipeline.verdict(case, "execution")
    assert verdict.outcome == "passed", verdict.message
    record = pipeline.execution_record(case)
    assert record.first_attempt is not None and record.first_attempt[0].timed_out
    assert record.first_attempt[0].budget == 1.0
    calibration = record.calibration
    assert calibration is not None and calibration.factor == CALIBRATION_FACTOR == 3.0
    golden = calibration.golden_seconds["setup"]
    assert golden >= 1.5
    assert record.steps[0].budget == pytest.approx(3.0 * golden, abs=0.01)
    assert verdict.numbers["calibration"]["budgets"]["setup"] == record.steps[0].budget
    # First attempt, golden, rerun: three boxes; the first attempt's log kept apart.
    assert _execution_boxes(backend) == 3
    # Every replay shares the base image's download cache (a warm rerun downloads nothing).
    keys = {c.detail["download_cache"] for c in backend.calls if c.op == "start"}
    assert keys == {"base:bookworm-py3.11"}
    paths = CaseDir(tmp_path / "run", "slow")
    assert paths.execution_log("setup.first-attempt").is_file()
    assert (paths.golden_dir / "setup.log").is_file()
    saved = GoldenTiming.model_validate_json(paths.golden_record.read_text())
    assert saved.seconds("setup") == golden
    # Measured once per case: a later process (--resume) reads it instead of measuring again.
    again = _pipeline(tmp_path, FakeBackend(tmp_path / "fake2"), None)
    assert again.golden_timing(case, {"setup": 3.0, "test": 90.0}) == saved


def test_a_script_too_slow_even_for_the_calibrated_budget_is_a_timeout(tmp_path: Path) -> None:
    case = _case(tmp_path, "sleep 1.1\n" + BUILD)
    pipeline = _pipeline(tmp_path, FakeBackend(tmp_path / "fake"), "sleep 6\n" + BUILD)
    verdict = pipeline.verdict(case, "execution")
    assert verdict.outcome == "failed" and verdict.timed_out, verdict.message
    record = pipeline.execution_record(case)
    assert record.steps[0].timed_out and 3.3 <= record.steps[0].budget < 6
    assert "the golden setup took 1 s here" in verdict.message


def test_the_golden_script_is_measured_and_replayed_at_once(tmp_path: Path) -> None:
    """The oracle on a machine where its own setup needs more than the case's budget: one
    execution box, budgets of 3 x its own time, passed (the README's main job on a loaded
    machine)."""
    case = _case(tmp_path, "sleep 1.5\n" + BUILD)
    backend = FakeBackend(tmp_path / "fake")
    pipeline = _pipeline(tmp_path, backend, None)
    verdict = pipeline.verdict(case, "execution")
    assert verdict.outcome == "passed", verdict.message
    assert _execution_boxes(backend) == 1
    record = pipeline.execution_record(case)
    assert record.first_attempt is None and record.calibration is not None
    assert record.steps[0].budget == pytest.approx(3.0 * record.steps[0].duration, abs=0.01)


def test_a_script_on_time_needs_no_calibration(tmp_path: Path) -> None:
    case = _case(tmp_path, "sleep 5\n" + BUILD)
    backend = FakeBackend(tmp_path / "fake")
    pipeline = _pipeline(tmp_path, backend, BUILD)
    assert pipeline.verdict(case, "execution").outcome == "passed"
    assert _execution_boxes(backend) == 1
    assert pipeline.execution_record(case).calibration is None
    assert not CaseDir(tmp_path / "run", "slow").golden_record.exists()


def test_a_golden_setup_out_of_its_ceiling_is_a_timeout_at_that_ceiling(tmp_path: Path) -> None:
    """The oracle's script needs more than 3 x its 1 s budget here: a timeout after 3 s, saying
    the golden setup itself ran out."""
    case = _case(tmp_path, "sleep 30\n" + BUILD)
    pipeline = _pipeline(tmp_path, FakeBackend(tmp_path / "fake"), None)
    verdict = pipeline.verdict(case, "execution")
    assert verdict.outcome == "failed" and verdict.timed_out
    assert verdict.message.startswith(
        "TIMEOUT: setup step timed out after 3 s (the golden setup itself ran out of 3 x"
    )
    assert pipeline.execution_record(case).steps[0].budget == 3.0
