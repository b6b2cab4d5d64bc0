"""Images built from nothing: debootstrap rootfs → base → environment layer → task.

Each image's tag and ``<prefix>.hash`` label carry a hash of exactly its inputs, so a lookup by tag
decides reuse: an unchanged recipe costs one API call, a changed one builds a new image.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ..cases.models import EnvironmentLayer
from ..errors import HarnessError, ImageBuildError
from .common import (
    KIND_BASE,
    KIND_CONTAINER,
    KIND_ENV,
    KIND_ROOTFS,
    KIND_TASK,
    TOOL,
    Progress,
    docker_client,
    engine_free_space,
    file_lock,
    host_id,
    process_start_time,
    stderr_progress,
)
from .git_deps import GitDependency
from .image_files import (
    CA_DIR,
    CA_ENV,
    DEFAULT_PATH,
    DETERMINISM_ENV,
    PROJECT_DIR,
    TOOL_COMMANDS,
    TOOLS_VENV,
    _context_tar,
    _label_line,
    _override_path,
    _shell_words,
    _write_project_tar,
    split_ca_bundle,
)
from .image_registry import pull_shared, push_shared, shared_ref
from .recipes import BASE_RECIPES, BaseRecipe
from .repo import tree_hash
from .rootfs import debootstrap_tool, import_tree, run_debootstrap, sudo_prefix
from .settings import SandboxSettings

if TYPE_CHECKING:
    import docker


class ImageInfo(BaseModel):
    """One of our images, as listed by ``pytest-enconda images``."""

    ref: str
    id: str
    kind: str
    name: str
    hash: str
    size: int
    created: datetime
    labels: dict[str, str]


def _digest(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


class ImageBuilder:
    """Builds and finds our images. ``built`` lists tags this instance actually built."""

    def __init__(
        self,
        settings: SandboxSettings | None = None,
        *,
        client: docker.DockerClient | None = None,
        run_id: str | None = None,
        recipes: Mapping[str, BaseRecipe] | None = None,
    ) -> None:
        self.settings = settings or SandboxSettings.from_env()
        self._client = client
        self.run_id = run_id or ""
        self.recipes: dict[str, BaseRecipe] = dict(recipes or BASE_RECIPES)
        self.built: list[str] = []
        self.pulled: list[str] = []
        self.pushed: list[str] = []

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            # Builds stream for minutes with silent stretches (a long RUN): no read timeout.
            self._client = docker_client(timeout=None)
        return self._client

    # ----------------------------------------------------------------- naming and lookup

    def _label(self, key: str) -> str:
        return self.settings.label(key)

    def _labels(self, kind: str, digest: str, **extra: str) -> dict[str, str]:
        labels = {
            self._label("tool"): TOOL,
            self._label("kind"): kind,
            self._label("hash"): digest,
            self._label("created"): datetime.now(UTC).isoformat(timespec="seconds"),
        }
        if self.run_id:
            labels[self._label("run")] = self.run_id
        labels.update({self._label(key): value for key, value in extra.items()})
        return labels

    def image_id(self, ref: str) -> str | None:
        from docker.errors import ImageNotFound

        try:
            return self.client.api.inspect_image(ref)["Id"]
        except ImageNotFound:
            return None

    def recipe(self, name: str | BaseRecipe) -> BaseRecipe:
        if isinstance(name, BaseRecipe):
            return name
        try:
            return self.recipes[name]
        except KeyError:
            known = ", ".join(sorted(self.recipes))
            raise HarnessError(f"unknown base image recipe {name!r}; known: {known}") from None

    def rootfs_tag(self, recipe: BaseRecipe) -> str:
        if self.settings.pull_base:
            return self.settings.pull_base
        key = recipe.rootfs_key(self.settings.debian_mirror)
        return f"{self.settings.image_prefix}/rootfs:{recipe.release}-{key[:12]}"

    def _base_files(self, recipe: BaseRecipe) -> dict[str, bytes]:
        """The build context of a base image; its bytes are the base's hash input.

        Files to add live under ``root/`` at their final paths so one COPY step places them all
        (each step of the classic builder costs a commit, seconds on fuse-overlayfs).
        """
        files: dict[str, bytes] = {}
        if self.settings.ca_bundle is not None:
            for name, pem in split_ca_bundle(self.settings.ca_bundle).items():
                files[f"root{CA_DIR}/{name}"] = pem
        if not self.settings.pull_base:
            security = self.settings.debian_security_mirror
            lines = [
                line.format(
                    mirror=self.settings.debian_mirror, security=security, release=recipe.release
                )
                for line in recipe.apt_sources
            ]
            files["root/etc/apt/sources.list"] = ("\n".join(lines) + "\n").encode()
        files["Dockerfile"] = self._base_dockerfile(recipe, files).encode()
        return files

    def _base_dockerfile(self, recipe: BaseRecipe, files: Mapping[str, bytes]) -> str:
        env = " ".join(f"{key}={value}" for key, value in {**DETERMINISM_ENV, **CA_ENV}.items())
        tools = _shell_words(recipe.tools)
        links = " ".join(f"{TOOLS_VENV}/bin/{name}" for name in TOOL_COMMANDS)
        lines = [
            f"FROM {self.rootfs_tag(recipe)}",
            'SHELL ["/bin/bash", "-o", "pipefail", "-c"]',
            # The CA variables may name the bundle before ca-certificates creates it: apt
            # fetches over plain http and reads none of them.
            f"ENV PATH={DEFAULT_PATH} {env}",
        ]
        if any(name.startswith("root/") for name in files):
            lines.append("COPY root/ /")
        lines += [
            "RUN apt-get update"
            f" && apt-get install -y --no-install-recommends {_shell_words(recipe.packages)}"
            " && update-ca-certificates"
            " && apt-get clean && rm -rf /var/lib/apt/lists/*"
            # EnConda-Bench's image lets `pip install -r requirements.txt` work system-wide.
            " && rm -f /usr/lib/python3*/EXTERNALLY-MANAGED"
            f" && python3 --version | grep -q '^Python {re.escape(recipe.python)}\\.'",
            # The tools get their own venv so a task's `pip install` cannot break them.
            f"RUN python3 -m venv {TOOLS_VENV}"
            f" && {TOOLS_VENV}/bin/pip install --no-cache-dir {tools}"
            f" && ln -sf {links} /usr/local/bin/"
            " && poetry --version && uv --version && pipenv --version",
            *recipe.extra_steps,
            f"WORKDIR {PROJECT_DIR}",
            'CMD ["bash"]',
        ]
        return "\n".join(lines) + "\n"

    def base_hash(self, recipe: BaseRecipe) -> str:
        files = self._base_files(recipe)
        return _digest(
            {
                "recipe": recipe.fingerprint(),
                "from": self.rootfs_tag(recipe),
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
            }
        )

    def base_tag(self, name: str | BaseRecipe) -> str:
        recipe = self.recipe(name)
        return f"{self.settings.image_prefix}/base:{recipe.name}-{self.base_hash(recipe)[:12]}"

    # ----------------------------------------------------------------- builds

    def _stream_build(
        self,
        files: Mapping[str, bytes],
        tag: str,
        labels: dict[str, str],
        progress: Progress,
        what: str,
        nocache: bool = False,
    ) -> str:
        from docker.errors import APIError

        step = "before the first step"
        tail: deque[str] = deque(maxlen=40)
        # One LABEL instruction: the API's ``labels`` become one build step (a commit) each.
        dockerfile = files["Dockerfile"].decode().rstrip("\n") + "\n"
        dockerfile += "LABEL " + " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()) + "\n"
        files = {**files, "Dockerfile": dockerfile.encode()}
        try:
            stream = self.client.api.build(
                fileobj=_context_tar(files),
                custom_context=True,
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                nocache=nocache,
                network_mode=self.settings.network_mode,
                buildargs=dict(self.settings.proxy_env) or None,
                decode=True,
            )
            for chunk in stream:
                for line in str(chunk.get("stream", "")).splitlines():
                    line = line.rstrip()
                    if not line:
                        continue
                    tail.append(line)
                    if line.startswith("Step "):
                        step = line
                    progress(line)
                if "error" in chunk:
                    message = str(chunk.get("error", "")).strip()
                    raise ImageBuildError(
                        f"building {what} ({tag}) failed at {step}: {message}\n"
                        "--- build log tail ---\n" + "\n".join(tail)
                    )
        except APIError as exc:
            raise ImageBuildError(f"building {what} ({tag}) failed at {step}: {exc}") from None
        image = self.image_id(tag)
        if image is None:
            raise ImageBuildError(
                f"building {what} ({tag}) finished without an image\n" + "\n".join(tail)
            )
        self.built.append(tag)
        return tag

    def ensure_rootfs(self, recipe: BaseRecipe, progress: Progress | None = None) -> str:
        """The imported debootstrap tree of ``recipe`` (or the pulled ``pull_base`` image)."""
        progress = progress or stderr_progress()
        tag = self.rootfs_tag(recipe)
        if self.image_id(tag) is not None:
            return tag
        if self.settings.pull_base:
            return self._pull(tag, progress)
        key = recipe.rootfs_key(self.settings.debian_mirror)
        with file_lock(self.settings.cache_dir, f"rootfs-{key}", progress):
            if self.image_id(tag) is not None:
                return tag
            self._debootstrap(recipe, tag, key, progress)
        return tag

    def _pull(self, ref: str, progress: Progress) -> str:
        from docker.errors import APIError

        progress(f"pulling {ref}")
        repository, _, tag = ref.rpartition(":") if ":" in ref.split("/")[-1] else (ref, "", "")
        try:
            for event in self.client.api.pull(
                repository, tag=tag or None, stream=True, decode=True
            ):
                status = event.get("status")
                if status and "progress" not in event:
                    progress(f"{event.get('id', '')} {status}".strip())
        except APIError as exc:
            raise ImageBuildError(
                f"cannot pull base image {ref} (setting pull_base): {exc}; without a registry, "
                "unset pull_base to bootstrap from Debian packages"
            ) from None
        if self.image_id(ref) is None:
            raise ImageBuildError(f"pulling {ref} (setting pull_base) produced no image")
        return ref

    def _debootstrap(self, recipe: BaseRecipe, tag: str, key: str, progress: Progress) -> None:
        tool = debootstrap_tool()
        sudo = sudo_prefix()
        scratch_parent = self.settings.cache_dir / "rootfs"
        scratch_parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"{recipe.release}-{key[:12]}-", dir=scratch_parent))
        command = [*sudo, tool, f"--variant={recipe.variant}", "--components=main"]
        if recipe.include:
            command.append(f"--include={','.join(recipe.include)}")
        command += [recipe.release, str(scratch), self.settings.debian_mirror]
        started = time.monotonic()
        progress(
            f"debootstrap {recipe.release} from {self.settings.debian_mirror} (about a minute)"
        )
        try:
            run_debootstrap(command, scratch, tag, progress)
            progress(f"debootstrap done in {time.monotonic() - started:.0f}s; importing as {tag}")
            labels = self._labels(KIND_ROOTFS, key, release=recipe.release, recipe=recipe.name)
            changes = [_label_line(k, v) for k, v in labels.items()]
            changes += [f"ENV PATH={DEFAULT_PATH}", 'CMD ["bash"]']
            import_tree(self.client, sudo, scratch, tag, changes)
            if self.image_id(tag) is None:
                raise ImageBuildError(f"importing rootfs {tag} produced no image")
            self.built.append(tag)
            progress(f"rootfs {tag} ready after {time.monotonic() - started:.0f}s")
        finally:
            # debootstrap leaves root-owned device nodes and mounts nothing after it exits.
            subprocess.run([*sudo, "rm", "-rf", "--one-file-system", str(scratch)], check=False)

    def ensure_base(
        self, name: str | BaseRecipe, progress: Progress | None = None, *, force: bool = False
    ) -> str:
        """Tag of the base image built from recipe ``name``; built (minutes) only when missing."""
        progress = progress or stderr_progress()
        recipe = self.recipe(name)
        tag = self.base_tag(recipe)
        if not force and self.image_id(tag) is not None:
            return tag
        digest = self.base_hash(recipe)
        with file_lock(self.settings.cache_dir, f"base-{digest}", progress):
            if not force and self.image_id(tag) is not None:
                return tag
            if not force and self._pull_shared(tag, progress):
                return tag
            started = time.monotonic()
            progress(f"building base image {tag} (first time: a few minutes)")
            self.ensure_rootfs(recipe, progress)
            labels = self._labels(
                KIND_BASE,
                digest,
                recipe=recipe.name,
                release=recipe.release,
                python=recipe.python,
                rootfs=self.rootfs_tag(recipe),
            )
            self._stream_build(
                self._base_files(recipe), tag, labels, progress, f"base {recipe.name}", force
            )
            progress(f"base image {tag} built in {time.monotonic() - started:.0f}s")
            self._push_shared(tag, progress)
        return tag

    def ensure_environment(
        self, base_ref: str, layer: EnvironmentLayer | None, progress: Progress | None = None
    ) -> str:
        """``base_ref`` plus the case's environment layer (apt packages, commands)."""
        if layer is None or (not layer.apt_packages and not layer.run):
            return base_ref
        progress = progress or stderr_progress()
        parent = self.image_id(base_ref)
        if parent is None:
            raise ImageBuildError(f"environment layer: parent image {base_ref} does not exist")
        digest = _digest({"parent": parent, "layer": layer.model_dump(mode="json")})
        tag = f"{self.settings.image_prefix}/env:{digest[:16]}"
        if self.image_id(tag) is not None:
            return tag
        lines = [f"FROM {parent}", 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]']
        if layer.apt_packages:
            lines.append(
                "RUN apt-get update && apt-get install -y --no-install-recommends "
                f"{_shell_words(layer.apt_packages)} && rm -rf /var/lib/apt/lists/*"
            )
        lines += [f"RUN {command}" for command in layer.run]
        lines.append(f"WORKDIR {PROJECT_DIR}")
        with file_lock(self.settings.cache_dir, f"env-{digest}", progress):
            if self.image_id(tag) is None and not self._pull_shared(tag, progress):
                labels = self._labels(KIND_ENV, digest, parent=base_ref)
                files = {"Dockerfile": ("\n".join(lines) + "\n").encode()}
                self._stream_build(files, tag, labels, progress, "environment layer")
                self._push_shared(tag, progress)
        return tag

    def task_hash(
        self,
        env_ref: str,
        repo_dir: Path,
        overrides: Mapping[str, bytes],
        tree: str | None = None,
        git_deps: Sequence[GitDependency] = (),
    ) -> str:
        parent = self.image_id(env_ref)
        if parent is None:
            raise ImageBuildError(f"task image: parent image {env_ref} does not exist")
        inputs: dict[str, object] = {
            "parent": parent,
            "tree": tree or tree_hash(repo_dir),
            "overrides": {
                _override_path(path): hashlib.sha256(data).hexdigest()
                for path, data in overrides.items()
            },
        }
        if git_deps:
            # Only when there are some: images of projects without any keep their old keys.
            inputs["git_deps"] = {dep.url: dep.identity for dep in git_deps}
        return _digest(inputs)

    def task_tag(self, digest: str) -> str:
        return f"{self.settings.image_prefix}/task:{digest[:16]}"

    def ensure_task_image(
        self,
        env_ref: str,
        repo_dir: Path,
        overrides: Mapping[str, bytes],
        case_id: str,
        progress: Progress | None = None,
        *,
        tree_hash: str | None = None,
        git_deps: Sequence[GitDependency] = (),
    ) -> str:
        """``env_ref`` with the repository at /data/project and ``overrides`` written on top.

        ``tree_hash`` (from ``repo.materialize``) spares re-hashing the tree on a warm lookup.
        ``git_deps`` are GitHub dependencies copied from the mirror (``git_deps``).
        """
        progress = progress or stderr_progress()
        normalized = {_override_path(path): data for path, data in overrides.items()}
        digest = self.task_hash(env_ref, repo_dir, normalized, tree_hash, git_deps)
        tag = self.task_tag(digest)
        if self.image_id(tag) is not None:
            return tag
        with file_lock(self.settings.cache_dir, f"task-{digest}", progress):
            if self.image_id(tag) is None and not self._pull_shared(tag, progress):
                self._require_space(Path(repo_dir), normalized, case_id)
                progress(f"building task image {tag} for {case_id}")
                self._commit_task(
                    env_ref, Path(repo_dir), normalized, case_id, tag, digest, git_deps
                )
                self._push_shared(tag, progress)
        return tag

    def _require_space(self, repo_dir: Path, overrides: Mapping[str, bytes], case_id: str) -> None:
        """The task image's layer is the checkout's copy: refused before it is written where
        the engine's disk cannot hold it (``diskspace``)."""
        from ..diskspace import require_space, tree_bytes

        space = engine_free_space(self.client)
        if space is not None:
            expected = tree_bytes(repo_dir) + sum(len(data) for data in overrides.values())
            require_space(space[1], expected, f"the task image of {case_id}", space[0])

    # ----------------------------------------------------------------- a shared registry

    def shared_ref(self, tag: str) -> str | None:
        """``tag``'s name in the user's registry (``--image-registry``), if one is given."""
        return shared_ref(self.settings.image_registry, tag)

    def _pull_shared(self, tag: str, progress: Progress) -> bool:
        """Whether ``tag`` could be pulled from the registry (then tagged here as ``tag``)."""
        remote, registry = self.shared_ref(tag), self.settings.image_registry
        if remote is None or registry is None:
            return False
        if not pull_shared(self.client, registry, remote, tag, progress):
            return False
        self.pulled.append(tag)
        progress(f"pulled {tag} from {registry}")
        return True

    def _push_shared(self, tag: str, progress: Progress) -> None:
        """Push what was just built, for the cluster's other machines."""
        remote, registry = self.shared_ref(tag), self.settings.image_registry
        if remote is None or registry is None:
            return
        if push_shared(self.client, registry, remote, tag, progress):
            self.pushed.append(tag)
            progress(f"pushed {tag} to {registry}")

    def _commit_task(
        self,
        env_ref: str,
        repo_dir: Path,
        overrides: Mapping[str, bytes],
        case_id: str,
        tag: str,
        digest: str,
        git_deps: Sequence[GitDependency] = (),
    ) -> None:
        """Copy the tree into a never-started container and commit it: no Dockerfile, no daemon
        build cache, and the same labels path as snapshots."""
        from docker.errors import APIError

        prefix = self.settings.labels_prefix
        container_labels = {
            f"{prefix}.tool": TOOL,
            f"{prefix}.kind": KIND_CONTAINER,
            f"{prefix}.role": "task-build",
            f"{prefix}.case": case_id,
            f"{prefix}.run": self.run_id,
            f"{prefix}.pid": str(os.getpid()),
            f"{prefix}.pid_start": process_start_time(os.getpid()) or "",
            f"{prefix}.host": host_id(),
        }
        api = self.client.api
        try:
            container = api.create_container(env_ref, labels=container_labels)["Id"]
        except APIError as exc:
            raise ImageBuildError(
                f"task image for {case_id}: cannot create container: {exc}"
            ) from None
        try:
            with tempfile.TemporaryFile() as archive:
                _write_project_tar(archive, repo_dir, overrides, git_deps)
                archive.seek(0)
                api.put_archive(container, "/", archive)
            image_labels = self._labels(KIND_TASK, digest, case=case_id, parent=env_ref)
            # The container's own labels would be inherited; blank the ones reaping reads.
            image_labels.update(
                {f"{prefix}.{key}": "" for key in ("role", "pid", "pid_start", "host")}
            )
            repository, _, image_tag = tag.rpartition(":")
            changes = [_label_line(k, v) for k, v in image_labels.items()]
            if git_deps:
                # Poetry's own git client (dulwich) does not read url.insteadOf; git does.
                changes.append("ENV POETRY_SYSTEM_GIT_CLIENT=true")
            api.commit(container, repository=repository, tag=image_tag, changes=changes)
        except APIError as exc:
            raise ImageBuildError(f"task image for {case_id} ({tag}) failed: {exc}") from None
        finally:
            with contextlib.suppress(APIError):
                api.remove_container(container, force=True, v=True)
        self.built.append(tag)

    # ----------------------------------------------------------------- listing

    def list_images(self, kinds: Iterable[str] | None = None) -> list[ImageInfo]:
        """Our images (by the tool label), newest first."""
        wanted = set(kinds) if kinds else None
        prefix = self.settings.labels_prefix
        infos = []
        for image in self.client.api.images(filters={"label": f"{prefix}.tool={TOOL}"}):
            labels = image.get("Labels") or {}
            kind = labels.get(f"{prefix}.kind", "")
            if wanted is not None and kind not in wanted:
                continue
            name = labels.get(f"{prefix}.recipe") if kind in (KIND_BASE, KIND_ROOTFS) else None
            tags = [tag for tag in image.get("RepoTags") or [] if tag != "<none>:<none>"]
            infos.append(
                ImageInfo(
                    ref=tags[0] if tags else image["Id"],
                    id=image["Id"],
                    kind=kind,
                    name=name or labels.get(f"{prefix}.case", ""),
                    hash=labels.get(f"{prefix}.hash", "")[:16],
                    size=int(image.get("Size") or 0),
                    created=datetime.fromtimestamp(int(image.get("Created", 0)), UTC),
                    labels=labels,
                )
            )
        infos.sort(key=lambda info: info.created, reverse=True)
        return infos

    def remove_base(self, name: str | BaseRecipe, *, rootfs: bool = False) -> list[str]:
        """Remove a base (and optionally its rootfs): for cold-build measurements."""
        from docker.errors import APIError, ImageNotFound

        recipe = self.recipe(name)
        refs = [self.base_tag(recipe)]
        if rootfs and not self.settings.pull_base:
            refs.append(self.rootfs_tag(recipe))
        removed = []
        for ref in refs:
            try:
                self.client.api.remove_image(ref)
            except ImageNotFound:
                continue
            except APIError as exc:
                raise HarnessError(f"cannot remove {ref}: {exc}") from None
            removed.append(ref)
        return removed
