"""The host: an environment that already exists on this machine (``--python``/``--repo``).

For clusters without Docker. There is one box, the existing environment itself: commands run
here, from the repository, with the interpreter's folder first on ``PATH`` (so ``python``,
``pip`` and ``torchrun`` are the ones under test). Nothing is built and nothing is isolated;
a snapshot is the environment itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..errors import HarnessError
from .base import PROJECT_DIR, Gpus, host_gpu_count

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..sandbox.common import Progress
    from ..sandbox.containers import BindMount, ExecResult
    from ..sandbox.git_deps import GitDependency

EXISTING = "host:existing"


class HostBox:
    """The existing environment; what ``copy_in`` wrote outside the repository goes on remove."""

    def __init__(
        self, backend: HostBackend, *, case_id: str, role: str, env: Mapping[str, str], gpus: Gpus
    ) -> None:
        self.backend = backend
        self.id = uuid.uuid4().hex
        self.name = f"host-{case_id}-{role}-{self.id[:6]}"
        self.case_id = case_id
        self.role = role
        self.env = dict(env)
        self.gpus = gpus
        self._created: list[Path] = []
        self.removed = False

    def path(self, box_path: str) -> Path:
        """The host path of a box path: itself, except that the containers' /data/project (the
        default working directory) is the repository when this host has no such folder."""
        pure = PurePosixPath(box_path)
        inside = pure == PurePosixPath(PROJECT_DIR) or PurePosixPath(PROJECT_DIR) in pure.parents
        if inside and not Path(PROJECT_DIR).exists():
            return self.backend.repo_dir / pure.relative_to(PROJECT_DIR)
        return Path(box_path)

    def _variables(self, env: Mapping[str, str] | None) -> dict[str, str]:
        variables = {**os.environ, **self.env, **(env or {})}
        bindir = str(self.backend.python.parent)
        variables["PATH"] = bindir + os.pathsep + variables.get("PATH", "")
        # What a container's device request decides elsewhere, CUDA's own variable decides here.
        if self.gpus == "none":
            variables["CUDA_VISIBLE_DEVICES"] = ""
        elif self.gpus != "all":
            variables["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(int(self.gpus)))
        return variables

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
        from .local import run_local

        return run_local(
            command,
            cwd=self.path(workdir),
            env=self._variables(env),
            timeout=timeout,
            log_path=log_path,
            max_output=max_output,
        )

    def copy_in(self, src: Path | bytes, dest: str) -> None:
        if not PurePosixPath(dest).is_absolute():
            raise ValueError(f"box path must be absolute: {dest!r}")
        target = self.path(dest)
        # Remember the topmost folder this copy creates, so remove() leaves the host as it was.
        top = target
        while not top.parent.exists():
            top = top.parent
        if not top.exists():
            self._created.append(top)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(src, bytes):
            target.write_bytes(src)
        elif Path(src).is_dir():
            shutil.copytree(src, target, symlinks=True, dirs_exist_ok=True)
        elif Path(src).exists():
            shutil.copyfile(src, target, follow_symlinks=False)
        else:
            raise FileNotFoundError(f"copy_in: {src} does not exist")

    def copy_out(self, src: str, dest: Path, *, limit: int | None = None) -> None:
        from .local import copy_tree_out

        copy_tree_out(self.path(src), Path(dest), label=f"{self.name}:{src}", limit=limit)

    def snapshot(self, tag_hint: str) -> str:
        # The environment is graded where it is: it cannot be frozen, only pointed at.
        return EXISTING

    def writable_size(self) -> int:
        return 0

    def free_bytes(self) -> int | None:
        return None

    def remove(self) -> None:
        if self.removed:
            return
        for path in reversed(self._created):
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        self.removed = True
        self.backend._live.pop(self.id, None)


class HostBackend:
    name = "host"
    local_tools = True
    existing: str | None = EXISTING
    keep = False

    def __init__(self, python: Path | str, repo_dir: Path | str, *, gpus: int | None = None):
        self.python = Path(python)
        self.repo_dir = Path(repo_dir)
        self._gpus = gpus
        self._live: dict[str, HostBox] = {}

    @property
    def cache_dir(self) -> Path:
        from ..cache import default_cache_dir

        return default_cache_dir()

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
    ) -> HostBox:
        # ``download_cache``: the host's own pip and uv caches are already shared by every
        # command run here; there is nothing to mount.
        if image != EXISTING:
            raise HarnessError(f"the host backend runs only its existing environment, not {image}")
        if mounts:
            raise HarnessError("the host backend cannot mount folders: run the tool directly")
        box = HostBox(self, case_id=case_id, role=role, env=env or {}, gpus=gpus or "all")
        self._live[box.id] = box
        return box

    def image_exists(self, image: str) -> bool:
        return image == EXISTING

    def free_bytes(self) -> int | None:
        # The existing environment is graded in place: nothing is written to check for.
        return None

    def remove_snapshot(self, image: str) -> bool:
        return False  # the existing environment is never removed

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
        raise HarnessError(
            "the host backend grades an existing environment (--python/--repo): it builds no "
            f"task image for {case.id}"
        )

    def gpu_count(self) -> int:
        return host_gpu_count() if self._gpus is None else self._gpus

    def reap_orphans(self) -> list[str]:
        return []

    def close(self) -> None:
        for box in list(self._live.values()):
            box.remove()
