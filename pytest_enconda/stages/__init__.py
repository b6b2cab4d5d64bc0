"""The runtime pyramid's stages, one module each, in the registry ``STAGES``.

A stage is one module defining a ``Stage`` and one registration: ``STAGES.register(STAGE)``
here for the built-ins, the ``pytest_enconda.stages`` entry-point group or a ``conftest.py``
for anyone else (README: "Adding a stage or an aspect").
"""

from __future__ import annotations

from . import c0, c1, c2, c3, c4, c5
from .base import STAGES, Stage, StageContext

__all__ = ["STAGES", "Stage", "StageContext", "research_stages"]

for _module in (c0, c1, c2, c3, c4, c5):
    STAGES.register(_module.STAGE)


def research_stages() -> list[Stage]:
    """The stages a research case runs as probes, in registration order."""
    return [stage for stage in STAGES.values() if stage.task_kind == "research"]
