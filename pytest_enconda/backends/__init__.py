"""Sandbox backends behind one protocol (``base.Backend``/``base.Box``): Docker, host, fake.

``BACKENDS`` maps a backend's name to a factory; each module is imported only when its backend
is made, so naming them costs nothing (docker-py stays unimported without Docker).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..registry import Registry

if TYPE_CHECKING:
    from .base import Backend


def _docker(**options: Any) -> Backend:
    from .docker import DockerBackend

    return DockerBackend(**options)


def _host(**options: Any) -> Backend:
    from .host import HostBackend

    return HostBackend(**options)


def _fake(**options: Any) -> Backend:
    from .fake import FakeBackend

    return FakeBackend(**options)


# Third parties add backends through the ``pytest_enconda.backends`` entry-point group, each a
# factory taking the backend's options.
BACKENDS: Registry[Callable[..., Backend]] = Registry("backend", "pytest_enconda.backends")
for _name, _factory in (("docker", _docker), ("host", _host), ("fake", _fake)):
    BACKENDS.register(_factory, name=_name)


def as_backend(sandbox_or_backend: Any) -> Backend:
    """A backend as given, or a Docker ``Sandbox`` (what callers passed before backends) wrapped
    in the Docker backend."""
    from .base import Backend

    if isinstance(sandbox_or_backend, Backend):
        return sandbox_or_backend
    from .docker import DockerBackend

    return DockerBackend(sandbox=sandbox_or_backend)


def get_backend(name: str, **options: Any) -> Backend:
    """A new backend by name; ``KeyError`` naming the known ones otherwise."""
    return BACKENDS.get(name)(**options)
