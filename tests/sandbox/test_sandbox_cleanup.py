"""Leftovers: a killed run's containers are reaped by the next; images pruned by age/size."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from datetime import timedelta

import pytest
from docker.errors import ImageNotFound, NotFound

from pytest_enconda.sandbox.cleanup import (
    list_leftovers,
    prune_images,
    reap_orphans,
    remove_leftovers,
)
from pytest_enconda.sandbox.containers import Sandbox

pytestmark = pytest.mark.docker

_CRASHING_RUN = textwrap.dedent(
    """
    import sys, time
    from pytest_enconda.sandbox.containers import Sandbox
    box = Sandbox(run_id=sys.argv[2]).create(sys.argv[1], case_id="t/crash", role="agent")
    print(box.id, flush=True)
    time.sleep(600)
    """
)


def test_killed_run_leaves_a_container_that_the_next_run_reaps(
    base_image: str, docker_client, sandbox_settings, sandbox: Sandbox
) -> None:
    run_id = f"crash-{uuid.uuid4().hex[:8]}"
    child = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_RUN, base_image, run_id],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    container_id = child.stdout.readline().strip()
    assert container_id, "the child process did not create its container"
    try:
        # A live owner is never reaped, and neither is this process's own container.
        mine = sandbox.create(base_image, case_id="t/alive", role="agent")
        reap_orphans(sandbox_settings, client=docker_client)
        assert docker_client.containers.get(container_id).status == "running"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        # SIGKILL runs no cleanup: the container outlives its process...
        assert docker_client.containers.get(container_id).status == "running"
        (leftover,) = list_leftovers(run_id, settings=sandbox_settings, client=docker_client)
        assert leftover.id == container_id and leftover.orphaned
        assert leftover.owner_alive is False and leftover.case == "t/crash"
        # ...until the next run starts and reaps it.
        removed = reap_orphans(sandbox_settings, client=docker_client)
        assert container_id in removed
        assert mine.id not in removed
        with pytest.raises(NotFound):
            docker_client.containers.get(container_id)
        assert docker_client.containers.get(mine.id).status == "running"
    finally:
        if child.poll() is None:
            child.kill()
        remove_leftovers(run_id, settings=sandbox_settings, client=docker_client)


def test_remove_leftovers_of_one_run_only(base_image: str, docker_client, sandbox_settings) -> None:
    keep = sandbox_settings.model_copy(update={"keep_containers": True})
    first = Sandbox(keep, f"run-a-{uuid.uuid4().hex[:6]}", client=docker_client)
    second = Sandbox(keep, f"run-b-{uuid.uuid4().hex[:6]}", client=docker_client)
    with first.container(base_image, case_id="t/a", role="agent") as a:
        pass
    with second.container(base_image, case_id="t/b", role="agent") as b:
        pass
    try:
        # keep_containers leaves them after the with-block, marked so reaping spares them.
        assert docker_client.containers.get(a.id)
        listed = list_leftovers(first.run_id, settings=keep, client=docker_client)
        assert [item.id for item in listed] == [a.id] and listed[0].keep
        assert remove_leftovers(first.run_id, settings=keep, client=docker_client) == [a.id]
        with pytest.raises(NotFound):
            docker_client.containers.get(a.id)
        assert docker_client.containers.get(b.id)
    finally:
        remove_leftovers(second.run_id, settings=keep, client=docker_client)
    with pytest.raises(NotFound):
        docker_client.containers.get(b.id)


@pytest.mark.slow
def test_prune_snapshots_by_age_and_size_keeps_bases(
    base_image: str, docker_client, sandbox_settings
) -> None:
    run_id = f"prune-{uuid.uuid4().hex[:8]}"
    box_maker = Sandbox(sandbox_settings, run_id, client=docker_client)
    refs: list[str] = []
    with box_maker.container(base_image, case_id="t/prune", role="agent") as box:
        for index in range(3):
            # New random bytes each time: every snapshot adds its own ~2 MB layer.
            box.exec("head -c 2000000 /dev/urandom > /data/project/blob", timeout=60)
            refs.append(box.snapshot(f"prune-{index}"))
    base_id = docker_client.api.inspect_image(base_image)["Id"]
    try:
        young = prune_images(
            timedelta(days=1),
            None,
            settings=sandbox_settings,
            client=docker_client,
            run_ids={run_id},
        )
        assert young.removed == []
        dry = prune_images(
            None, 0, settings=sandbox_settings, client=docker_client, run_ids={run_id}, dry_run=True
        )
        assert sorted(dry.removed) == sorted(refs)
        assert all(docker_client.api.inspect_image(ref) for ref in refs)
        # Each snapshot holds its own ~2 MB layer: a 3 MB budget keeps one (the newest).
        sized = prune_images(
            None, 3_000_000, settings=sandbox_settings, client=docker_client, run_ids={run_id}
        )
        assert len(sized.removed) == 2 and sized.freed_bytes >= 4_000_000
        (survivor,) = [ref for ref in refs if ref not in sized.removed]
        assert survivor == refs[-1]
        aged = prune_images(
            timedelta(0), None, settings=sandbox_settings, client=docker_client, run_ids={run_id}
        )
        assert aged.removed == [survivor]
        for ref in refs:
            with pytest.raises(ImageNotFound):
                docker_client.api.inspect_image(ref)
        assert docker_client.api.inspect_image(base_image)["Id"] == base_id
    finally:
        for ref in refs:
            with contextlib.suppress(ImageNotFound):
                docker_client.api.remove_image(ref)
