"""A fake backend for unit tests: boxes are temporary directories, images are directories too.

Everything at absolute path ``/x`` in a box lives at ``<box root>/x``. ``exec`` runs ``bash -c``
on this host in the box's working directory, with the box's own paths (``/data/project``,
``/enconda/...``, ``/tmp/enconda...`` and any mount target) rewritten to their place under the
root, so a command written for a container works on its files; text copied in as bytes (a setup
script) is rewritten alike. Files copied in from host paths are copied as they are, and paths
rewritten into a box's files name that box's root (a snapshot of it keeps them as they were).

A test may instead install a ``responder`` that answers some commands with canned results (and
may write files in the box, as a real command would). Every call is recorded in ``calls``.

It is no sandbox: a command can still reach the host. Tests run their own commands only.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import HarnessError
from ..sandbox.containers import BindMount, ExecResult
from .base import DOWNLOAD_CACHE_DIRS, DOWNLOAD_CACHE_ENV, PROJECT_DIR, Gpus
from .local import copy_tree_out, run_local

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..sandbox.common import Progress
    from ..sandbox.git_deps import GitDependency

# Box paths rewritten in commands: where the harness puts things (not /usr, /bin: those stay
# the host's, so bash, python3 and coreutils are found).
BOX_PREFIXES = ("/data/", "/enconda/", "/tmp/enconda")


@dataclass
class FakeCall:
    """One operation on the fake backend, for assertions."""

    op: str
    box: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


# (box, command, timeout, workdir, env) -> a canned result, or None to run the command for real.
Responder = Callable[["FakeBox", str, float, str, Mapping[str, str]], ExecResult | None]


def canned(output: str = "", exit_code: int | None = 0, *, timed_out: bool = False) -> ExecResult:
    """A result as ``exec`` returns it (timed out: no exit code)."""
    return ExecResult(
        exit_code=None if timed_out else exit_code,
        output=output,
        duration=0.0,
        timed_out=timed_out,
        truncated=False,
        output_bytes=len(output.encode()),
    )


def _dir_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


class FakeBox:
    def __init__(
        self,
        backend: FakeBackend,
        root: Path,
        *,
        image: str,
        case_id: str,
        role: str,
        env: Mapping[str, str],
        mounts: list[BindMount],
        network: bool,
        gpus: Gpus | None,
    ) -> None:
        self.backend = backend
        self.root = root
        self.image = image
        self.id = uuid.uuid4().hex
        self.name = f"fake-{case_id.replace('/', '-')}-{role}-{self.id[:6]}"
        self.case_id = case_id
        self.role = role
        self.env = dict(env)
        self.mounts = list(mounts)
        self.network = network
        self.gpus = gpus
        self.removed = False
        self._base_size = _dir_size(root)
        self._prefixes = tuple(BOX_PREFIXES) + tuple(m.target for m in mounts)
        for mount in mounts:
            # A link, not a copy: a mount is the host's folder, read where it is.
            link = self.path(mount.target)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(Path(mount.source).resolve())

    def path(self, box_path: str) -> Path:
        """The host path of an absolute box path."""
        pure = PurePosixPath(box_path)
        if not pure.is_absolute():
            raise ValueError(f"box path must be absolute: {box_path!r}")
        return self.root / pure.relative_to("/")

    def translate(self, text: str) -> str:
        """``text`` with the box's own absolute paths rewritten under the root."""
        alternatives = "|".join(re.escape(p) for p in sorted(self._prefixes, key=len, reverse=True))
        pattern = re.compile(rf"(?<![\w./-])(?:{alternatives})")
        # A host path the box already gave back (a setup's ``export -p`` under a backend rooted
        # in /tmp/enconda-fake-...) is left as it is: it is not the box's.
        host = str(self.backend.root)

        def rewrite(match: re.Match[str]) -> str:
            if match.string.startswith(host, match.start()):
                return match.group(0)
            return str(self.root) + match.group(0)

        return pattern.sub(rewrite, text)

    def _translate_bytes(self, data: bytes) -> bytes:
        """Scripts the harness writes (setup.sh, a prompt) name box paths too: text is rewritten
        as commands are; anything that is not UTF-8 is copied as it is."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        return self.translate(text).encode("utf-8")

    def _record(self, op: str, **detail: Any) -> None:
        self.backend.calls.append(FakeCall(op, self.name, detail))

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
        if self.removed:
            raise HarnessError(f"{self.name} was removed")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        variables = {**self.env, **(env or {})}
        self._record("exec", command=command, timeout=timeout, workdir=workdir, env=variables)
        if self.backend.responder is not None:
            answer = self.backend.responder(self, command, timeout, workdir, variables)
            if answer is not None:
                if log_path is not None:
                    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
                    with Path(log_path).open("a", encoding="utf-8") as log:
                        log.write(answer.output)
                return answer
        cwd = self.path(workdir)
        cwd.mkdir(parents=True, exist_ok=True)
        host_env = {**os.environ, **{k: self.translate(v) for k, v in variables.items()}}
        return run_local(
            self.translate(command),
            cwd=cwd,
            env=host_env,
            timeout=timeout,
            log_path=log_path,
            max_output=max_output,
        )

    def copy_in(self, src: Path | bytes, dest: str) -> None:
        self._record("copy_in", dest=dest, source=None if isinstance(src, bytes) else str(src))
        target = self.path(dest)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(src, bytes):
            target.write_bytes(self._translate_bytes(src))
            return
        source = Path(src)
        if not source.exists():
            raise FileNotFoundError(f"copy_in: {source} does not exist")
        if source.is_dir():
            # As ``tar.add`` does: links are copied as links, never followed.
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, target, follow_symlinks=False)

    def copy_out(self, src: str, dest: Path, *, limit: int | None = None) -> None:
        self._record("copy_out", source=src, dest=str(dest))
        copy_tree_out(self.path(src), Path(dest), label=f"{self.name}:{src}", limit=limit)

    def snapshot(self, tag_hint: str) -> str:
        ref = f"fake/snapshot:{tag_hint}-{uuid.uuid4().hex[:8]}"
        self._record("snapshot", image=ref)
        target = self.backend.image_dir(ref)
        # Mounts are not part of the box: a snapshot does not keep them.
        shutil.copytree(
            self.root,
            target,
            symlinks=True,
            ignore=lambda folder, names: [
                n for n in names if Path(folder, n) in {self.path(m.target) for m in self.mounts}
            ],
        )
        self.backend.images[ref] = target
        return ref

    def writable_size(self) -> int:
        return max(_dir_size(self.root) - self._base_size, 0)

    def free_bytes(self) -> int | None:
        return self.backend.free_bytes()

    def remove(self) -> None:
        if self.removed:
            return
        self._record("remove")
        self.removed = True
        shutil.rmtree(self.root, ignore_errors=True)
        self.backend.live.pop(self.id, None)


class FakeBackend:
    """Images and boxes as folders under ``root`` (a new temporary folder by default)."""

    name = "fake"
    local_tools = False
    keep = False

    def __init__(
        self,
        root: Path | None = None,
        *,
        gpus: int = 0,
        responder: Responder | None = None,
        existing: str | None = None,
        free: int | None = None,
    ) -> None:
        """``free``: the bytes its ``free_bytes`` reports (None: unknown, nothing checked)."""
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="enconda-fake-")
            root = Path(self._tmp.name)
        self.root = Path(root)
        self.gpus = gpus
        self.responder = responder
        self.existing = existing
        self.images: dict[str, Path] = {}
        self.live: dict[str, FakeBox] = {}
        self.calls: list[FakeCall] = []
        self.free = free

    def image_dir(self, ref: str) -> Path:
        return self.root / "images" / re.sub(r"[^A-Za-z0-9_.-]+", "_", ref)

    def add_image(self, ref: str, files: Mapping[str, str | bytes] | None = None) -> str:
        """An image holding ``files`` (absolute box path -> content)."""
        folder = self.image_dir(ref)
        folder.mkdir(parents=True, exist_ok=True)
        for path, content in (files or {}).items():
            target = folder / PurePosixPath(path).relative_to("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode() if isinstance(content, str) else content
            target.write_bytes(data)
        self.images[ref] = folder
        return ref

    def ops(self, op: str) -> list[FakeCall]:
        return [call for call in self.calls if call.op == op]

    def commands(self) -> list[str]:
        return [call.detail["command"] for call in self.ops("exec")]

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

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
    ) -> FakeBox:
        if image not in self.images:
            raise HarnessError(f"image {image} not found (build it first)")
        mounts = list(mounts or [])
        if download_cache is not None:
            # One folder per key and tool under the backend's root, lent read-write.
            digest = hashlib.sha256(download_cache.encode("utf-8")).hexdigest()[:16]
            for tool, target in DOWNLOAD_CACHE_DIRS.items():
                source = self.root / "download-caches" / digest / tool
                source.mkdir(parents=True, exist_ok=True)
                mounts.append(BindMount(source=source, target=target, read_only=False))
            env = {**DOWNLOAD_CACHE_ENV, **(env or {})}
        root = self.root / "boxes" / uuid.uuid4().hex[:12]
        shutil.copytree(self.images[image], root, symlinks=True)
        box = FakeBox(
            self,
            root,
            image=image,
            case_id=case_id,
            role=role,
            env=env or {},
            mounts=list(mounts or []),
            network=network,
            gpus=gpus,
        )
        self.calls.append(
            FakeCall(
                "start",
                box.name,
                {
                    "image": image,
                    "role": role,
                    "network": network,
                    "gpus": gpus,
                    "mounts": mounts,
                    "download_cache": download_cache,
                },
            )
        )
        self.live[box.id] = box
        return box

    def image_exists(self, image: str) -> bool:
        return image in self.images

    def free_bytes(self) -> int | None:
        return self.free

    def remove_snapshot(self, image: str) -> bool:
        if not image.startswith("fake/snapshot:") or image not in self.images:
            return False
        self.calls.append(FakeCall("remove_snapshot", None, {"image": image}))
        shutil.rmtree(self.images.pop(image), ignore_errors=True)
        return True

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
        ref = f"fake/task:{case.id.replace('/', '-')}"
        folder = self.image_dir(ref)
        shutil.rmtree(folder, ignore_errors=True)
        project = folder / PurePosixPath(PROJECT_DIR).relative_to("/")
        shutil.copytree(repo_dir, project, symlinks=True)
        for path, data in overrides.items():
            target = project / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        self.images[ref] = folder
        # The base the Docker backend would build on: what a test of the base's choice reads.
        detail: dict[str, Any] = {"case": case.id, "image": ref, "base": case.spec.base_image}
        if git_deps:
            detail["git_deps"] = [dep.url for dep in git_deps]
        self.calls.append(FakeCall("task_image", None, detail))
        return ref

    def gpu_count(self) -> int:
        return self.gpus

    def reap_orphans(self) -> list[str]:
        return []

    def close(self) -> None:
        for box in list(self.live.values()):
            box.remove()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
