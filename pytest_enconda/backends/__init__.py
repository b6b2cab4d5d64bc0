"""Sandbox backends behind one protocol (``base.Backend``/``base.Box``): Docker, host, fake.

``BACKENDS`` holds one ``BackendRecord`` per backend name; each module is imported only when
its backend is made, so naming them costs nothing (docker-py stays unimported without Docker).
``--backend NAME`` picks the record a run's backend is built from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..registry import Registry

if TYPE_CHECKING:
    from .base import Backend

Progress = Callable[[str], None]
ENTRY_POINT_GROUP = "pytest_enconda.backends"


class RunSettings(Protocol):
    """What the built-in backends read of a run's settings (``EncondaSettings`` has it all;
    named by shape because the settings live in a later layer)."""

    @property
    def run_dir(self) -> Path: ...
    @property
    def python(self) -> Path | None: ...
    @property
    def repo(self) -> Path | None: ...
    @property
    def gpus(self) -> str: ...
    @property
    def network_mode(self) -> str: ...
    @property
    def keep_containers(self) -> bool: ...
    @property
    def ca_bundle(self) -> Path | None: ...
    @property
    def base_image(self) -> str | None: ...
    @property
    def image_registry(self) -> str | None: ...
    @property
    def strip_proxy_credentials(self) -> bool: ...


@dataclass(frozen=True)
class BackendRecord:
    """A backend as the registry knows it.

    ``create`` makes it from its own options (tests, a Ray node given them); ``for_run`` makes a
    run's backend from the run's settings (absent: ``create()`` with no options).
    ``existing_environment``: it grades the environment ``--python``/``--repo`` name instead of
    building one, so it needs them, and a backend without it cannot take them.
    """

    name: str
    create: Callable[..., Backend]
    for_run: Callable[[RunSettings, Progress, str], Backend] | None = None
    existing_environment: bool = False

    def from_settings(self, settings: RunSettings, progress: Progress, run_id: str) -> Backend:
        if self.for_run is None:
            return self.create()
        return self.for_run(settings, progress, run_id)


def _docker(**options: Any) -> Backend:
    from .docker import DockerBackend

    return DockerBackend(**options)


def _gpus(settings: RunSettings) -> int | str:
    return int(settings.gpus) if settings.gpus.isdigit() else settings.gpus


def _docker_for_run(settings: RunSettings, progress: Progress, run_id: str) -> Backend:
    from ..sandbox.settings import SandboxSettings, has_credentials

    overrides: dict[str, Any] = {
        "network_mode": settings.network_mode,
        "keep_containers": settings.keep_containers,
        "gpus": _gpus(settings),
    }
    if settings.ca_bundle:
        overrides["ca_bundle"] = settings.ca_bundle
    if settings.base_image:
        overrides["pull_base"] = settings.base_image
    if settings.strip_proxy_credentials:
        overrides["strip_proxy_credentials"] = True
    if settings.image_registry:
        overrides["image_registry"] = settings.image_registry
    sandbox_settings = SandboxSettings.from_env(**overrides)
    if has_credentials(sandbox_settings.proxy_env):
        progress(
            "warning: the proxy variables carry credentials, which every container (and so "
            "the agent) can read; use --strip-proxy-credentials or a proxy on the host side "
            "(README: Network and trust)"
        )
    backend = _docker(settings=sandbox_settings, run_id=run_id)
    # Containers of runs that died are found by their labels; only Docker leaves any.
    reaped = backend.reap_orphans()
    if reaped:
        progress(f"removed {len(reaped)} containers left by dead runs")
    return backend


def _host(**options: Any) -> Backend:
    from .host import HostBackend

    return HostBackend(**options)


def _host_for_run(settings: RunSettings, progress: Progress, run_id: str) -> Backend:
    return _host(python=settings.python, repo_dir=settings.repo)


def _fake(**options: Any) -> Backend:
    from .fake import FakeBackend

    return FakeBackend(**options)


def _fake_for_run(settings: RunSettings, progress: Progress, run_id: str) -> Backend:
    # Boxes in a temporary folder of each process (xdist workers make their own); it pretends
    # to have as many GPUs as --gpus counts ("all" has no count).
    return _fake(gpus=int(settings.gpus) if settings.gpus.isdigit() else 0)


BUILTIN: tuple[BackendRecord, ...] = (
    BackendRecord("docker", _docker, _docker_for_run),
    BackendRecord("host", _host, _host_for_run, existing_environment=True),
    BackendRecord("fake", _fake, _fake_for_run),
)


def _from_entry_point(entry_point: EntryPoint) -> BackendRecord:
    """An entry point names a ``BackendRecord``, or (the older form) a factory taking the
    backend's options."""
    loaded = entry_point.load()
    if isinstance(loaded, BackendRecord):
        return loaded
    return BackendRecord(entry_point.name, loaded)


# Third parties add backends through the ``pytest_enconda.backends`` entry-point group, or by
# ``BACKENDS.register(BackendRecord(...))`` in a conftest.py or pytest plugin.
BACKENDS: Registry[BackendRecord] = Registry(
    "backend", ENTRY_POINT_GROUP, from_entry_point=_from_entry_point
)
for _record in BUILTIN:
    BACKENDS.register(_record)


def as_backend(sandbox_or_backend: Any) -> Backend:
    """A backend as given, or a Docker ``Sandbox`` (what callers passed before backends) wrapped
    in the Docker backend."""
    from .base import Backend

    if isinstance(sandbox_or_backend, Backend):
        return sandbox_or_backend
    from .docker import DockerBackend

    return DockerBackend(sandbox=sandbox_or_backend)


def get_backend(name: str, **options: Any) -> Backend:
    """A new backend by name, made from its own options; ``KeyError`` naming the known ones
    otherwise."""
    return BACKENDS.get(name).create(**options)
