"""Item time limits (pytest-timeout) sit above every budget a case's steps can get, with
``--budget-scale`` and the execution replay's calibration on the golden setup (issue 48 item 2):
a budget ends a slow step, never pytest-timeout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.cases.loader import load_case
from pytest_enconda.items import BUILD_ALLOWANCE_SECONDS, case_timeout
from pytest_enconda.probing.execution import (
    CALIBRATION_FACTOR,
    GoldenTiming,
    StepRecord,
    calibrated_budgets,
    case_budgets,
)

CASES = Path(__file__).resolve().parents[2] / "benchmark_cases"
DIAGNOSIS = CASES / "diagnosis" / "confmerge-e1" / "case.toml"
RESEARCH = CASES / "research" / "minicnn" / "case.toml"
AEC = CASES / "aec" / "aec-python-pyunits" / "case.toml"


def _load(path: Path):
    return load_case(path, [CASES])


def _slowest_golden(ceilings: dict[str, float]) -> GoldenTiming:
    """A golden setup that used all of each calibration ceiling (the most it can take)."""
    steps = [
        StepRecord(name=name, command="", exit_code=0, duration=seconds, budget=seconds, log="")  # type: ignore[arg-type]
        for name, seconds in ceilings.items()
    ]
    return GoldenTiming(case_id="c", image="i", script_sha256="", steps=steps, measured_at=0)


@pytest.mark.parametrize("scale", [1.0, 6.0, 0.5])
def test_a_diagnosis_item_outlasts_the_worst_calibrated_replay(scale: float) -> None:
    case = _load(DIAGNOSIS)
    base = case_budgets(case, scale)
    ceilings = {name: CALIBRATION_FACTOR * budget for name, budget in base.items()}
    rerun = calibrated_budgets(base, _slowest_golden(ceilings))
    # The agent, the first replay, the golden measured, the replay again: one after the other.
    worst = case.spec.budgets.agent_seconds + sum(base.values())
    worst += sum(ceilings.values()) + sum(rerun.values())
    timeout = case_timeout(case, scale)
    assert timeout >= worst + BUILD_ALLOWANCE_SECONDS
    # 2,820 s before this change: --budget-scale 6 gave items less than one replay's budgets.
    assert case_timeout(case, 6.0) > 6 * (base["setup"] + base["test"]) / scale * 3


def test_research_and_aec_items_scale_with_their_budgets() -> None:
    for path in (RESEARCH, AEC):
        case = _load(path)
        one, six = case_timeout(case, 1.0), case_timeout(case, 6.0)
        budgets = case.spec.budgets
        assert six - one >= 5 * budgets.setup_seconds, path
        assert one >= budgets.agent_seconds + budgets.setup_seconds + BUILD_ALLOWANCE_SECONDS


# Each collected item's pytest-timeout, for the test to read.
COLLECTED = """
import json


def pytest_collection_finish(session):
    found = {item.nodeid: item.get_closest_marker("timeout").args[0] for item in session.items}
    (session.config.rootpath / "collected.json").write_text(json.dumps(found))
"""


def test_collected_items_carry_the_scaled_limit(pytester: pytest.Pytester) -> None:
    """``--budget-scale`` reaches the marker every item of the case carries."""
    pytester.makeconftest(COLLECTED)
    import shutil

    copy = pytester.path / "benchmark_cases"
    target = copy / "diagnosis" / "confmerge-e1"
    shutil.copytree(DIAGNOSIS.parent, target)
    shutil.copytree(CASES / "repos" / "confmerge", copy / "repos" / "confmerge", symlinks=True)
    found: dict[float, set[float]] = {}
    for scale in (1.0, 6.0):
        result = pytester.runpytest_subprocess(
            "benchmark_cases", "--co", "-q", f"--budget-scale={scale}"
        )
        assert result.ret == 0, result.stdout.str()
        timeouts = json.loads((pytester.path / "collected.json").read_text())
        assert timeouts, result.stdout.str()
        found[scale] = set(timeouts.values())
    case = load_case(target / "case.toml", [copy])
    assert found == {1.0: {case_timeout(case, 1.0)}, 6.0: {case_timeout(case, 6.0)}}
    assert case_timeout(case, 6.0) > case_timeout(case, 1.0)
