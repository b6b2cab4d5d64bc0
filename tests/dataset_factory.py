"""A released-format dataset of one instance (``o/a``'s ``error_readme_1``) with a sidecar."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_enconda.cases.sidecar import SIDECAR_NAME, RepoVerification, Sidecar
from pytest_enconda.verify.sidecar_writer import write_sidecar

GOLDEN_ERROR = {
    "error_type": "E4",
    "error_description": "requirements file path is wrong",
    "golden_answer": "pip install -r requirements.txt",
}


def one_instance_dataset(root: Path, record: RepoVerification) -> Path:
    """``root``/DATA holding the instance and ``record`` (of ``o/a`` at ``abc``) as its sidecar."""
    data = root / "DATA"
    folder = data / "instances" / "error_gen_o_a" / "o_a_error_readme_1"
    folder.mkdir(parents=True)
    (data / "repo_info.jsonl").write_text('{"repository": "o/a", "revision": "abc"}\n')
    (folder / "README.md").write_text("# x\n")
    golden = {"level": "level1", "errors": [{**GOLDEN_ERROR, "correction_candidates": []}]}
    (folder / "README.json").write_text(json.dumps(golden))
    write_sidecar(data / SIDECAR_NAME, Sidecar(repositories={"o/a": record}))
    return data
