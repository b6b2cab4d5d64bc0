"""The shipped case of issue 19's done-when, in Docker: ``mixlm-missing-einops``.

Its README makes a venv (``uv venv .venv``), activates it and installs ``requirements.txt``
(``uv pip install -r``), which omits ``einops``, imported by
``mixlm/model.py``. Followed literally (``--agent=readme``), C0 names exactly einops and C1 and C4
fail on it, graded in the venv the README made (not the image's python3); the oracle (the golden
setup) passes every stage that applies here (C2 and C3 need a GPU: skipped without one).

Real torch (PyPI's CUDA build), through the shared uv cache for both agents; each final state is
a ~5.5 GB snapshot. Minutes (20 for the oracle alone on this loaded 2-core machine): marked slow.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_enconda.probing.environment import host_gpu_count

CASE = "mixlm-missing-einops"
BENCH = Path(__file__).resolve().parents[2] / "benchmark_cases"
VENV_PYTHON = "/data/project/.venv/bin/python"


def _copy_case(root: Path) -> Path:
    shutil.copytree(BENCH / "repos" / "mixlm", root / "bench" / "repos" / "mixlm")
    shutil.copytree(BENCH / "research" / CASE, root / "bench" / "research" / CASE)
    return root / "bench"


def _stages(run: Path) -> dict[str, dict]:
    folder = run / "cases" / CASE / "pyramid"
    return {path.stem: json.loads(path.read_text()) for path in folder.glob("C*.json")}


def _assert_outcomes(result: pytest.RunResult, **expected: int) -> None:
    """``assert_outcomes``, failing with the run's errors first: CI shows a failure's first lines,
    and an item error's cause (a harness error) is otherwise far down the captured output."""
    try:
        result.assert_outcomes(**expected)
    except AssertionError as exc:
        lines = result.outlines
        start = next((i for i, line in enumerate(lines) if " ERRORS " in line), None)
        causes = [] if start is None else [line for line in lines[start:] if line.strip()][:15]
        pytest.fail("\n".join([*causes, str(exc)]))


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("base_image")
def test_readme_fails_on_the_missing_package_and_the_oracle_passes(
    pytester: pytest.Pytester,
) -> None:
    if host_gpu_count() >= 2:
        pytest.skip("checked here on CPU: with 2 GPUs C4 is NCCL, C2/C3 apply")
    bench = _copy_case(pytester.path)

    readme = pytester.path / "readme"
    result = pytester.runpytest(
        str(bench), "--agent", "readme", "--ddp-cpu", "--run-dir", str(readme)
    )
    _assert_outcomes(result, failed=4, skipped=2)  # C0 C1 C4 C5 failed; C2 C3 need a GPU
    stages = _stages(readme)
    missing = "No module named 'einops'"
    assert stages["C0"]["outcome"] == "failed"
    assert stages["C0"]["numbers"]["missing"] == ["einops"]
    assert stages["C0"]["numbers"]["missing_count"] == 1
    assert stages["C1"]["outcome"] == "failed" and missing in stages["C1"]["message"]
    assert stages["C4"]["outcome"] == "failed"
    assert stages["C4"]["message"].startswith(f"ModuleNotFoundError: {missing}")
    assert "[cpu-gloo: 2 CPU processes on gloo, no GPU]" in stages["C4"]["message"]
    for name in ("C0", "C1", "C4"):  # graded in the venv the README made and activated
        assert stages[name]["numbers"]["interpreter"] == VENV_PYTHON, stages[name]
    assert stages["C5"]["numbers"]["report_outcome"] == "missing"  # the README writes none

    oracle = pytester.path / "oracle"
    result = pytester.runpytest(str(bench), "--ddp-cpu", "--run-dir", str(oracle))
    _assert_outcomes(result, passed=4, skipped=2)
    stages = _stages(oracle)
    assert stages["C0"]["numbers"]["missing_count"] == 0
    assert all(stages[name]["numbers"]["interpreter"] == VENV_PYTHON for name in ("C0", "C1"))
    summary = json.loads((oracle / "summary.json").read_text())["pyramid"]
    assert (summary["C1"]["passed"], summary["C4"]["passed"], summary["C4"]["cpu_mode"]) == (
        1,
        1,
        1,
    )
    assert summary["C5"]["hallucinations"] == 0
