"""A checkout's submodules, checked out from the mirror at the commits its tree records (as
``git clone --recursive`` would, without the network)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

from ..errors import HarnessError
from .gitstore import _Checkout, _empty, _export, _git, _git_dir, _resolve
from .mirrors import _is_git_repository, mirror_candidates

# A .gitmodules larger than this is not read (a real one lists a few dozen entries).
_GITMODULES_MAX = 256 * 1024
# Submodules of submodules are followed this deep.
_SUBMODULE_DEPTH = 3
# ``_fill_submodules`` says one line per submodule, kept in verify's records: "PATH: COMMIT from
# the mirror (DIR)" where it was checked out, one ending "left empty" where it was not.
FROM_MIRROR = " from the mirror ("
LEFT_EMPTY = "left empty"


def said_path(line: str) -> str:
    """The submodule path a line ``_fill_submodules`` said is about."""
    return line.partition(": ")[0]


def _submodule_entries(git_dir: Path, commit: str, timeout: float) -> list[tuple[str, str]]:
    """(path, url) of each submodule the commit's ``.gitmodules`` declares, read by git itself."""
    size = _git(
        ["--git-dir", str(git_dir), "cat-file", "-s", f"{commit}:.gitmodules"], timeout=timeout
    )
    if size.returncode != 0 or not size.stdout.strip().isdigit():
        return []
    if int(size.stdout.strip()) > _GITMODULES_MAX:
        return []
    listed = _git(
        ["--git-dir", str(git_dir), "config", "--blob", f"{commit}:.gitmodules", "--list", "-z"],
        timeout=timeout,
    )
    if listed.returncode != 0:
        return []
    paths: dict[str, str] = {}
    urls: dict[str, str] = {}
    for entry in listed.stdout.split("\0"):
        key, _, value = entry.partition("\n")
        section, _, rest = key.partition(".")
        name, _, field = rest.rpartition(".")
        if section != "submodule" or not name:
            continue
        if field == "path":
            paths[name] = value
        elif field == "url":
            urls[name] = value
    return [(paths[name], urls[name]) for name in paths if name in urls]


def _gitlinks(git_dir: Path, commit: str, timeout: float) -> dict[str, str]:
    """Path → commit of each submodule entry (mode 160000) in the commit's tree."""
    listed = _git(["--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit], timeout=timeout)
    links: dict[str, str] = {}
    if listed.returncode != 0:
        return links
    for entry in listed.stdout.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == "160000" and parts[1] == "commit":
            links[path] = parts[2]
    return links


def _submodule_url(url: str, parent: str) -> str:
    """A ``.gitmodules`` URL made absolute: ``../other.git`` is relative to the parent's URL."""
    if not url.startswith(("./", "../")):
        return url
    if not parent:
        return ""
    parsed = urlparse(parent.rstrip("/") + "/")
    path = os.path.normpath(os.path.join(parsed.path, url))
    return parsed._replace(path=path).geturl()


def _inside(dest: Path, relative: str) -> Path | None:
    """``dest/relative`` when it stays inside ``dest`` through no link; None otherwise: the
    path comes from the repository, which the user did not write."""
    parts = Path(relative).parts
    if not parts or Path(relative).is_absolute() or any(p in ("..", ".", ".git") for p in parts):
        return None
    here = dest
    for part in parts:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            return None
    return here


def _fill_submodules(
    git_dir: Path,
    commit: str,
    dest: Path,
    url: str,
    mirror_dir: Path,
    timeout: float,
    absent: list[str] | None,
    said: list[str],
    prefix: str = "",
    depth: int = 0,
) -> None:
    """Check the commit's submodules out into ``dest`` from the mirror, at the commits the tree
    records (not a branch: the parent was tested against those). A submodule the mirror lacks
    stays an empty folder, as a non-recursive clone leaves it; each is said in ``said``."""
    links = _gitlinks(git_dir, commit, timeout)
    for path, declared in _submodule_entries(git_dir, commit, timeout):
        shown = f"{prefix}{path}"
        wanted = links.get(path)
        if wanted is None:
            continue  # declared but not in this tree: nothing to check out
        target = _inside(dest, path)
        if target is None:
            said.append(f"{shown}: not checked out: its path leaves the checkout")
            continue
        sub_url = _submodule_url(declared, url)
        found: _Checkout | None = None
        for candidate in mirror_candidates(mirror_dir, sub_url) if sub_url else []:
            if not candidate.is_dir() or not _is_git_repository(candidate):
                continue
            sub_git = _git_dir(candidate, timeout)
            if sub_git and _resolve(sub_git, wanted, timeout):
                found = _Checkout(sub_git, wanted)
                break
        if found is None or found.git_dir is None:
            said.append(f"{shown}: {wanted[:12]} of {declared} is not in the mirror; {LEFT_EMPTY}")
            continue
        target.mkdir(parents=True, exist_ok=True)
        missing: list[str] | None = [] if absent is not None else None
        try:
            _export(found.git_dir, wanted, target, timeout, missing)
        except HarnessError as exc:
            _empty(target)
            said.append(f"{shown}: {wanted[:12]} could not be checked out; {LEFT_EMPTY}: {exc}")
            continue
        if absent is not None and missing:
            absent.extend(f"{shown}/{name}" for name in missing)
        said.append(f"{shown}: {wanted[:12]}{FROM_MIRROR}{found.git_dir})")
        if depth + 1 < _SUBMODULE_DEPTH:
            _fill_submodules(
                found.git_dir,
                wanted,
                target,
                sub_url,
                mirror_dir,
                timeout,
                absent,
                said,
                f"{shown}/",
                depth + 1,
            )
