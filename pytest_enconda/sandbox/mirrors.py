"""Where a mirror folder holds a repository: the spellings of its URL as folders and snapshots."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from urllib.parse import urlparse


def _url_parts(url: str) -> tuple[str | None, str]:
    """(owner, name) of ``https://host/owner/name(.git)``, ``git@host:owner/name`` or a path."""
    path = urlparse(url).path if "://" in url else url.split(":", 1)[-1]
    parts = [part for part in path.strip("/").split("/") if part]
    if not parts:
        return None, url
    name = parts[-1].removesuffix(".git")
    owner = parts[-2] if len(parts) >= 2 else None
    return owner, name


def mirror_candidates(mirror_dir: Path, url: str) -> list[Path]:
    """Where a mirror may hold ``url``: owner/name, owner_name, name, each optionally ``.git``;
    and a fetched snapshot's layout, ``owner+name/repo`` (a bare git directory) or ``owner+name``.
    """
    owner, name = _url_parts(url)
    stems = [f"{owner}/{name}", f"{owner}_{name}"] if owner else []
    stems.append(name)
    candidates = [mirror_dir / f"{stem}{suffix}" for stem in stems for suffix in ("", ".git")]
    if owner:
        candidates += [mirror_dir / f"{owner}+{name}" / "repo", mirror_dir / f"{owner}+{name}"]
    candidates += _other_spellings(mirror_dir, owner, name, candidates)
    # The URL comes from a downloaded dataset: '..' or '/' in it must not leave the mirror.
    # Checked by name, not resolved: a mirror's own entries may be symlinks to clones elsewhere.
    return [path for path in candidates if _inside_by_name(path, mirror_dir)]


_MAX_MIRROR_ENTRIES = 100_000


def _other_spellings(
    mirror_dir: Path, owner: str | None, name: str, exact: list[Path]
) -> list[Path]:
    """Entries that hold the repository under another spelling, after the exact names.

    GitHub's names ignore case and EnConda-Bench writes them in lower case
    (``hips/autograd``), while a fetched snapshot keeps GitHub's (``HIPS+autograd``). A
    repository that moved to another owner (``flask-middleware/flask-security`` is now
    ``pallets-eco/flask-security``) is found as any ``owner+name/repo`` snapshot of that name;
    such a candidate is offered only as a git repository, so its revision decides.
    """
    if not mirror_dir.is_dir():
        return []
    wanted = {path.relative_to(mirror_dir).as_posix().lower() for path in exact}
    found: list[Path] = []
    other_owner: list[Path] = []
    for entry in _names(mirror_dir):
        lowered = entry.lower()
        if owner and lowered == owner.lower() and entry != owner:
            for inner in (name, f"{name}.git"):
                found += _spelled(mirror_dir / entry, inner)
        elif lowered in wanted and (mirror_dir / entry) not in exact:
            if lowered.endswith(f"+{name.lower()}"):
                found.append(mirror_dir / entry / "repo")
            found.append(mirror_dir / entry)
        elif lowered.endswith(f"+{name.lower()}"):
            snapshot = mirror_dir / entry / "repo"
            if _is_git_repository(snapshot):
                other_owner.append(snapshot)
    return found + other_owner


def _spelled(folder: Path, name: str) -> list[Path]:
    """``folder/<name>`` in whatever case the folder holds it."""
    return [folder / entry for entry in _names(folder) if entry.lower() == name.lower()]


def _names(folder: Path) -> list[str]:
    """A folder's entry names, sorted; bounded, since a mirror may be anyone's big folder."""
    try:
        with os.scandir(folder) as listing:
            return sorted(entry.name for entry in itertools.islice(listing, _MAX_MIRROR_ENTRIES))
    except OSError:
        return []


def _inside_by_name(path: Path, folder: Path) -> bool:
    return os.path.normpath(path).startswith(os.path.normpath(folder) + os.sep)


def _is_git_repository(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())
