"""Write constructed instances in EnConda-Bench's released layout (what ``--cases`` loads).

::

    OUT/
        repo_info.jsonl                          {"repository": "owner/name", "revision": ...}
        enconda-verification.json                the sidecar: PASS sets, reference setups
        construct-report.json                    every injection and instance, kept or dropped
        instances/error_gen_<owner>_<name>/
            README.md                            the original README (the ground truth)
            <owner>_<name>_error_readme_N/       README.md + README.json (the golden)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..artifacts import atomic_write_text
from ..textio import parse_json, read_text
from .models import ErrorLabel

__all__ = [
    "golden_json",
    "instance_dir",
    "repo_key",
    "short_name",
    "write_instance",
    "write_repo_info",
]

REPO_INFO = "repo_info.jsonl"
REPORT_NAME = "construct-report.json"
# A line per repository: thousands of repositories are a few hundred kilobytes.
MAX_REPO_INFO_BYTES = 16 << 20
_SAFE = re.compile(r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$")


def repo_key(repository: str) -> str:
    if not _SAFE.fullmatch(repository) or ".." in repository:
        raise ValueError(f"repository: expected owner/name of safe characters, got {repository!r}")
    return repository.replace("/", "_")


def short_name(repository: str, instance: str) -> str:
    """The part of an instance folder's name the importer puts in the case id."""
    key = repo_key(repository)
    for prefix in (f"error_gen_{key}_", f"{key}_"):
        if instance.startswith(prefix) and len(instance) > len(prefix):
            return instance[len(prefix) :]
    return instance


def instance_dir(out: Path, repository: str, instance: str) -> Path:
    return Path(out) / "instances" / f"error_gen_{repo_key(repository)}" / instance


def golden_json(repository: str, instance: str, labels: list[ErrorLabel]) -> str:
    data = {
        "readme": instance,
        "repo_name": repo_key(repository),
        "level": f"level{len(labels)}",
        "errors": [label.model_dump() for label in labels],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_instance(
    out: Path,
    repository: str,
    instance: str,
    readme: str,
    labels: list[ErrorLabel],
    readme_name: str = "README.md",
) -> Path:
    """The instance folder; the golden file is written last, so a folder with one is complete."""
    folder = instance_dir(out, repository, instance)
    atomic_write_text(folder / readme_name, readme)
    atomic_write_text(folder / "README.json", golden_json(repository, instance, labels))
    return folder


def write_original(out: Path, repository: str, readme: str, readme_name: str = "README.md") -> None:
    atomic_write_text(
        Path(out) / "instances" / f"error_gen_{repo_key(repository)}" / readme_name, readme
    )


def write_repo_info(out: Path, revisions: dict[str, str]) -> None:
    lines = [json.dumps({"repository": r, "revision": revisions[r]}) for r in sorted(revisions)]
    atomic_write_text(Path(out) / REPO_INFO, "".join(line + "\n" for line in lines))


def read_repo_info(out: Path) -> dict[str, str]:
    path = Path(out) / REPO_INFO
    if not path.is_file():
        return {}
    found = {}
    # A dataset is downloaded data: bounded, a regular file only, UTF-8.
    text = read_text(path, MAX_REPO_INFO_BYTES)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = parse_json(line)  # deep nesting is a ValueError, not a RecursionError
            found[str(row["repository"])] = str(row["revision"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{path}: line {number}: expected repository and revision: {exc}"
            ) from None
    return found
