"""The runtime pyramid's shipped probes: one test per stage, collected for every research case.

Each stage runs once per case in the harness (``enconda_stage`` asks the session for it), so
these functions only turn the stage's result into a pytest outcome. A user's own probe looks the
same, with ``enconda_env`` instead (see the README, "Writing a probe").
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_enconda.errors import HarnessError


def expect(result: Any) -> None:
    """Skipped, failed and error stages become skip, failure and error outcomes."""
    if result.outcome == "skipped":
        pytest.skip(result.message)
    if result.outcome == "error":
        raise HarnessError(f"{result.stage}: {result.message}")
    if result.outcome != "passed":
        pytest.fail(f"{result.stage}: {result.message}", pytrace=False)


@pytest.mark.pyramid("C0")
def test_c0_imports_resolve(enconda_stage: Any) -> None:
    """Every import in the repository resolves in the agent's interpreter (pyright)."""
    expect(enconda_stage)


@pytest.mark.pyramid("C1")
def test_c1_entry_point_on_cpu(enconda_stage: Any) -> None:
    """The case's entry point runs one step with GPUs hidden."""
    expect(enconda_stage)


@pytest.mark.pyramid("C2")
def test_c2_gpu_visible(enconda_stage: Any) -> None:
    """The framework sees a GPU in the agent's interpreter."""
    expect(enconda_stage)


@pytest.mark.pyramid("C3")
def test_c3_entry_point_on_one_gpu(enconda_stage: Any) -> None:
    """The case's entry point runs one step on GPU 0."""
    expect(enconda_stage)


@pytest.mark.pyramid("C4")
def test_c4_distributed_run(enconda_stage: Any) -> None:
    """torchrun over the visible GPUs (or 2 CPU processes on gloo with --ddp-cpu)."""
    expect(enconda_stage)


@pytest.mark.pyramid("C5")
def test_c5_report_matches_reality(enconda_stage: Any) -> None:
    """The agent's self-report claims nothing the probes contradict."""
    expect(enconda_stage)
