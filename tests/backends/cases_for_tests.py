"""A minimal case folder, loaded as the harness loads one (no Docker, no network)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case

FOLDER_REPOSITORY = '[repository]\nkind = "folder"\npath = "repo"\n'


def make_case(
    root: Path,
    *,
    test_command: str = "true",
    files: dict[str, str] | None = None,
    repository: str = FOLDER_REPOSITORY,
) -> Case:
    """Case ``one`` under ``root/bench``; ``repository`` is its case.toml table (default: the
    case's own ``repo`` folder, which holds ``files``)."""
    case_dir = root / "bench" / "cases" / "one"
    (case_dir / "repo").mkdir(parents=True)
    for rel, text in {"x.txt": "x\n", **(files or {})}.items():
        (case_dir / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (case_dir / "repo" / rel).write_text(text)
    (case_dir / "README.md").write_text("# one\n\n```bash\npip install -r requirements.txt\n```\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 0, "errors": []}))
    (case_dir / "case.toml").write_text(
        'id = "one"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        f"test_command = {json.dumps(test_command)}\n{repository}"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])
