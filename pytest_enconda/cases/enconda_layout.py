"""Where an EnConda-Bench release keeps things: the folder ``--cases`` names (any of three
levels), its repository folders, ``repo_info.jsonl``'s pinned revisions, and the rule that every
path resolves inside the dataset (``Roots``). See ``enconda_import`` for the layout and the
decisions behind it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..textio import decode_utf8, parse_json, read_bounded
from .import_report import ImportReport
from .loader import MAX_FILE_BYTES

REPO_INFO = "repo_info.jsonl"
INSTANCES = "instances"
REPO_PREFIX = "error_gen_"
GOLDEN_NAME = "README.json"

# GitHub's characters for owners and repositories; '.' and '..' would be path steps, not names.
_REPO_PART = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
# A commit, tag or branch; never starting with '-', which git would read as an option.
_REVISION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}$")
_NATURAL = re.compile(r"(\d+)")


class Roots:
    """The folders every path of the dataset must resolve inside (symlinks followed).

    Resolution is memoised per folder, on strings: resolving each of the 6,000 files of the
    shared dataset from scratch tripled its import time, and a path that is not a link resolves
    to its folder's resolution and its own name (one ``lstat``).
    """

    def __init__(self, *folders: Path) -> None:
        self.folders = [str(folder.resolve()) for folder in folders]
        self._prefixes = tuple(folder.rstrip(os.sep) + os.sep for folder in self.folders)
        self._resolved: dict[str, str] = {}
        # Absolute paths that a directory listing showed are not symlinks: no lstat needed.
        self.plain: set[str] = set()

    def saw(self, entry: os.DirEntry[str]) -> None:
        if not entry.is_symlink():
            self.plain.add(os.path.abspath(entry.path))

    def resolve(self, path: str) -> str:
        known = self._resolved.get(path)
        if known is not None:
            return known
        parent, name = os.path.split(path)
        if (
            not parent
            or parent == path
            or name in ("", ".", "..")
            or (path not in self.plain and os.path.islink(path))
        ):
            known = os.path.realpath(path)
        else:
            known = os.path.join(self.resolve(parent), name)
        self._resolved[path] = known
        return known

    def check(self, path: Path, field: str, report: ImportReport) -> bool:
        """Whether ``path`` resolves inside; if not, a problem naming the field and target."""
        try:
            resolved = self.resolve(os.path.abspath(path))
        except (OSError, RuntimeError) as exc:  # a symlink loop
            report.problem(path, f"{field}: cannot resolve: {exc}")
            return False
        if resolved in self.folders or resolved.startswith(self._prefixes):
            return True
        where = ", ".join(self.folders)
        report.problem(path, f"{field}: resolves to {resolved}, outside the dataset ({where})")
        return False


class Repo(BaseModel):
    owner: str
    name: str
    revision: str

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


def read_dataset_bytes(path: Path) -> bytes:
    """At most ``MAX_FILE_BYTES``: a README or golden file far larger is a mistake or an attack."""
    return read_bounded(path, MAX_FILE_BYTES)


def read_dataset_text(path: Path) -> str:
    return decode_utf8(read_dataset_bytes(path))


# ----------------------------------------------------------------------------- layout


def natural_key(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in _NATURAL.split(name)]


def _find_up(start: Path, name: str, levels: int) -> Path | None:
    folder = start
    for _ in range(levels):
        # exists(): a FIFO or device there is refused by its reader, named, not passed over.
        if (folder / name).exists() and not (folder / name).is_dir():
            return folder / name
        folder = folder.parent
    return None


def subdirs(folder: Path, roots: Roots | None = None) -> list[Path]:
    dirs = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir():
                dirs.append(Path(entry.path))
                if roots is not None:
                    roots.saw(entry)
    return sorted(dirs, key=lambda path: natural_key(path.name))


def find_layout(
    root: Path, report: ImportReport
) -> tuple[list[Path], str | None, Path | None] | None:
    """(repository folders, the one instance to load or None, repo_info.jsonl or None)."""
    if not root.is_dir():
        report.problem(root, "not a directory")
        return None
    if (root / INSTANCES).is_dir():
        info = root / REPO_INFO
        repo_info = info if info.exists() and not info.is_dir() else None
        return _repo_dirs(root / INSTANCES), None, repo_info
    if root.name.startswith(REPO_PREFIX) and not _is_instance(root):
        return [root], None, _find_up(root.parent, REPO_INFO, 2)
    if _is_instance(root):
        return [root.parent], root.name, _find_up(root.parent.parent, REPO_INFO, 2)
    repo_dirs = _repo_dirs(root)
    if repo_dirs:
        return repo_dirs, None, _find_up(root, REPO_INFO, 2)
    report.problem(
        root,
        f"no EnConda-Bench layout: expected {INSTANCES}/ or {REPO_PREFIX}<owner>_<name>/ "
        "folders holding <instance>/README.json",
    )
    return None


def _repo_dirs(folder: Path) -> list[Path]:
    return [path for path in subdirs(folder) if path.name.startswith(REPO_PREFIX)]


def _is_instance(folder: Path) -> bool:
    return any(path.name.lower() == GOLDEN_NAME.lower() for path in folder.iterdir())


# ----------------------------------------------------------------------------- repo_info.jsonl


def read_repo_info(path: Path, report: ImportReport) -> dict[str, Repo]:
    """Folder key (``owner_name``) → repository; bad lines are problems of that line."""
    repos: dict[str, Repo] = {}
    ambiguous: set[str] = set()
    try:
        text = read_dataset_text(path)
    except (OSError, ValueError) as exc:
        report.problem(path, f"cannot read: {exc}")
        return repos
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = parse_json(line)
        except ValueError as exc:
            report.problem(where, str(exc))
            continue
        if not isinstance(record, dict):
            report.problem(where, "expected a JSON object")
            continue
        repository = record.get("repository")
        revision = record.get("revision")
        if not _valid_repository(repository):
            report.problem(
                where,
                "repository: expected 'owner/name' of letters, digits, '.', '-' and '_' "
                f"(neither part '.' or '..'), got {repository!r}",
            )
            continue
        assert isinstance(repository, str)
        if not isinstance(revision, str) or not _REVISION.match(revision.strip()):
            report.problem(
                where,
                "revision: expected a commit (or tag) of letters, digits, '.', '/', '-' and "
                f"'_', not starting with '-', got {revision!r}",
            )
            continue
        owner, name = repository.split("/")
        key = f"{owner}_{name}"
        repo = Repo(owner=owner, name=name, revision=revision.strip())
        known = repos.get(key)
        if known is None:
            repos[key] = repo
        elif known.full_name != repo.full_name:
            # ``a_b/c`` and ``a/b_c`` share the folder ``error_gen_a_b_c``: no way to tell.
            report.problem(
                where,
                f"{repository} and {known.full_name} both map to folder {REPO_PREFIX}{key}",
            )
            ambiguous.add(key)
        elif known.revision != repo.revision:
            report.problem(
                where,
                f"{repository} listed again with revision {repo.revision}; "
                f"keeping the first ({known.revision})",
            )
    for key in ambiguous:
        del repos[key]
    return repos


def _valid_repository(value: object) -> bool:
    if not isinstance(value, str) or value.count("/") != 1:
        return False
    return all(_REPO_PART.match(part) and part not in (".", "..") for part in value.split("/"))


def match_repo(key: str, repos: dict[str, Repo], folder: Path, report: ImportReport) -> Repo | None:
    if key in repos:
        return repos[key]
    # EnConda-Bench's own loader compares names with ``-`` read as ``_``, case kept; we also
    # ignore case, and accept the match only when it is unique.
    loose = key.replace("-", "_").lower()
    matches = [repo for k, repo in repos.items() if k.replace("-", "_").lower() == loose]
    if len(matches) == 1:
        report.note(folder, f"matched to {matches[0].full_name} in {REPO_INFO} ignoring case/-/_")
        return matches[0]
    return None
