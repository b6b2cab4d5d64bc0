"""git plumbing for checkouts: git run without prompts, a revision resolved, a commit exported
into a folder without touching the repository's HEAD or index (missing blobs left out on request).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from ..errors import HarnessError

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


class _Checkout(NamedTuple):
    """Where a checkout came from: its git directory and commit (none for a plain folder)."""

    git_dir: Path | None
    commit: str


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


def _empty(folder: Path) -> None:
    """Remove what ``folder`` holds, links as links (never followed), keeping the folder."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
