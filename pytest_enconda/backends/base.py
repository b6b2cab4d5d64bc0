"""The protocol every sandbox backend implements: boxes to run commands in, and their images.

A *box* is one running environment of one case and role (a Docker container, this host's own
interpreter and repository, a temporary directory). The harness only ever asks a box for what is
in this protocol, so agents, probes, final states and grading run unchanged on any backend, and
on the fake one in unit tests.

An *image* is whatever a box is started from: a Docker image tag, the host's existing
environment, a directory of the fake backend. ``Box.snapshot`` returns one, so a probe starts
fresh from what the agent left behind, never from the live box.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from ..sandbox.common import Progress
from ..sandbox.containers import BindMount, ExecResult
from ..sandbox.settings import PACKAGE_CACHE_ENV, PACKAGE_CACHES

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..sandbox.git_deps import GitDependency

__all__ = [
    "DOWNLOAD_CACHE_DIRS",
    "DOWNLOAD_CACHE_ENV",
    "Backend",
    "BindMount",
    "Box",
    "ExecResult",
    "Gpus",
    "download_cache_key",
    "host_gpu_count",
    "started",
]

# "none", "all" or a number of devices (the first ones), as ``--gpus`` takes them.
Gpus = Literal["none", "all"] | int
PROJECT_DIR = "/data/project"
# Where pip and uv keep what they download, in a box started with a ``download_cache`` key.
DOWNLOAD_CACHE_DIRS: Mapping[str, str] = PACKAGE_CACHES
# And what such a box's environment says so that boxes wait for each other's downloads.
DOWNLOAD_CACHE_ENV: Mapping[str, str] = PACKAGE_CACHE_ENV


def download_cache_key(case: Case) -> str:
    """The key of the download cache a case's setup boxes share: its base image (wheels built
    for one Python and C library are not reused by another)."""
    return f"base:{case.spec.base_image}"


@runtime_checkable
class Box(Protocol):
    """One running environment; ``remove`` ends it (the backend's ``close`` removes the rest)."""

    id: str
    name: str
    case_id: str
    role: str

    def exec(
        self,
        command: str,
        *,
        timeout: float,
        workdir: str = PROJECT_DIR,
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
        max_output: int = 64_000,
    ) -> ExecResult:
        """``bash -c command``; its whole process tree dies after ``timeout`` seconds (then
        ``timed_out`` and ``exit_code`` None). Output is stdout and stderr interleaved, its tail
        kept to ``max_output`` bytes; ``log_path`` gets all of it, appended."""
        ...

    def copy_in(self, src: Path | bytes, dest: str) -> None:
        """A host file, a host directory (its contents) or bytes to the absolute box path."""
        ...

    def copy_out(self, src: str, dest: Path, *, limit: int = ...) -> None:
        """A box file to host file ``dest``, or a box directory into ``dest``; links and special
        files are refused, and so is more than ``limit`` bytes in all (each backend has its
        default), before any of it is copied. ``FileNotFoundError`` when ``src`` does not
        exist."""
        ...

    def snapshot(self, tag_hint: str) -> str:
        """The box as it is now, as an image a later ``Backend.start`` can use."""
        ...

    def writable_size(self) -> int:
        """Bytes the box added to its image (what the agent installed or wrote)."""
        ...

    def free_bytes(self) -> int | None:
        """Free bytes where ``snapshot`` writes its image; None where that cannot be told
        (``diskspace``: then nothing is checked)."""
        ...

    def remove(self) -> None:
        """End the box and free what it holds; idempotent."""
        ...


@runtime_checkable
class Backend(Protocol):
    """Starts boxes and prepares the images they start from."""

    name: str
    # Host tools (pyright for C0) can run directly on a box's files: the box is this host.
    # A backend without it must honour ``mounts`` so the tools can be lent to the box instead.
    local_tools: bool
    # The image of an environment that already exists and is graded as it is (no agent runs,
    # no task image is built); None when every case gets a task image of its own.
    existing: str | None

    @property
    def keep(self) -> bool:
        """Boxes stay after use (``--keep-containers``): ``started`` does not remove them. Read
        only: Docker's follows its sandbox settings, which also label and remove containers."""
        ...

    @property
    def cache_dir(self) -> Path:
        """Where repositories are cached while materialising them for a task image."""
        ...

    def start(
        self,
        image: str,
        *,
        case_id: str,
        role: str,
        env: Mapping[str, str] | None = None,
        mounts: list[BindMount] | None = None,
        network: bool = True,
        gpus: Gpus | None = None,
        workdir: str = PROJECT_DIR,
        download_cache: str | None = None,
    ) -> Box:
        """A running box of ``image``; the caller removes it (or uses ``started``). ``gpus``
        None means the run's default (``--gpus``); ``mounts`` lend host folders read-only.

        ``download_cache`` is a key (``download_cache_key``: the case's base image): every box
        started with the same key shares one read-write pip and uv download cache at
        ``DOWNLOAD_CACHE_DIRS`` (a warm re-run downloads nothing), and no box with another key
        (or none) sees it. A backend whose boxes already share the host's own caches (the
        host backend) has nothing to mount."""
        ...

    def image_exists(self, image: str) -> bool: ...

    def free_bytes(self) -> int | None:
        """Free bytes where task images and snapshots are written; None where unknown."""
        ...

    def remove_snapshot(self, image: str) -> bool:
        """Remove a snapshot ``Box.snapshot`` made (a run's own, once its grading is done);
        any other image, or one already gone, is left. Whether it was removed."""
        ...

    def task_image(
        self,
        case: Case,
        repo_dir: Path,
        overrides: Mapping[str, bytes],
        *,
        tree_hash: str | None = None,
        progress: Progress | None = None,
        git_deps: Sequence[GitDependency] = (),
    ) -> str:
        """The image of ``case``: its base and environment layer, the repository in
        ``repo_dir`` at /data/project and ``overrides`` (path -> bytes) written over it."""
        ...

    def gpu_count(self) -> int:
        """GPUs a box of this run may use."""
        ...

    def reap_orphans(self) -> list[str]:
        """Remove what dead runs left behind; the names removed."""
        ...

    def close(self) -> None:
        """Remove every box still open (session end, and at exit)."""
        ...


@contextlib.contextmanager
def started(backend: Backend, image: str, **options: object) -> Iterator[Box]:
    """A box removed on exit: success, exception, timeout or KeyboardInterrupt (unless the
    backend keeps its boxes). Takes the keywords of ``Backend.start``."""
    box = backend.start(image, **options)  # type: ignore[arg-type]
    try:
        yield box
    finally:
        if not backend.keep:
            box.remove()


# Asked per gpu-marked item and per probe environment; the host's GPUs do not change mid-run.
@functools.cache
def host_gpu_count() -> int:
    """NVIDIA GPUs this host shows (``nvidia-smi -L``); 0 without the tool."""
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
