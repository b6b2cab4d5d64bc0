"""A registry shared by a cluster's machines (``--image-registry``): an image missing here is
pulled from it before it is built, and pushed to it after, under the same content-hash tag.

A registry that lacks an image or cannot be reached costs a build, never the case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .common import Progress

if TYPE_CHECKING:
    import docker


def shared_ref(registry: str | None, tag: str) -> str | None:
    """``tag``'s name in ``registry``, if one is given."""
    return f"{registry}/{tag}" if registry else None


def pull_shared(
    client: docker.DockerClient, registry: str, remote: str, tag: str, progress: Progress
) -> bool:
    """Whether ``remote`` could be pulled from ``registry`` and tagged here as ``tag``."""
    import docker.errors

    repository, _, version = remote.rpartition(":")
    try:
        image = client.images.pull(repository, tag=version)
    except docker.errors.NotFound:
        return False
    except (docker.errors.APIError, OSError) as exc:
        progress(f"registry {registry}: cannot pull {tag} ({exc}); building")
        return False
    local_repo, _, local_version = tag.rpartition(":")
    image.tag(local_repo, tag=local_version)
    return True


def push_shared(
    client: docker.DockerClient, registry: str, remote: str, tag: str, progress: Progress
) -> bool:
    """Whether ``tag`` could be pushed to ``registry`` as ``remote``; a failure only warns."""
    import docker.errors

    repository, _, version = remote.rpartition(":")
    try:
        image = client.images.get(tag)
        image.tag(repository, tag=version)
        for line in client.images.push(repository, tag=version, stream=True, decode=True):
            if isinstance(line, dict) and line.get("error"):
                raise docker.errors.APIError(str(line["error"]))
    except (docker.errors.APIError, OSError) as exc:
        progress(f"registry {registry}: cannot push {tag} ({exc})")
        return False
    return True
