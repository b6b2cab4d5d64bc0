"""Put a case's repository on the host: from a folder, a local git repository, or a git URL.

Remote clones go through a bare cache repository per URL, so a warm run fetches nothing; a local
mirror directory is consulted before the network because most machines running the benchmark
cannot reach every repository host (here: no GitHub at all).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from ..cases.models import RepoSource
from ..cases.operands import option_shaped
from ..errors import HarnessError, RepositoryUnavailable
from .common import file_lock
from .gitstore import _Checkout, _export, _git, _git_dir, _last_lines, _resolve
from .mirrors import _is_git_repository, _url_parts, mirror_candidates
from .settings import default_cache_dir
from .submodules import _fill_submodules

# Never part of what the agent gets: VCS metadata and the host's own caches/venvs.
IGNORED_NAMES = frozenset({".git", "__pycache__", ".venv"})

_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_RETRY_FULL_FETCH = ("not our ref", "couldn't find remote ref", "unadvertised", "does not allow")


def iter_tree(root: Path) -> Iterator[tuple[str, Path]]:
    """(posix relative path, absolute path) of every entry below ``root``, sorted, ignored skipped.

    Symlinks are reported, never followed, so a link to ``/`` cannot pull in the host.
    """

    def walk(directory: Path, prefix: str) -> Iterator[tuple[str, Path]]:
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as exc:
            raise HarnessError(f"cannot read repository directory {directory}: {exc}") from None
        for entry in entries:
            if entry.name in IGNORED_NAMES:
                continue
            rel = f"{prefix}{entry.name}"
            path = Path(entry.path)
            yield rel, path
            if entry.is_dir(follow_symlinks=False):
                yield from walk(path, rel + "/")

    yield from walk(root, "")


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def tree_hash(path: Path) -> str:
    """Content hash of a tree: names, file bytes, executable bits, symlink targets.

    Timestamps and owners are left out so the same checkout on two machines hashes the same.
    """
    root = Path(path)
    if not root.is_dir():
        raise HarnessError(f"repository directory not found: {root}")
    digest = hashlib.sha256()
    for rel, entry in iter_tree(root):
        info = entry.lstat()
        if stat.S_ISLNK(info.st_mode):
            digest.update(f"l\0{rel}\0{os.readlink(entry)}\0".encode())
        elif stat.S_ISDIR(info.st_mode):
            digest.update(f"d\0{rel}\0".encode())
        elif stat.S_ISREG(info.st_mode):
            executable = "x" if info.st_mode & 0o111 else "-"
            digest.update(f"f\0{rel}\0{executable}\0".encode())
            digest.update(_file_digest(entry))
    return digest.hexdigest()


def _prepare_dest(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise HarnessError(f"repository destination must be absent or empty: {dest}")
    dest.mkdir(parents=True, exist_ok=True)


def _copy_folder(src: Path, dest: Path) -> None:
    shutil.copytree(
        src,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns(*IGNORED_NAMES),
        dirs_exist_ok=True,
    )


def describe_absent(absent: list[str], done: str, shown: int = 3) -> str:
    """``N file(s), <done>: a, b, c ...``: how progress lines name the files a snapshot lacked."""
    more = " ..." if len(absent) > shown else ""
    return f"{len(absent)} file(s), {done}: {', '.join(absent[:shown])}{more}"


def _from_mirror(
    source: RepoSource,
    mirror_dir: Path,
    dest: Path,
    timeout: float,
    notes: list[str],
    absent: list[str] | None = None,
    committed: list[str] | None = None,
) -> _Checkout | None:
    url, revision = str(source.url), str(source.revision)
    candidates = mirror_candidates(mirror_dir, url)
    if _is_git_repository(mirror_dir):
        # The mirror is itself one repository (a fetched bare snapshot): used if it holds the
        # revision, so a wrong one is refused by the revision, not trusted by its name.
        git_dir = _git_dir(mirror_dir, timeout)
        commit = _resolve(git_dir, revision, timeout) if git_dir else None
        if commit and git_dir:
            _export(git_dir, commit, dest, timeout, absent, committed)
            return _Checkout(git_dir, commit)
        notes.append(f"mirror {mirror_dir} has no revision {revision}")
        return None
    repositories: list[Path] = []
    for candidate in candidates:
        if not candidate.is_dir():
            continue
        if not _is_git_repository(candidate):
            if any(candidate in tried.parents for tried in repositories):
                # The folder around a snapshot (owner+name around owner+name/repo) that lacked
                # the revision: copying it would make the bare repository the "checkout".
                continue
            # A plain folder cannot prove its revision; the user put it there for this URL.
            _copy_folder(candidate, dest)
            return _Checkout(None, "")
        repositories.append(candidate)
        git_dir = _git_dir(candidate, timeout)
        commit = _resolve(git_dir, revision, timeout) if git_dir else None
        if commit and git_dir:
            _export(git_dir, commit, dest, timeout, absent, committed)
            return _Checkout(git_dir, commit)
        notes.append(f"mirror {candidate} has no revision {revision}")
    return None


def _clone_cache(cache_dir: Path, url: str) -> Path:
    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    _, name = _url_parts(url)
    return cache_dir / "repos" / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}-{key}.git"


def _refuse_options(url: str | None, revision: str | None) -> None:
    """``RepositoryUnavailable`` for a URL or revision git would read as an option.

    ``load_case`` refuses them in a case file; this stops those from every other source (a
    dataset, a sidecar, an imported record) before any git command sees them."""
    for what, value in (("URL", url), ("revision", revision)):
        if value is not None and option_shaped(value):
            raise RepositoryUnavailable(
                str(url),
                revision,
                f"refused: the {what} begins with '-' (git would read it as an option)",
            )


def _from_url(
    source: RepoSource,
    dest: Path,
    cache_dir: Path,
    timeout: float,
    absent: list[str] | None = None,
    committed: list[str] | None = None,
) -> _Checkout:
    url, revision = str(source.url), str(source.revision)
    _refuse_options(url, revision)
    deadline = time.monotonic() + timeout
    bare = _clone_cache(cache_dir, url)

    def remaining() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RepositoryUnavailable(url, revision, f"git timed out after {timeout:g}s")
        return left

    try:
        if not (bare / "HEAD").is_file():
            bare.parent.mkdir(parents=True, exist_ok=True)
            result = _git(["init", "--bare", "--quiet", "--", str(bare)], timeout=remaining())
            if result.returncode != 0:
                raise RepositoryUnavailable(url, revision, _last_lines(result.stderr))
        commit = _resolve(bare, revision, remaining())
        if commit is None:
            # A pinned commit is fetched alone (GitHub allows fetching any reachable SHA);
            # branch or tag names come along with their history on the fallback full fetch.
            shallow = ["--depth=1"] if _SHA.match(revision) else []
            target = f"+{revision}:refs/enconda/wanted"
            result = _git(
                # "--": the URL and refspec are operands whatever they look like.
                [
                    "--git-dir",
                    str(bare),
                    "fetch",
                    "--quiet",
                    "--no-tags",
                    *shallow,
                    "--",
                    url,
                    target,
                ],
                timeout=remaining(),
            )
            if result.returncode != 0 and any(
                marker in result.stderr.lower() for marker in _RETRY_FULL_FETCH
            ):
                result = _git(
                    [
                        "--git-dir",
                        str(bare),
                        "fetch",
                        "--quiet",
                        "--tags",
                        "--",
                        url,
                        "+refs/heads/*:refs/heads/*",
                    ],
                    timeout=remaining(),
                )
            if result.returncode != 0:
                raise RepositoryUnavailable(url, revision, _last_lines(result.stderr))
            commit = _resolve(bare, "refs/enconda/wanted", remaining()) or _resolve(
                bare, revision, remaining()
            )
            if commit is None:
                raise RepositoryUnavailable(url, revision, "revision not found after fetch")
        _export(bare, commit, dest, remaining(), absent, committed)
        return _Checkout(bare, commit)
    except subprocess.TimeoutExpired:
        raise RepositoryUnavailable(url, revision, f"git timed out after {timeout:g}s") from None
    except FileNotFoundError:
        raise RepositoryUnavailable(url, revision, "git is not installed") from None


def materialize(
    source: RepoSource,
    case_dir: Path,
    dest: Path,
    mirror_dir: Path | None = None,
    timeout: float = 120,
    *,
    cache_dir: Path | None = None,
    absent: list[str] | None = None,
    committed: list[str] | None = None,
    submodules: list[str] | None = None,
) -> str:
    """Write the repository tree of ``source`` into ``dest``; return its ``tree_hash``.

    ``dest`` must be absent or empty. Unreachable sources raise ``RepositoryUnavailable``.
    A git checkout naming blobs the object store lacks (a fetched snapshot often leaves out its
    largest files) fails unless ``absent`` is a list: then it goes on without those files and
    appends their repository-relative paths, sorted, to ``absent``. With ``committed`` a list,
    a git source's commit time (ISO 8601, UTC) is appended to it (a plain folder has none).

    A git checkout's submodules are checked out at their recorded commits from ``mirror_dir``,
    as ``git clone --recursive`` would (``_fill_submodules``); with ``submodules`` a list, one line
    per submodule saying where it came from or why it is empty is appended to it.
    """
    if source.kind in ("git", "url"):
        _refuse_options(source.url, source.revision)
    dest = Path(dest)
    _prepare_dest(dest)
    checkout: _Checkout | None = None
    try:
        if source.kind == "folder":
            src = Path(case_dir) / str(source.path)
            if not src.is_dir():
                raise RepositoryUnavailable(str(src), None, "directory not found")
            _copy_folder(src, dest)
        elif source.kind == "git":
            repo = Path(case_dir) / str(source.path)
            revision = str(source.revision)
            git_dir = _git_dir(repo, timeout) if repo.is_dir() else None
            if git_dir is None:
                raise RepositoryUnavailable(str(repo), revision, "not a git repository")
            commit = _resolve(git_dir, revision, timeout)
            if commit is None:
                raise RepositoryUnavailable(str(repo), revision, "revision not found")
            _export(git_dir, commit, dest, timeout, absent, committed)
            checkout = _Checkout(git_dir, commit)
        else:
            notes: list[str] = []
            checkout = (
                _from_mirror(source, Path(mirror_dir), dest, timeout, notes, absent, committed)
                if mirror_dir is not None
                else None
            )
            if checkout is None:
                cache = cache_dir or default_cache_dir()
                try:
                    # One fetch per URL at a time: xdist workers share the bare cache repo.
                    with file_lock(cache, f"repo-{_clone_cache(cache, str(source.url)).name}"):
                        checkout = _from_url(source, dest, cache, timeout, absent, committed)
                except RepositoryUnavailable as exc:
                    if notes:
                        raise RepositoryUnavailable(
                            exc.url, exc.revision, "; ".join([*notes, exc.reason])
                        ) from None
                    raise
        if checkout is not None and checkout.git_dir is not None and mirror_dir is not None:
            _fill_submodules(
                checkout.git_dir,
                checkout.commit,
                dest,
                str(source.url or ""),
                Path(mirror_dir),
                timeout,
                absent,
                submodules if submodules is not None else [],
            )
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            shutil.rmtree(dest)
        where = str(source.url or source.path)
        raise RepositoryUnavailable(
            where, source.revision, f"git timed out after {timeout:g}s"
        ) from None
    except BaseException:
        # A half-written tree must not be mistaken for a checkout by the next attempt.
        with contextlib.suppress(OSError):
            shutil.rmtree(dest)
        raise
    return tree_hash(dest)
