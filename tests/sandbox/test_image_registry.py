"""``--image-registry``: machines of a cluster share images through a registry the user names.

A real registry (Debian's ``docker-registry``, the CNCF distribution server) on 127.0.0.1 and
the real engine: one builder builds and pushes, a second one (another machine, in effect: the
image is gone from this engine) pulls the same content-hash tag instead of building, and a
registry that cannot be reached costs a build, never the case.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import socket
import subprocess
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from localhttp import unused_port

from pytest_enconda.sandbox.images import ImageBuilder
from pytest_enconda.sandbox.settings import SandboxSettings

pytestmark = pytest.mark.docker
REGISTRY = shutil.which("docker-registry")


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[str]:
    if REGISTRY is None:
        if os.environ.get("CI") == "true":
            pytest.fail("docker-registry is not installed (.ci/run installs it)")
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    port = unused_port()
    config = tmp_path / "registry.yml"
    config.write_text(
        "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n"
        f"    rootdirectory: {tmp_path / 'storage'}\nhttp:\n  addr: 127.0.0.1:{port}\n"
    )
    server = subprocess.Popen(
        [REGISTRY, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield f"127.0.0.1:{port}/enconda-test"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture
def tiny_image(docker_client) -> Iterator[str]:
    """An image of one file (``docker import``): pushing it moves kilobytes, not a Debian."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        payload = b"tiny\n"
        info = tarfile.TarInfo("etc/tiny")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    tag = f"enconda-test/tiny:{uuid.uuid4().hex[:12]}"
    repository, version = tag.split(":")
    # A command, though nothing runs: the engine refuses to create a container without one.
    docker_client.api.import_image_from_data(
        data.getvalue(), repository=repository, tag=version, changes=['CMD ["/none"]']
    )
    yield tag
    docker_client.images.remove(tag, force=True)


def _remove(client, *refs: str) -> None:
    for ref in refs:
        with contextlib.suppress(Exception):  # already gone
            client.images.remove(ref, force=True)


def test_a_second_machine_pulls_what_the_first_built(
    docker_client, registry: str, tiny_image: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text(f"print({uuid.uuid4().hex!r})\n")  # a tag never built before
    settings = SandboxSettings.from_env(image_registry=registry)
    first = ImageBuilder(settings, client=docker_client, run_id="t-registry")
    messages: list[str] = []
    tag = first.ensure_task_image(tiny_image, repo, {}, "t/registry", progress=messages.append)
    assert first.pushed == [tag] and first.pulled == []
    built_id = docker_client.images.get(tag).id
    # The second machine has the parent (its own build of the same base) but not this image.
    _remove(docker_client, tag, first.shared_ref(tag) or "")
    second = ImageBuilder(settings, client=docker_client, run_id="t-registry")
    again = second.ensure_task_image(tiny_image, repo, {}, "t/registry", progress=messages.append)
    try:
        assert again == tag
        assert second.pulled == [tag] and second.pushed == []
        assert docker_client.images.get(tag).id == built_id
        assert f"pulled {tag} from {registry}" in messages
        assert not any(m.startswith(f"building task image {tag}") for m in messages[2:])
    finally:
        _remove(docker_client, tag, first.shared_ref(tag) or "")


def test_an_unreachable_registry_costs_a_build_not_the_case(
    docker_client, tiny_image: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text(f"print({uuid.uuid4().hex!r})\n")
    down = f"127.0.0.1:{unused_port()}/nobody"
    builder = ImageBuilder(
        SandboxSettings.from_env(image_registry=down), client=docker_client, run_id="t-registry"
    )
    messages: list[str] = []
    tag = builder.ensure_task_image(tiny_image, repo, {}, "t/registry", progress=messages.append)
    try:
        assert docker_client.images.get(tag) is not None
        assert builder.pulled == builder.pushed == []
        assert any(f"registry {down}: cannot pull" in m for m in messages), messages
        assert any(f"registry {down}: cannot push" in m for m in messages), messages
    finally:
        _remove(docker_client, tag, builder.shared_ref(tag) or "")


@pytest.mark.parametrize("bad", ["http://host:5000", "host:port", "Host:5000/UPPER", "a b"])
def test_a_registry_that_is_not_one_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="expected a registry as HOST"):
        SandboxSettings.from_env(image_registry=bad)
