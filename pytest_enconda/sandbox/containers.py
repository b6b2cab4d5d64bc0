"""Containers for agents and probes: limits, labelled for cleanup, exec with a real timeout.

docker-py has no exec timeout, so each command runs under coreutils ``timeout -k`` inside the
container, which signals the command's whole process group; anything that escaped the group
(``setsid``, daemons) still carries the exec's marker variable and is killed by a sweep of
/proc. The host keeps its own deadline in case the engine itself stops answering.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ..errors import HarnessError
from .archive import (
    _READ_CHUNK,
    _ChunkReader,
    _extract_file,
    _extract_tree,
    _root_owned,
    _tar_single,
    _too_large,
)
from .common import (
    KIND_CONTAINER,
    KIND_SNAPSHOT,
    TOOL,
    docker_client,
    engine_free_space,
    host_id,
    process_start_time,
    tag_safe,
)
from .exec_result import ExecResult, _Tail
from .images import DETERMINISM_ENV, PROJECT_DIR
from .settings import PACKAGE_CACHE_ENV, PACKAGE_CACHES, SandboxSettings

if TYPE_CHECKING:
    import docker

MARKER_VAR = "ENCONDA_EXEC_ID"
KILL_GRACE = 5
# Beyond timeout + grace the in-container timeout has failed (or the engine hangs).
HOST_SLACK = 30
# What one copy out of a box may hold unless its caller bounds it more: a repository with its
# history fits, a runaway file the box made does not.
MAX_COPY_OUT_BYTES = 2 << 30

# POSIX sh so it also works in images without bash; loops because a dying tree may still fork.
_SWEEP = r"""
for round in 1 2 3; do
  found=0
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" = "$$" ] && continue
    if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "$1"; then
      kill -9 "$pid" 2>/dev/null && found=1
    fi
  done
  [ "$found" = 0 ] && break
  sleep 0.2
