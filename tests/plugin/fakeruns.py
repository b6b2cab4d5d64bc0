"""Whole pytest runs (pytester, in a subprocess) on the fake backend: a ``conftest.py`` in the
run's folder makes every process of the run (xdist workers too) build its boxes with
``FakeBackend``, whose task-image builds take ``BUILD_SECONDS`` as a cold Docker build would,
one at a time across the run's processes (one engine builds, the others wait: under ``-n 4`` a
case's box is ready seconds after it asked). For the harness's logic across processes
(scheduling, budgets, records, summaries), not for Docker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from casefactory import write_case

CONFTEST = """
import fcntl
import os
import time
from pathlib import Path

import pytest_enconda.pipeline as pipeline
from pytest_enconda.backends.fake import FakeBackend

BUILD_SECONDS = {build_seconds}


class ColdBuilds(FakeBackend):
    lock: Path

    def task_image(self, *args, **kwargs):
        with self.lock.open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # one build at a time, as on one engine
            time.sleep(BUILD_SECONDS)  # every image built cold
            return super().task_image(*args, **kwargs)


def _fake(settings, progress, run_id):
    backend = ColdBuilds(Path(settings.run_dir).parent / "fake" / run_id / str(os.getpid()))
    backend.lock = Path(settings.run_dir).parent / "build.lock"
    return backend


pipeline.backend_for = _fake
"""


def fake_project(root: Path, *, build_seconds: float = 0.0) -> None:
    (root / "conftest.py").write_text(CONFTEST.format(build_seconds=build_seconds))


def timed_case(
    root: Path,
    case_id: str,
    golden: str,
    *,
    setup_seconds: int = 1,
    agent_seconds: int = 1800,
    test: str = "test -f ok",
) -> Path:
    """A diagnosis case whose golden setup is ``golden`` and whose setup budget is short."""
    case_dir = write_case(root, case_id, setup=golden, test_command=test)
    toml = case_dir / "case.toml"
    toml.write_text(
        toml.read_text().replace(
            "setup_seconds = 60",
            f"setup_seconds = {setup_seconds}\nagent_seconds = {agent_seconds}",
        )
    )
    return case_dir


def command_answers(root: Path, answers: dict[str, tuple[str, str]]) -> str:
    """The ``command`` agent's command (in its box) answering each case with a setup script and
    a diagnosed error type after a second of "thinking": the same answers whatever runs it."""
    folder = root / "command-answers"
    folder.mkdir()
    for case_id, (script, error_type) in answers.items():
        (folder / f"{case_id}.sh").write_text(script)
        diagnosis = [{"error_type": error_type, "error_description": "d", "fix_suggestion": "f"}]
        (folder / f"{case_id}.json").write_text(json.dumps(diagnosis))
    return (
        f"sleep 1 && cp {folder}/$ENCONDA_CASE_ID.sh /enconda/output/setup.sh && "
        f"cp {folder}/$ENCONDA_CASE_ID.json /enconda/output/diagnosis.json"
    )


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
