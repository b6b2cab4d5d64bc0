"""The engine's side of issue 48 item 7 on the real engine: the free space of its data root, a
snapshot removed (and nothing else), a task image refused before it is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.backends.docker import DockerBackend
from pytest_enconda.diskspace import HEADROOM, DiskSpaceError
from pytest_enconda.sandbox import images as images_module
from pytest_enconda.sandbox.common import engine_free_space


def test_free_space_of_the_engines_data_root(docker_client, sandbox) -> None:
    space = engine_free_space(docker_client)
    assert space is not None  # the engine here listens on this host's socket
    root, free = space
    assert root == docker_client.info()["DockerRootDir"] and free > 0
    backend_free = DockerBackend(sandbox=sandbox).free_bytes()
    assert backend_free is not None and backend_free > 0


def test_remove_snapshot_removes_a_snapshot_and_nothing_else(
    docker_client, sandbox, base_image
) -> None:
    with sandbox.container(base_image, case_id="t/space", role="agent") as box:
        box.exec("echo hi > /tmp/made", timeout=30)
        assert box.free_bytes() is not None
        snapshot = box.snapshot("t/space")
    backend = DockerBackend(sandbox=sandbox)
    assert backend.remove_snapshot(base_image) is False  # not a snapshot: left alone
    assert docker_client.images.get(base_image) is not None
    assert backend.remove_snapshot(snapshot) is True
    assert backend.remove_snapshot(snapshot) is False  # gone already: no error
    assert not any(snapshot in (image.tags or []) for image in docker_client.images.list())


def test_a_task_image_that_cannot_fit_is_refused_before_it_is_written(
    image_builder, base_image, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "big.bin").write_bytes(b"\0" * 2_000_000)
    real = engine_free_space(image_builder.client)
    assert real is not None
    # The engine's real root, with less free than the checkout and the headroom need.
    monkeypatch.setattr(
        images_module, "engine_free_space", lambda client: (real[0], HEADROOM + 1_000_000)
    )
    with pytest.raises(DiskSpaceError, match=r"task image of t/space-task.*free at /"):
        image_builder.ensure_task_image(base_image, repo, {}, "t/space-task")