done
"""


class BindMount(BaseModel):
    """A host path mounted into the container, read-only unless asked otherwise."""

    source: Path
    target: str
    read_only: bool = True


def gpu_available() -> tuple[bool, str]:
    """Whether ``DeviceRequest`` GPUs can work here, and why not."""
    devices = sorted(Path("/dev").glob("nvidia[0-9]*"))
    if not devices:
        return False, "no NVIDIA GPU on this host (no /dev/nvidia[0-9]* device)"
    if not (shutil.which("nvidia-container-cli") or shutil.which("nvidia-container-runtime")):
        return False, (
            f"{len(devices)} NVIDIA device(s) found but the NVIDIA Container Toolkit is not "
            "installed (no nvidia-container-cli)"
        )
    return True, f"{len(devices)} NVIDIA device(s)"


def _device_requests(gpus: Literal["none", "all"] | int) -> list[Any]:
    if gpus == "none":
        return []
    available, reason = gpu_available()
    if not available:
        raise HarnessError(f"GPUs requested ({gpus}) but unavailable: {reason}")
    from docker.types import DeviceRequest

    count = -1 if gpus == "all" else int(gpus)
    return [DeviceRequest(count=count, capabilities=[["gpu"]])]


class Container:
    """A running container of one case and role; made by ``Sandbox.create``/``container``."""

    def __init__(self, sandbox: Sandbox, container_id: str, name: str, case_id: str, role: str):
        self.sandbox = sandbox
        self.id = container_id
        self.name = name
        self.case_id = case_id
        self.role = role
        self.removed = False

    def __repr__(self) -> str:
        return f"Container({self.name}, {self.id[:12]})"

    @property
    def _api(self) -> Any:
        return self.sandbox.client.api

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
        """Run ``command`` with ``bash -c``; the whole process tree dies after ``timeout`` s."""
        from docker.errors import APIError

        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        marker = uuid.uuid4().hex
        environment = {**(env or {}), MARKER_VAR: marker}
        # One pipe for both streams keeps their order; sh execs timeout, so nothing is added
        # to the process tree.
        argv = [
            "sh",
            "-c",
            'exec "$@" 2>&1',
            "sh",
            "timeout",
            "-k",
            str(KILL_GRACE),
            f"{timeout:.3f}",
            "bash",
            "-c",
            command,
        ]
        try:
            exec_id = self._api.exec_create(
                self.id, argv, stdout=True, stderr=True, environment=environment, workdir=workdir
            )["Id"]
        except APIError as exc:
            raise HarnessError(f"cannot exec in container {self.name}: {exc}") from None

        tail = _Tail(max_output)
        failures: list[BaseException] = []
        stream_api = self.sandbox.stream_client.api
        with contextlib.ExitStack() as stack:
            log: IO[bytes] | None = None
            if log_path is not None:
                Path(log_path).parent.mkdir(parents=True, exist_ok=True)
                log = stack.enter_context(Path(log_path).open("ab"))

            def pump() -> None:
                try:
                    for chunk in stream_api.exec_start(exec_id, stream=True):
                        tail.add(chunk)
                        if log is not None:
                            log.write(chunk)
                            log.flush()
                except BaseException as exc:
                    failures.append(exc)

            started = time.monotonic()
            reader = threading.Thread(target=pump, name=f"exec-{self.name}", daemon=True)
            host_killed = False
            try:
                reader.start()
                reader.join(timeout + KILL_GRACE + HOST_SLACK)
                if reader.is_alive():
                    host_killed = True
                    self._sweep(marker)
                    reader.join(10)
            except BaseException:
                # KeyboardInterrupt: leave nothing of this command running in the container.
                self._sweep(marker)
                raise
            finally:
                duration = time.monotonic() - started

        info = self._api.exec_inspect(exec_id)
        exit_code = None if info.get("Running") else info.get("ExitCode")
        timed_out = host_killed or (exit_code in (124, 137) and duration >= timeout - 0.05)
        if timed_out:
            self._sweep(marker)
            exit_code = None
        elif failures and exit_code is None:
            raise HarnessError(f"exec in {self.name} lost its output stream: {failures[0]}")
        output, truncated = tail.text()
        return ExecResult(
            exit_code=exit_code,
            output=output,
            duration=duration,
            timed_out=timed_out,
            truncated=truncated,
            output_bytes=tail.total,
        )

    def _sweep(self, marker: str) -> None:
        """Kill every process that inherited this exec's marker, inside or outside its group."""
        from docker.errors import APIError

        with contextlib.suppress(APIError):
            self._api.exec_start(
                self._api.exec_create(
                    self.id, ["sh", "-c", _SWEEP, "sweep", f"{MARKER_VAR}={marker}"], user="root"
                )["Id"]
            )

    def copy_in(self, src: Path | bytes, dest: str) -> None:
        """Copy a host file, a host directory (its contents) or bytes to absolute ``dest``."""
        from docker.errors import APIError

        target = PurePosixPath(dest)
        if not target.is_absolute():
            raise ValueError(f"container path must be absolute: {dest!r}")
        rel = target.relative_to("/").as_posix()
        with tempfile.TemporaryFile() as archive:
            if isinstance(src, bytes):
                archive.write(_tar_single(rel, src).getvalue())
            else:
                path = Path(src)
                if not path.exists():
                    raise FileNotFoundError(f"copy_in: {path} does not exist")
                with tarfile.open(fileobj=archive, mode="w") as tar:
                    tar.add(str(path), arcname=rel, recursive=True, filter=_root_owned)
            archive.seek(0)
            try:
                # Extracting at / lets the engine create missing parents of dest.
                self._api.put_archive(self.id, "/", archive)
            except APIError as exc:
                raise HarnessError(f"copy into {self.name}:{dest} failed: {exc}") from None

    def copy_out(self, src: str, dest: Path, *, limit: int = MAX_COPY_OUT_BYTES) -> None:
        """Copy container file ``src`` to host file ``dest``, or a directory into ``dest``.

        The box's archive is read as it streams and each member is checked before a byte of it
        is read: at most ``limit`` bytes in all, only regular files and folders, and links only
        within what is copied; anything else is a ``HarnessError`` naming the member and the
        bound, so a box's 3 GiB sparse file costs neither memory nor disk."""
        from docker.errors import APIError, NotFound

        label = f"{self.name}:{src}"
        try:
            stream, stat = self._api.get_archive(self.id, src)
        except NotFound:
            raise FileNotFoundError(f"copy_out: {label} does not exist") from None
        except APIError as exc:
            raise HarnessError(f"copy out of {label} failed: {exc}") from None
        mode = int(stat.get("mode", 0))
        is_dir = bool(mode & _MODE_DIR)
        try:
            size = int(stat.get("size") or 0)
            if not is_dir and not mode & _MODE_TYPE and size > limit:
                # Refused on the engine's word, before the archive is read at all.
                raise HarnessError(f"copy out of {label}: {_too_large(src, size, limit)}")
            reader = io.BufferedReader(_ChunkReader(iter(stream)), _READ_CHUNK)
            with tarfile.open(fileobj=reader, mode="r|") as tar:
                if is_dir:
                    _extract_tree(tar, Path(dest), limit=limit, label=label)
                else:
                    _extract_file(tar, Path(dest), limit=limit, label=label)
        except tarfile.TarError as exc:
            raise HarnessError(f"copy out of {label}: a malformed archive: {exc}") from None
        finally:
            # Unread, the rest of the archive is left to the engine: the response is dropped.
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    def snapshot(self, tag_hint: str) -> str:
        """Commit the container as a labelled image (probes run there, not in the live one)."""
        from docker.errors import APIError

        settings = self.sandbox.settings
        prefix = settings.labels_prefix
        repository = f"{settings.image_prefix}/snapshot"
        tag = f"{tag_safe(tag_hint, 60)}-{uuid.uuid4().hex[:8]}"
        labels = {
            f"{prefix}.tool": TOOL,
            f"{prefix}.kind": KIND_SNAPSHOT,
            f"{prefix}.run": self.sandbox.run_id,
            f"{prefix}.case": self.case_id,
            f"{prefix}.source_role": self.role,
            f"{prefix}.created": datetime.now(UTC).isoformat(timespec="seconds"),
            # Inherited container labels must not make a snapshot's containers look orphaned.
            f"{prefix}.role": "",
            f"{prefix}.pid": "",
            f"{prefix}.pid_start": "",
            f"{prefix}.host": "",
            f"{prefix}.keep": "",
        }
        changes = [f"LABEL {key}={_quote(value)}" for key, value in labels.items()]
        changes.append('CMD ["bash"]')
        try:
            self._api.commit(self.id, repository=repository, tag=tag, changes=changes)
        except APIError as exc:
            raise HarnessError(f"snapshot of {self.name} failed: {exc}") from None
        return f"{repository}:{tag}"

    def free_bytes(self) -> int | None:
        """Free bytes on the engine's data root, where the snapshot goes (None: unknown)."""
        space = engine_free_space(self.sandbox.client)
        return None if space is None else space[1]

    def writable_size(self) -> int:
        """Bytes in the container's writable layer (what the agent installed or wrote)."""
        rows = self._api.containers(all=True, size=True, filters={"id": self.id})
        if not rows:
            raise HarnessError(f"container {self.name} no longer exists")
        return int(rows[0].get("SizeRw") or 0)

    def inspect(self) -> dict[str, Any]:
        return self._api.inspect_container(self.id)

    def remove(self) -> None:
        from docker.errors import APIError, NotFound

        if self.removed:
            return
        try:
            self._api.remove_container(self.id, force=True, v=True)
        except NotFound:
            pass
        except APIError as exc:
            # "removal already in progress" is success for us; anything else is left to reaping.
            if "already in progress" not in str(exc):
                raise HarnessError(f"cannot remove container {self.name}: {exc}") from None
        self.removed = True
        self.sandbox._forget(self)


