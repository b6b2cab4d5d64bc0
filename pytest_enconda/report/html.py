"""Extras for pytest-html's report: each item links its artifacts and shows its numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..records import CaseDir, RunDir


def html_extras(case_dir: CaseDir, aspect: str, numbers: dict[str, Any]) -> list[dict[str, Any]]:
    """pytest-html extras (its ``extras.url``/``extras.json`` shapes) for one item."""
    from pytest_html import extras

    links: list[tuple[str, Path]] = [
        # Always there, also for a harness error decided before anything was graded.
        ("case folder", case_dir.root),
        ("harness log", RunDir(case_dir.run_dir).harness_log),
        ("agent outcome", case_dir.agent_outcome),
        ("setup script", case_dir.setup_script),
        (f"grading: {aspect}", case_dir.grading(aspect)),
    ]
    if aspect == "execution":
        from ..artifacts import ArtifactError
        from ..probing.execution import ExecutionRecord
        from ..records import read_record
        from .evidence import step_log

        record = None
        path = case_dir.execution_record
        if path.is_file():
            try:
                record = read_record(path, ExecutionRecord, root=case_dir.run_dir)
            except ArtifactError:
                record = None  # an edited record: the logs' usual places are linked
        links += [(f"{step} log", step_log(case_dir, record, step)) for step in ("setup", "test")]
    out = [extras.url(path.resolve().as_uri(), name=name) for name, path in links if path.exists()]
    if numbers:
        out.append(extras.json(json.dumps(numbers, default=str), name="numbers"))
    return out
