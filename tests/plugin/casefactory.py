"""Writes small case folders for pytester runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_case(
    root: Path,
    case_id: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    setup: str = "touch ok\n",
    test_command: str = "test -f ok",
    readme: str = "# toy\n\n```bash\ntouch ok\n```\n",
    original_readme: str | None = "# toy\n\n```bash\ntouch ok\n```\n",
    extra_toml: str = "",
    suite_dir: str = "cases",
) -> Path:
    """A diagnosis case with a one-file repository; ``errors`` are golden error dicts."""
    errors = errors if errors is not None else [golden_error("E4")]
    case_dir = root / suite_dir / case_id
    (case_dir / "repo").mkdir(parents=True, exist_ok=True)
    (case_dir / "repo" / "hello.txt").write_text(f"{case_id}\n")
    (case_dir / "README.md").write_text(readme)
    if original_readme is not None:
        (case_dir / "README.original.md").write_text(original_readme)
    (case_dir / "golden.json").write_text(json.dumps({"level": len(errors), "errors": errors}))
    (case_dir / "setup.sh").write_text(setup)
    lines = [
        f'id = "{case_id}"',
        'suite = "diagnosis"',
        'readme = "README.md"',
        'original_readme = "README.original.md"' if original_readme is not None else "",
        'golden = "golden.json"',
        'golden_setup = "setup.sh"',
        f"test_command = {json.dumps(test_command)}",
        extra_toml,
        "[repository]",
        'kind = "folder"',
        'path = "repo"',
        "[budgets]",
        "setup_seconds = 60",
        "test_seconds = 60",
    ]
    (case_dir / "case.toml").write_text("\n".join(lines) + "\n")
    return case_dir


def golden_error(error_type: str, description: str = "", fix: str = "") -> dict[str, Any]:
    description = description or f"the README has an {error_type} error in `pip install foo`"
    fix = fix or f"pip install foo-{error_type.lower()}"
    return {
        "error_type": error_type,
        "error_description": description,
        "correction_candidates": [fix, "pip install something-else"],
        "golden_answer": fix,
    }
