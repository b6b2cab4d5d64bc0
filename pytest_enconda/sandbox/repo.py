"""Put a case's repository on the host: from a folder, a local git repository, or a git URL.

Remote clones go through a bare cache repository per URL, so a warm run fetches nothing; a local
mirror directory is consulted before the network because most machines running the benchmark
cannot reach every repository host (here: no GitHub at all).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

from ..cases.models import RepoSource
from ..cases.operands import option_shaped
from ..errors import HarnessError, RepositoryUnavailable
from .common import file_lock
from .settings import default_cache_dir

# Never part of what the agent gets: VCS metadata and the host's own caches/venvs.
IGNORED_NAMES = frozenset({".git", "__pycache__", ".venv"})

# git must never stop to ask for a password (GitHub answers "auth required" for missing repos)
# and a user's LFS install must not try to download objects during checkout.
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
    "GIT_LFS_SKIP_SMUDGE": "1",
}
_GIT_CONFIG = [
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.symlinks=true",
    "-c",
    "advice.detachedHead=false",
]
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


def _git(
    args: list[str], *, timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **_GIT_ENV, **(env or {})}
    return subprocess.run(
        ["git", *_GIT_CONFIG, *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _last_lines(text: str, count: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-count:]) or "no output"


def _git_dir(repo: Path, timeout: float) -> Path | None:
    result = _git(["-C", str(repo), "rev-parse", "--absolute-git-dir"], timeout=timeout)
    if result.returncode != 0:
        return None
    return Path(result.stdout.strip())


def _resolve(git_dir: Path, revision: str, timeout: float) -> str | None:
    # The revision comes from a case or dataset: after --end-of-options it names a revision
    # even where it looks like an option.
    result = _git(
        [
            "--git-dir",
            str(git_dir),
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{revision}^{{commit}}",
        ],
        timeout=timeout,
    )
    return result.stdout.strip() if result.returncode == 0 else None


def _git_bytes(
    args: list[str], *, timeout: float, env: dict[str, str] | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """``_git`` in bytes: paths from ``-z`` output may hold any byte, newlines and CRs included,
    which text mode would decode strictly and translate."""
    return subprocess.run(
        ["git", *_GIT_CONFIG, *args],
        input=stdin,
        env={**os.environ, **_GIT_ENV, **(env or {})},
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def _missing_blobs(git_dir: Path, commit: str, timeout: float) -> list[bytes]:
    """Paths (raw bytes) of the blobs ``commit`` names that the object store lacks.

    Fetched snapshots often leave out their largest files' contents. Gitlinks (submodules) are
    not blobs and never were in this store, so they are not counted.
    """
    listing = _git_bytes(
        ["--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit], timeout=timeout
    )
    if listing.returncode != 0:
        stderr = listing.stderr.decode(errors="replace")
        raise HarnessError(f"git ls-tree of {commit} from {git_dir} failed: {_last_lines(stderr)}")
    paths_of: dict[bytes, list[bytes]] = {}
    for entry in listing.stdout.split(b"\0"):
        if not entry:
            continue
        # "<mode> SP <type> SP <object> TAB <path>"; the path may hold tabs and spaces itself.
        meta, _, path = entry.partition(b"\t")
        fields = meta.split(b" ")
        if len(fields) == 3 and fields[1] == b"blob":
            paths_of.setdefault(fields[2], []).append(path)
    if not paths_of:
        return []
    check = _git_bytes(
        ["--git-dir", str(git_dir), "cat-file", "--batch-check"],
        timeout=timeout,
        # "missing" must mean absent here, never a lazy fetch from a partial clone's remote.
        env={"GIT_NO_LAZY_FETCH": "1"},
        stdin=b"".join(sha + b"\n" for sha in paths_of),
    )
    if check.returncode != 0:
        stderr = check.stderr.decode(errors="replace")
        raise HarnessError(f"git cat-file of {commit} from {git_dir} failed: {_last_lines(stderr)}")
    missing: list[bytes] = []
    for line in check.stdout.splitlines():
        sha, _, state = line.partition(b" ")
        if state == b"missing":
            missing += paths_of.get(sha, [])
    return missing


def _export(
    git_dir: Path,
    commit: str,
    dest: Path,
    timeout: float,
    absent: list[str] | None = None,
    committed: list[str] | None = None,
) -> None:
    """Check ``commit`` out into ``dest`` without touching the repository's HEAD or index.

    ``git archive`` is not used because it honours ``export-ignore`` and would drop files.
    With ``absent`` a list, blobs the object store lacks are left out of the checkout and their
    paths (sorted) appended to it; without, a missing blob fails the checkout. With
    ``committed`` a list, the commit's time (ISO 8601, UTC) is appended to it.
    """
    if committed is not None:
        shown = _git(
            ["--git-dir", str(git_dir), "show", "-s", "--format=%ct", commit], timeout=timeout
        )
        if shown.returncode == 0 and shown.stdout.strip().isdigit():
            moment = datetime.fromtimestamp(int(shown.stdout.strip()), UTC)
            committed.append(moment.isoformat(timespec="seconds").replace("+00:00", "Z"))
    with tempfile.TemporaryDirectory(prefix="enconda-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        base = ["--git-dir", str(git_dir), "--work-tree", str(dest)]
        checkout = ["checkout-index", "--all", "--force"]
        for args in (["read-tree", commit], checkout):
            result = _git(base + args, timeout=timeout, env=env)
            if result.returncode == 0:
                continue
            failure = (
                f"git {args[0]} of {commit} from {git_dir} failed: {_last_lines(result.stderr)}"
            )
            # Only a failed checkout pays for the search, so a complete store costs nothing more.
            if absent is None or args is not checkout:
                raise HarnessError(failure)
            missing = _missing_blobs(git_dir, commit, timeout)
            if not missing:
                raise HarnessError(failure)
            removed = _git_bytes(
                [*base, "update-index", "--force-remove", "-z", "--stdin"],
                timeout=timeout,
                env=env,
                stdin=b"".join(path + b"\0" for path in missing),
            )
            if removed.returncode != 0:
                stderr = removed.stderr.decode(errors="replace")
                raise HarnessError(f"{failure}; dropping the missing files: {_last_lines(stderr)}")
            # The failed attempt wrote the rest; an emptied dest leaves no half-written file.
            _empty(dest)
            result = _git(base + checkout, timeout=timeout, env=env)
            if result.returncode != 0:
                raise HarnessError(
                    f"git checkout-index of {commit} from {git_dir} without its "
                    f"{len(missing)} missing files failed: {_last_lines(result.stderr)}"
                )
            absent.extend(sorted(path.decode(errors="backslashreplace") for path in missing))


def describe_absent(absent: list[str], done: str, shown: int = 3) -> str:
    """``N file(s), <done>: a, b, c ...``: how progress lines name the files a snapshot lacked."""
    more = " ..." if len(absent) > shown else ""
    return f"{len(absent)} file(s), {done}: {', '.join(absent[:shown])}{more}"


def _empty(folder: Path) -> None:
    """Remove what ``folder`` holds, links as links (never followed), keeping the folder."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


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


class _Checkout(NamedTuple):
    """Where a checkout came from: its git directory and commit (none for a plain folder)."""

    git_dir: Path | None
    commit: str


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


# A .gitmodules larger than this is not read (a real one lists a few dozen entries).
_GITMODULES_MAX = 256 * 1024
# Submodules of submodules are followed this deep.
_SUBMODULE_DEPTH = 3


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
            said.append(f"{shown}: {wanted[:12]} of {declared} is not in the mirror; left empty")
            continue
        target.mkdir(parents=True, exist_ok=True)
        missing: list[str] | None = [] if absent is not None else None
        try:
            _export(found.git_dir, wanted, target, timeout, missing)
        except HarnessError as exc:
            _empty(target)
            said.append(f"{shown}: {wanted[:12]} could not be checked out; left empty: {exc}")
            continue
        if absent is not None and missing:
            absent.extend(f"{shown}/{name}" for name in missing)
        said.append(f"{shown}: {wanted[:12]} from the mirror ({found.git_dir})")
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
