"""Docker: boxes are containers of labelled images (``sandbox.containers`` and ``images``).

An adapter, not a second implementation: ``Container`` already has the box's methods, and the
image builder already caches base, environment and task images by the hash of their inputs.
docker-py is imported only when a container or image is first needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .base import PROJECT_DIR, Box, Gpus, host_gpu_count

if TYPE_CHECKING:
    from ..cases.models import Case
    from ..sandbox.common import Progress
    from ..sandbox.containers import BindMount, Sandbox
    from ..sandbox.git_deps import GitDependency
    from ..sandbox.images import ImageBuilder
    from ..sandbox.settings import SandboxSettings


# Without a network not even a container's own hostname resolves: torchrun --standalone would
# retry that lookup until its budget ran out.
_HOSTS_FIX = (
    'grep -qw "$(hostname)" /etc/hosts 2>/dev/null || '
    'echo "127.0.0.1 $(hostname)" >> /etc/hosts 2>/dev/null; true'
)


class DockerBackend:
    name = "docker"
    local_tools = False
    existing: str | None = None

    def __init__(
        self,
        settings: SandboxSettings | None = None,
        run_id: str | None = None,
        *,
        sandbox: Sandbox | None = None,
        images: ImageBuilder | None = None,
    ) -> None:
        """From settings (the run's), or around a sandbox and image builder already made."""
        if settings is None:
            if sandbox is not None:
                settings = sandbox.settings
            else:
                from ..sandbox.settings import SandboxSettings

                settings = SandboxSettings.from_env()
        self.settings = settings
        self.run_id = run_id if run_id is not None else (sandbox.run_id if sandbox else None)
        self._sandbox = sandbox
        self._images = images

    @property
    def keep(self) -> bool:
        return self.settings.keep_containers

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            from ..sandbox.containers import Sandbox

            self._sandbox = Sandbox(self.settings, run_id=self.run_id)
            self.run_id = self._sandbox.run_id
        return self._sandbox

    @property
    def images(self) -> ImageBuilder:
        if self._images is None:
            from ..sandbox.images import ImageBuilder

            # One engine connection for both: the builder's own would be a second client.
            self._images = ImageBuilder(
                self.settings, client=self.sandbox.client, run_id=self.sandbox.run_id
            )
        return self._images

    @property
    def cache_dir(self) -> Path:
        return self.settings.cache_dir

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
        box = self.sandbox.create(
            image,
            case_id=case_id,
            role=role,
            env=env,
            mounts=list(mounts or []),
            network=network,
            gpus=gpus,
            workdir=workdir,
            download_cache=None if download_cache is None else self._cache_identity(download_cache),
        )
        if not network:
            try:
                box.exec(_HOSTS_FIX, timeout=30, workdir="/")
            except BaseException:
                box.remove()
                raise
        return box

    def image_exists(self, image: str) -> bool:
        return self.images.image_id(image) is not None

    def free_bytes(self) -> int | None:
        from ..sandbox.common import engine_free_space

        space = engine_free_space(self.sandbox.client)
        return None if space is None else space[1]

    def remove_snapshot(self, image: str) -> bool:
        from ..sandbox.cleanup import remove_snapshot

        return remove_snapshot(self.sandbox.client, self.settings, image)

    def _cache_identity(self, key: str) -> str:
        """The download cache's identity: a base image key names the base image's content-hash
        tag (a rebuilt base gets a fresh cache); any other key is its own identity."""
        if key.startswith("base:"):
            name = key.removeprefix("base:")
            try:
                return self.images.base_tag(self.images.recipe(name))
            except Exception:  # a base pulled by name (--base-image): the name is its identity
                return name
        return key

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
        images = self.images
        spec = case.spec
        base = images.ensure_base(spec.base_image, progress=progress)
        env = images.ensure_environment(base, spec.environment, progress=progress)
        return images.ensure_task_image(
            env,
            repo_dir,
            overrides,
            case.id,
            progress=progress,
            tree_hash=tree_hash,
            git_deps=git_deps,
        )

    def gpu_count(self) -> int:
        """None unless ``--gpus`` gives them and the host has them."""
        wanted = self.settings.gpus
        if wanted == "none":
            return 0
        visible = host_gpu_count()
        return visible if wanted == "all" else min(visible, int(wanted))

    def reap_orphans(self) -> list[str]:
        return self.sandbox.reap_orphans()

    def close(self) -> None:
        # Nothing to remove when no container was ever made: do not connect just to say so.
        if self._sandbox is not None:
            self._sandbox.close()
