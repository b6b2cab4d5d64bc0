"""GitHub dependencies served from ``--repo-mirror`` inside the box.

A project may depend on another GitHub repository (``git+https://github.com/o/n@rev`` in a
requirements file, ``{git = "https://github.com/o/n"}`` in Poetry's table). Where GitHub cannot
be reached, the mirror that holds the project may hold those repositories too: each one found
is copied into the task image and git is told to read it instead of GitHub (``url.insteadOf`` in
the system gitconfig). Every box of the case gets the same copies, the agent's as well as the
reference's, so a reference that installed them asks nothing of the agent it cannot have.
"""

from __future__ import annotations

import hashlib
import io
import re
import subprocess
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .repo import mirror_candidates

# Where the copies live in the image; outside /data/project so the project's tree is unchanged.
GIT_DEPS_DIR = "opt/enconda/git"
GITCONFIG = "etc/gitconfig"

# A git dependency on GitHub as pip (``git+https://``) and Poetry (``git = "https://``) write it.
_GITHUB_DEPENDENCY = re.compile(
    r"""(?:git\+|\bgit\s*=\s*["'])(https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?))"""
    r"""(?:\.git)?(?=[@#"'\s/]|$)""",
    re.MULTILINE,
)
_REQUIREMENT_GLOBS = (
    "requirements*.txt",
    "requirements*.in",
    "*/requirements*.txt",
    "requirements/*",
)
_DEPENDENCY_NAMES = ("setup.py", "setup.cfg", "pyproject.toml", "Pipfile", "environment.yml")
_MAX_FILE_BYTES = 1_000_000
_MAX_FILES = 200
_MAX_DEPENDENCIES = 30
# A repository copied into every box of a case: beyond this it is left to the network.
MAX_COPY_BYTES = 300 * 1024 * 1024


@dataclass(frozen=True)
class GitDependency:
    """``url`` as the project writes it (no ``.git``), served from the mirror's ``git_dir``."""

    url: str
    git_dir: Path
    identity: str  # a digest of the copy's refs: a refreshed mirror makes a new image

    @property
    def slot(self) -> str:
        """Its folder under ``GIT_DEPS_DIR`` (owner+name, as the project spells them)."""
        owner, name = self.url.removeprefix("https://github.com/").split("/", 1)
        return f"{owner}+{name}.git"


def _dependency_files(repo_dir: Path) -> list[Path]:
    """The files that declare Python dependencies: requirements files up to two levels down
    (``requirements/dev.txt``) and the packaging files at the root."""
    found: list[Path] = []
    for pattern in _REQUIREMENT_GLOBS:
        found += sorted(repo_dir.glob(pattern))
    found += [repo_dir / name for name in _DEPENDENCY_NAMES]
    unique = dict.fromkeys(path for path in found if path.is_file() and not path.is_symlink())
    return list(unique)[:_MAX_FILES]


def github_dependencies(repo_dir: Path) -> list[str]:
    """The GitHub repositories ``repo_dir`` declares as git dependencies, as written, sorted.
    Commented-out lines are not dependencies."""
    urls: set[str] = set()
    for path in _dependency_files(repo_dir):
        try:
            if path.stat().st_size > _MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if line.lstrip().startswith("#"):
                continue
            urls.update(match.group(1) for match in _GITHUB_DEPENDENCY.finditer(line))
    return sorted(urls)[:_MAX_DEPENDENCIES]


def _git_dir(path: Path) -> Path | None:
    for candidate in (path / ".git", path):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _identity(git_dir: Path) -> str | None:
    try:
        refs = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show-ref", "--head"],
            capture_output=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return hashlib.sha256(refs).hexdigest() if refs else None


def from_mirror(urls: Iterable[str], mirror_dir: Path | None) -> list[GitDependency]:
    """The dependencies of ``urls`` the mirror holds as git repositories (small enough to copy)."""
    if mirror_dir is None:
        return []
    found: list[GitDependency] = []
    for url in urls:
        for candidate in mirror_candidates(Path(mirror_dir), url):
            git_dir = _git_dir(candidate) if candidate.is_dir() else None
            if git_dir is None or _size(git_dir) > MAX_COPY_BYTES:
                continue
            identity = _identity(git_dir)
            if identity is not None:
                found.append(GitDependency(url, git_dir, identity))
                break
    return found


def mirrored_dependencies(repo_dir: Path, mirror_dir: Path | None) -> list[GitDependency]:
    """What the task image of ``repo_dir`` carries: its GitHub dependencies found in the mirror."""
    return from_mirror(github_dependencies(repo_dir), mirror_dir) if mirror_dir else []


def describe(deps: Sequence[GitDependency]) -> str:
    """The progress line's words for ``deps``."""
    names = ", ".join(dep.url.removeprefix("https://github.com/") for dep in deps)
    return f"{len(deps)} GitHub dependencies served from the mirror: {names}"


def gitconfig(deps: Sequence[GitDependency]) -> bytes:
    """The system gitconfig that sends each dependency's URL, with or without ``.git``, to its
    copy; the longest matching ``insteadOf`` wins, so ``n.git`` is not read as ``n`` + ``.git``."""
    lines: list[str] = []
    for dep in deps:
        lines += [
            f'[url "file:///{GIT_DEPS_DIR}/{dep.slot}"]',
            f"\tinsteadOf = {dep.url}.git",
            f"\tinsteadOf = {dep.url}",
        ]
    return ("\n".join(lines) + "\n").encode() if lines else b""


def add_to_tar(tar: tarfile.TarFile, deps: Sequence[GitDependency]) -> None:
    """Each copy's plain files and folders (links left out: they could point anywhere on this
    machine), owned by root, and the gitconfig that points at them."""

    def folder(name: str) -> None:
        info = tarfile.TarInfo(name)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)

    if not deps:
        return
    parts = PurePosixPath(GIT_DEPS_DIR).parts
    for index in range(1, len(parts) + 1):
        folder("/".join(parts[:index]))
    for dep in deps:
        root = f"{GIT_DEPS_DIR}/{dep.slot}"
        folder(root)
        for path in sorted(dep.git_dir.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            name = f"{root}/{path.relative_to(dep.git_dir).as_posix()}"
            if path.is_dir():
                folder(name)
                continue
            info = tarfile.TarInfo(name)
            info.size = path.stat().st_size
            info.mode = 0o644
            with path.open("rb") as content:
                tar.addfile(info, content)
    config = gitconfig(deps)
    info = tarfile.TarInfo(GITCONFIG)
    info.size = len(config)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(config))
