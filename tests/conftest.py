"""Shared fixtures: the Docker engine, the sandbox and the base image.

The base image is built once and then reused from the Docker engine across sessions: its tag is
the hash of its recipe.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator

# pytester's in-process runs drop modules first imported during a run; numpy (behind scipy,
# which grading uses) cannot be imported twice in one process, and docker-py's requests,
# imported twice, fails with "You can only merge into CookieJar": load both before any run.
# matplotlib likewise: when its package was loaded before a run (a find_spec of one of its
# modules does that) but pyplot was not, the next run's report fails with "three-digit
# integer, not GridSpec".
import docker  # noqa: F401
import matplotlib.pyplot  # noqa: F401
import pytest
import scipy.optimize  # noqa: F401
from scripted_llm import ScriptedServer

from pytest_enconda.dispatch.ray import node_run_dir
from pytest_enconda.errors import HarnessError
from pytest_enconda.records import RunDir
from pytest_enconda.sandbox.cleanup import prune_images
from pytest_enconda.sandbox.common import KIND_SNAPSHOT
from pytest_enconda.sandbox.common import docker_client as connect_docker
from pytest_enconda.sandbox.containers import Sandbox
from pytest_enconda.sandbox.images import ImageBuilder
from pytest_enconda.sandbox.settings import SandboxSettings

BASE_RECIPE = "bookworm-py3.11"
_IMPORTANT = ("Step ", "debootstrap", "building", "base image", "rootfs", "waiting", "lock")


def terminal_progress() -> Callable[[str], None]:
    """Build progress past pytest's capture: steps always, other log lines one in 25."""
    stream = sys.__stderr__ or sys.stderr
    seen = [0]

    def emit(line: str) -> None:
        seen[0] += 1
        if line.startswith(_IMPORTANT) or seen[0] % 25 == 0:
            print(f"\n[enconda build] {line[:160]}", file=stream, end="", flush=True)

    return emit


@pytest.fixture(scope="session")
def docker_client():
    """A live engine, else skip (or fail when ``CI=true``: CI must not skip silently)."""
    try:
        return connect_docker()
    except HarnessError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def sandbox_settings() -> SandboxSettings:
    return SandboxSettings.from_env()


@pytest.fixture(scope="session")
def test_run_id() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session", autouse=True)
def _drop_session_snapshots(
    tmp_path_factory: pytest.TempPathFactory, test_run_id: str
) -> Iterator[None]:
    """At the end of the session (each xdist worker's own), the snapshot images its runs made go.

    A research case's final state is a ~6.5 GB image that a run keeps for ``--resume``; the
    engine outlives the suite (CI reuses it across runs), so kept snapshots filled its disk until
    a later run's snapshot failed. Only this session's: runs whose folders lie under its base
    temporary directory (a run's label is a digest of its folder) and the sandbox fixture's run.
    """
    yield
    root = tmp_path_factory.getbasetemp()
    folders = [path.parent for path in root.rglob("run.json")]
    # A Ray node labels its boxes with its node-local folder's name (dispatch.ray.node_run_dir).
    runs = {RunDir(folder).run_id for folder in folders} | {test_run_id}
    runs |= {node_run_dir(folder.resolve()).name for folder in folders}
    _remove_snapshots(runs)


def _remove_snapshots(runs: set[str]) -> None:
    try:
        client = connect_docker()
    except HarnessError:  # no engine: nothing was made
        return
    # A snapshot still used by another's container stays (reported by prune, not raised).
    prune_images(None, None, client=client, kinds=(KIND_SNAPSHOT,), run_ids=runs)


@pytest.fixture(scope="session")
def image_builder(docker_client, sandbox_settings, test_run_id) -> ImageBuilder:
    return ImageBuilder(sandbox_settings, client=docker_client, run_id=test_run_id)


@pytest.fixture(scope="session")
def base_image(image_builder) -> str:
    """The bookworm base (built on first use: a few minutes; then a lookup)."""
    return image_builder.ensure_base(BASE_RECIPE, terminal_progress())


@pytest.fixture
def sandbox(docker_client, sandbox_settings, test_run_id) -> Iterator[Sandbox]:
    box = Sandbox(sandbox_settings, test_run_id, client=docker_client)
    yield box
    box.close()


@pytest.fixture
def llm_server() -> Iterator[ScriptedServer]:
    """An OpenAI-compatible server on 127.0.0.1 answering from a script."""
    scripted = ScriptedServer()
    scripted.start()
    yield scripted
    scripted.stop()
