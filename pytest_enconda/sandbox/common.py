"""Shared pieces of the sandbox: the Docker client, labels, host identity, file locks."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import HarnessError

if TYPE_CHECKING:
    import docker

TOOL = "pytest-enconda"
Progress = Callable[[str], None]

# Docker image kinds we label; bases and rootfs imports are never pruned.
KIND_ROOTFS = "rootfs"
KIND_BASE = "base"
KIND_ENV = "env"
KIND_TASK = "task"
KIND_SNAPSHOT = "snapshot"
KIND_CONTAINER = "container"

_TAG_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def docker_client(timeout: float | None = 300) -> docker.DockerClient:
    """A connected client, or a ``HarnessError`` that says Docker is not reachable."""
    import docker
    from docker.errors import DockerException

    try:
        # docker-py hands timeout to requests, where None means none (the stream clients rely
        # on it); typeshed's stub for from_env says int only.
        client = docker.from_env(timeout=timeout)  # pyright: ignore[reportArgumentType]
        client.ping()
    except DockerException as exc:
        raise HarnessError(f"Docker engine not reachable: {exc}") from None
    except Exception as exc:  # requests/urllib3 errors escape docker-py on a dead socket
        raise HarnessError(f"Docker engine not reachable: {exc}") from None
    return client


def engine_free_space(client: docker.DockerClient) -> tuple[str, int] | None:
    """The engine's data root and the bytes free there, where this host can see it: the engine
    listens on this host's socket. None for a remote engine (``tcp://``, ``ssh://``) or a root
    in another mount namespace (docker-in-docker)."""
    import shutil

    # docker-py names a local socket's connection ``http+docker://localhost``.
    if str(client.api.base_url) != "http+docker://localhost":
        return None
    root = str(client.info().get("DockerRootDir") or "")
    if not root:
        return None
    try:
        return root, shutil.disk_usage(root).free
    except OSError:
        return None


def host_id() -> str:
    """Identifies the machine that created a container, so reaping only judges its own PIDs."""
    for candidate in (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id")):
        with contextlib.suppress(OSError):
            text = candidate.read_text().strip()
            if text:
                return hashlib.sha256(f"{text}:{socket.gethostname()}".encode()).hexdigest()[:16]
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:16]


def process_start_time(pid: int) -> str | None:
    """Kernel start time of ``pid`` (clock ticks since boot): tells a reused PID apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces and parentheses; fields resume after the last ')'.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int, start_time: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if start_time:
        current = process_start_time(pid)
        if current is not None and current != start_time:
            return False
    return True


def tag_safe(text: str, limit: int = 80) -> str:
    return _TAG_UNSAFE.sub("-", text).strip("-.")[:limit] or "x"


def stderr_progress(prefix: str = "[enconda]") -> Progress:
    """Print each build line to stderr at once so a first, minutes-long build never looks hung."""
    stream = sys.__stderr__ or sys.stderr

    def emit(line: str) -> None:
        print(f"{prefix} {line}", file=stream, flush=True)

    return emit


@contextlib.contextmanager
def file_lock(cache_dir: Path, name: str, progress: Progress | None = None) -> Iterator[None]:
    """An exclusive ``flock`` shared by all processes (xdist workers) using ``cache_dir``."""
    lock_dir = cache_dir / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = lock_dir / f"{tag_safe(name, 120)}.lock"
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress:
                progress(f"waiting for another process building {name}")
            started = time.monotonic()
            fcntl.flock(handle, fcntl.LOCK_EX)
            if progress:
                progress(f"lock on {name} acquired after {time.monotonic() - started:.1f}s")
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
