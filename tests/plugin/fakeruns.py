"""Whole pytest runs (pytester, in a subprocess) on the fake backend: a ``conftest.py`` in the
run's folder makes every process of the run (xdist workers too) build its boxes with
``FakeBackend``, whose task-image builds take ``BUILD_SECONDS`` as a cold Docker build would.
For the harness's logic across processes (scheduling, records, summaries), not for Docker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from casefactory import write_case

CONFTEST = """
import os
import time
from pathlib import Path

import pytest_enconda.pipeline as pipeline
from pytest_enconda.backends.fake import FakeBackend

BUILD_SECONDS = {build_seconds}


class ColdBuilds(FakeBackend):
    def task_image(self, *args, **kwargs):
        time.sleep(BUILD_SECONDS)  # every image built cold
        return super().task_image(*args, **kwargs)


def _fake(settings, progress, run_id):
    return ColdBuilds(Path(settings.run_dir).parent / "fake" / run_id / str(os.getpid()))


pipeline.backend_for = _fake
"""


def fake_project(root: Path, *, build_seconds: float = 0.0) -> None:
    (root / "conftest.py").write_text(CONFTEST.format(build_seconds=build_seconds))


def timed_case(
    root: Path, case_id: str, golden: str, *, setup_seconds: int = 1, test: str = "test -f ok"
) -> Path:
    """A diagnosis case whose golden setup is ``golden`` and whose setup budget is short."""
    case_dir = write_case(root, case_id, setup=golden, test_command=test)
    toml = case_dir / "case.toml"
    toml.write_text(
        toml.read_text().replace("setup_seconds = 60", f"setup_seconds = {setup_seconds}")
    )
    return case_dir


def predictions(root: Path, answers: dict[str, str], name: str = "answers.jsonl") -> Path:
    """The replay agent's answers: a setup script per case (and the golden diagnosis type)."""
    path = root / name
    lines = []
    for case_id, script in answers.items():
        outcome: dict[str, Any] = {
            "case_id": case_id,
            "agent": "recorded",
            "setup_script": script,
            "diagnosis": [{"error_type": "E4", "error_description": "d", "fix_suggestion": "f"}],
        }
        lines.append(json.dumps(outcome))
    path.write_text("\n".join(lines) + "\n")
    return path
