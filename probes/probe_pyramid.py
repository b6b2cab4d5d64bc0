"""The runtime pyramid's shipped probes: one test per registered stage, for every research case.

Each stage runs once per case in the harness (``enconda_stage`` asks the session for it), so
these functions only turn the stage's result into a pytest outcome. A user's own probe looks the
same, with ``enconda_env`` instead (see the README, "Writing a probe").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_enconda.errors import HarnessError
from pytest_enconda.stages import Stage, research_stages


def expect(result: Any) -> None:
    """Skipped, failed and error stages become skip, failure and error outcomes."""
    if result.outcome == "skipped":
        pytest.skip(result.message)
    if result.outcome == "error":
        raise HarnessError(f"{result.stage}: {result.message}")
    if result.outcome != "passed":
        pytest.fail(f"{result.stage}: {result.message}", pytrace=False)


def _probe(stage: Stage) -> Callable[[Any], None]:
    @pytest.mark.pyramid(stage.name)
    def probe(enconda_stage: Any) -> None:
        expect(enconda_stage)

    probe.__name__ = probe.__qualname__ = stage.probe
    probe.__doc__ = stage.description
    return probe


# One test per registered stage (built-ins C0..C5, then any a plugin or conftest.py added), under
# the stage's ``probe`` name: results and re-grading key on these names.
for _stage in research_stages():
    globals()[_stage.probe] = _probe(_stage)