def _quote(value: str) -> str:
    import json

    return json.dumps(value)


# The engine's file mode bits (Go's fs.FileMode): a folder, and any type but a regular file.
_MODE_DIR = 1 << 31
_MODE_TYPE = (1 << 31) | (1 << 27) | (1 << 26) | (1 << 25) | (1 << 24) | (1 << 22) | (1 << 21)


def _close_at_exit(ref: weakref.ReferenceType[Sandbox]) -> None:
    sandbox = ref()
    if sandbox is not None:
        sandbox.close()


def new_run_id() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


class Sandbox:
    """Creates labelled containers for one run and removes them whatever happens."""

    def __init__(
        self,
        settings: SandboxSettings | None = None,
        run_id: str | None = None,
        *,
        client: docker.DockerClient | None = None,
    ) -> None:
        self.settings = settings or SandboxSettings.from_env()
        self.run_id = run_id or new_run_id()
        self._client = client
        self._stream_client: docker.DockerClient | None = None
        self._live: dict[str, Container] = {}
        self._lock = threading.Lock()
        self._volumes_ready: set[str] = set()
        self._ncpu: int | None = None
        # A weak reference: the exit hook must not keep every Sandbox of a session alive.
        atexit.register(_close_at_exit, weakref.ref(self))

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = docker_client()
        return self._client

    @property
    def stream_client(self) -> docker.DockerClient:
        """A client without read timeout: a command may stay silent for its whole budget."""
        if self._stream_client is None:
            self._stream_client = docker_client(timeout=None)
        return self._stream_client

    def _labels(self, case_id: str, role: str) -> dict[str, str]:
        prefix = self.settings.labels_prefix
        pid = os.getpid()
        return {
            f"{prefix}.tool": TOOL,
            f"{prefix}.kind": KIND_CONTAINER,
            f"{prefix}.run": self.run_id,
            f"{prefix}.case": case_id,
            f"{prefix}.role": role,
            f"{prefix}.pid": str(pid),
            f"{prefix}.pid_start": process_start_time(pid) or "",
            f"{prefix}.host": host_id(),
            f"{prefix}.created": datetime.now(UTC).isoformat(timespec="seconds"),
            f"{prefix}.keep": "1" if self.settings.keep_containers else "",
        }

    def cache_volumes(self, identity: str) -> dict[str, str]:
        """The download cache volumes of ``identity`` (a base image's tag), by mount target:
        ``<prefix>-<tool>-cache-<sha256(identity)[:16]>``, one per tool."""
        prefix = self.settings.image_prefix.replace("/", "-")
        digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]
        return {
            target: f"{prefix}-{tool}-cache-{digest}" for tool, target in PACKAGE_CACHES.items()
        }

    def _cache_mounts(self, identity: str | None) -> list[Any]:
        from docker.errors import APIError, NotFound
        from docker.types import Mount

        if identity is None or not self.settings.package_cache:
            return []
        volumes = self.cache_volumes(identity)
        for name in volumes.values():
            if name in self._volumes_ready:
                continue
            try:
                self.client.volumes.get(name)
            except NotFound:
                labels = {
                    f"{self.settings.labels_prefix}.tool": TOOL,
                    f"{self.settings.labels_prefix}.kind": "cache",
                    f"{self.settings.labels_prefix}.cache-key": identity[:200],
                }
                try:
                    self.client.volumes.create(name, labels=labels)
                except APIError:  # made by another worker meanwhile
                    self.client.volumes.get(name)
            self._volumes_ready.add(name)
        return [
            Mount(target=target, source=name, type="volume") for target, name in volumes.items()
        ]

    def _nano_cpus(self) -> int:
        if self._ncpu is None:
            self._ncpu = int(self.client.info().get("NCPU") or os.cpu_count() or 1)
        # The engine rejects more CPUs than it has; a 2-CPU default must still run on 1 CPU.
        return int(min(self.settings.cpus, self._ncpu) * 1e9)

    def create(
        self,
        image: str,
        *,
        case_id: str,
        role: str,
        env: Mapping[str, str] | None = None,
        mounts: list[BindMount | Any] | None = None,
        network: bool = True,
        gpus: Literal["none", "all"] | int | None = None,
        workdir: str = PROJECT_DIR,
        download_cache: str | None = None,
    ) -> Container:
        """Create and start a container; the caller must ``remove()`` it (or use ``container``).
        ``download_cache`` (a base image's tag) mounts that base's pip and uv cache volumes."""
        from docker.errors import APIError, ImageNotFound
        from docker.types import Mount

        docker_mounts: list[Any] = []
        for mount in mounts or []:
            if isinstance(mount, BindMount):
                docker_mounts.append(
                    Mount(
                        target=mount.target,
                        source=str(Path(mount.source).resolve()),
                        type="bind",
                        read_only=mount.read_only,
                    )
                )
            else:
                docker_mounts.append(mount)
        cache_mounts = self._cache_mounts(download_cache)
        docker_mounts += cache_mounts
        environment = {
            **DETERMINISM_ENV,
            **self.settings.proxy_env,
            **(PACKAGE_CACHE_ENV if cache_mounts else {}),
            **(env or {}),
        }
        name = "-".join(
            [
                "enconda",
                tag_safe(self.run_id, 24),
                tag_safe(case_id, 40),
                tag_safe(role, 16),
                uuid.uuid4().hex[:6],
            ]
        )
        try:
            handle = self.client.containers.create(
                image,
                command=["sleep", "infinity"],
                init=True,
                detach=True,
                name=name,
                labels=self._labels(case_id, role),
                environment=environment,
                working_dir=workdir,
                network_mode=self.settings.network_mode if network else "none",
                nano_cpus=self._nano_cpus(),
                mem_limit=self.settings.memory,
                memswap_limit=self.settings.memory,
                shm_size=self.settings.shm_size,
                pids_limit=self.settings.pids_limit,
                device_requests=_device_requests(gpus if gpus is not None else self.settings.gpus),
                mounts=docker_mounts,
            )
        except ImageNotFound:
            raise HarnessError(f"image {image} not found (build it first)") from None
        except APIError as exc:
            raise HarnessError(f"cannot create container from {image}: {exc}") from None
        assert handle.id is not None  # the engine's create answers with the new container's Id
        box = Container(self, handle.id, name, case_id, role)
        with self._lock:
            self._live[box.id] = box
        try:
            handle.start()
        except BaseException as exc:
            box.remove()
            if isinstance(exc, APIError):
                raise HarnessError(f"cannot start container from {image}: {exc}") from None
            raise
        return box

    @contextlib.contextmanager
    def container(self, image: str, **options: Any) -> Iterator[Container]:
        """A container removed on exit: success, exception, timeout or KeyboardInterrupt.

        Takes the keywords of ``create`` (``case_id`` and ``role`` are required).
        """
        box = self.create(image, **options)
        try:
            yield box
        finally:
            if not self.settings.keep_containers:
                box.remove()

    def _forget(self, box: Container) -> None:
        with self._lock:
            self._live.pop(box.id, None)

    @property
    def live(self) -> list[Container]:
        with self._lock:
            return list(self._live.values())

    def close(self) -> None:
        """Remove every container still open (the plugin calls it at session end; atexit too)."""
        if self.settings.keep_containers:
            return
        for box in self.live:
            with contextlib.suppress(HarnessError):
                box.remove()

    def reap_orphans(self) -> list[str]:
        from .cleanup import reap_orphans

        return reap_orphans(self.settings, client=self.client)
