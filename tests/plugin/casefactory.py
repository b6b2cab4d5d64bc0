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


REPORT_SCRIPT = """mkdir -p /enconda/output
cat > /enconda/output/report.json <<JSON
{"python_path": "/opt/venv/bin/python", "python_version": "3.11", "torch_version": null,
 "cuda_available": null, "gpu_count": null, "ddp_expected_ok": null, "env_tool": "venv",
 "env_name": "venv", "notes": ""}
JSON
"""
VENV_SETUP = (
    "python3 -m venv /opt/venv\n"
    "printf 'VALUE = 1\\n' > /opt/venv/lib/python3.11/site-packages/helper_mod.py\n" + REPORT_SCRIPT
)


def write_research_case(
    root: Path,
    case_id: str,
    *,
    setup: str = VENV_SETUP,
    entry_point: str = "python train.py",
    research_extra: str = "supports_multi_gpu = false",
    probes: dict[str, str] | None = None,
    suite_dir: str = "cases",
    setup_seconds: float = 120,
) -> Path:
    """A research case whose entry point needs ``helper_mod``, which only the setup provides."""
    case_dir = root / suite_dir / case_id
    (case_dir / "repo").mkdir(parents=True, exist_ok=True)
    (case_dir / "repo" / "train.py").write_text(
        "import sys\n\nimport helper_mod\n\nprint('one step', helper_mod.VALUE, sys.executable)\n"
    )
    (case_dir / "README.md").write_text("# tiny research repo\n\nRun `python train.py`.\n")
    (case_dir / "setup.sh").write_text(setup)
    for name, text in (probes or {}).items():
        (case_dir / name).write_text(text)
    lines = [
        f'id = "{case_id}"',
        'suite = "research"',
        'readme = "README.md"',
        'golden_setup = "setup.sh"',
        "[repository]",
        'kind = "folder"',
        'path = "repo"',
        "[research]",
        f"entry_point = {json.dumps(entry_point)}",
        research_extra,
        "[budgets]",
        f"setup_seconds = {setup_seconds}",
    ]
    (case_dir / "case.toml").write_text("\n".join(lines) + "\n")
    return case_dir
